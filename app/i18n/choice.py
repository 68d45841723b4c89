"""Which language a page is in, chosen once per request.

    choose(setting="", household=None, accept="es-ES,es;q=0.9,en;q=0.5")   # "es"

UI_LANGUAGE, else this device's own choice (its `language` cookie), else the household's
(the Children page: the default for a device that has not chosen), else the browser's
Accept-Language (by its q-values), else English. A shared page is read by someone
outside the household: their browser's language comes first there (`reader_first`).
"""

from __future__ import annotations

from app.i18n import ENGLISH, UI_LANGUAGES

_MAX_RANGES = 20  # a header of thousands of ranges is not worth reading to its end


def from_accept_language(header: str | None) -> str | None:
    """The best of our languages for an Accept-Language header ("fr-CH, fr;q=0.9, *;q=0.5"),
    by q-value, then by order; None when it names none of them."""
    if not header:
        return None
    best: tuple[float, int, str] | None = None
    for order, part in enumerate(header.split(",")[:_MAX_RANGES]):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if not 0 < weight <= 1:
            continue
        primary = tag.strip().lower().split("-", 1)[0]
        if primary not in UI_LANGUAGES:
            continue
        if best is None or (-weight, order) < (-best[0], best[1]):
            best = (weight, order, primary)
    return best[2] if best else None


def choose(*, setting: str | None, household: str | None, accept: str | None,
           device: str | None = None, reader_first: bool = False) -> str:
    """The request's language (see the module's docstring)."""
    return choose_from(setting=setting, household=household, accept=accept, device=device,
                       reader_first=reader_first)[0]


def choose_from(*, setting: str | None, household: str | None, accept: str | None,
                device: str | None = None, reader_first: bool = False) -> tuple[str, bool]:
    """The request's language, and whether the browser's Accept-Language chose it."""
    browser = from_accept_language(accept)
    if reader_first and browser:
        return browser, True
    for language in (setting, device, household):
        if language is not None and language in UI_LANGUAGES:
            return language, False
    return (browser, True) if browser else (ENGLISH, False)
