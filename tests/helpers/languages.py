"""English left on a page in another language: words a family reads that are not theirs.

    english_left(page)     # ["this storyteller has no"]: runs of three Latin words or more

For a page in a language not written in Latin letters (Arabic), any run of three Latin
words a reader sees is English that missed the catalogue: in its text and in what its
attributes show or say (`aria-label`, `title`, `placeholder`, `alt`). A setting
(`LLM_API=chat`), a model's name or a path (`/responses`) is one word; `<code>`, `<bdi>` (a
name the family typed), and anything with a `lang` of its own (a story) are not the page's.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SHOWN = {"alt", "title", "placeholder", "aria-label", "aria-valuetext", "label"}
_NOT_THE_PAGES = {"code", "script", "style", "bdi", "pre", "template"}
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[ ,:;.!?()—–]+[A-Za-z][A-Za-z'’-]*){2,}")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
         "source", "track", "wbr"}


class _Words(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.seen: list[str] = []
        self._open: list[tuple[str, bool]] = []  # open elements: outside the page's words?
        self._page_lang: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "html":
            self._page_lang = named.get("lang")
        outside = (tag in _NOT_THE_PAGES or (tag != "html" and named.get("lang") not in
                                             (None, self._page_lang)))
        skipping = outside or self._skipping
        if not skipping:
            self.seen += [value for name, value in attrs if name in _SHOWN and value]
            if tag == "input" and named.get("type") in ("submit", "button"):
                self.seen.append(named.get("value") or "")
        if tag not in _VOID:
            self._open.append((tag, outside))

    def handle_endtag(self, tag: str) -> None:
        if any(name == tag for name, _ in self._open):  # closing what was left open too
            while self._open.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.seen.append(data)

    @property
    def _skipping(self) -> bool:
        return any(outside for _, outside in self._open)


def english_left(page: str, besides: tuple[str, ...] = ()) -> list[str]:
    """Runs of three Latin words or more that the page's reader sees (see the module),
    `besides` what is the family's own (a story's title in `<title>`)."""
    words = _Words()
    words.feed(page)
    seen = [" ".join(text.split()) for text in words.seen]
    for own in besides:
        seen = [text.replace(own, " ") for text in seen]
    return [run for text in seen for run in _LATIN_RUN.findall(text)]
