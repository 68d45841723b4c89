"""The household's language: which one a request is served in, and the words in it.

    with speaking("es"):             # what the language middleware does per request
        _("Write the story")         # "Escribe el cuento"
        ngettext("%(num)d story left today", "%(num)d stories left today", 2) % {"num": 2}
    N_("Stopped")                    # marks a string to translate later (a module's table)

The catalogues (app/locale/<lang>/LC_MESSAGES/messages.po) are read once per process
(app/i18n/catalogues.py); choosing a language is a ContextVar, so a request, and what
it renders, reads the words of its own language without passing it along.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar, Token

from app.i18n.catalogues import script_words, translations
from app.languages import LANGUAGES
from app.languages import direction as language_direction

UI_LANGUAGES: tuple[str, ...] = tuple(LANGUAGES)  # every story language is a page language
ENGLISH = "en"

_speaking: ContextVar[str] = ContextVar("speaking", default=ENGLISH)


def current() -> str:
    """The language this request (or task) is served in."""
    return _speaking.get()


def direction(language: str | None = None) -> str:
    """`rtl` or `ltr`, for `<html dir>` (and a story's own text): the page's by default."""
    return language_direction(language or current())


@contextlib.contextmanager
def speaking(language: str) -> Iterator[None]:
    token = _speaking.set(language if language in LANGUAGES else ENGLISH)
    try:
        yield
    finally:
        _speaking.reset(token)


def set_language(language: str) -> Token[str]:
    """The language from here on in this context (a request's task), until reset."""
    return _speaking.set(language if language in LANGUAGES else ENGLISH)


def reset_language(token: Token[str]) -> None:
    _speaking.reset(token)


def gettext(message: str) -> str:
    return translations(current()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(current()).ngettext(singular, plural, n)


def page_words() -> str:
    """The scripts' strings in this request's language, as JSON ("" in English)."""
    return script_words(current())


def N_(message: str) -> str:
    """A string to translate where it is shown, not where it is written (a table's)."""
    return message


_ = gettext
