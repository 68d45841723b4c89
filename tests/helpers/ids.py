"""No page has two elements with one id (CONTRACT.md, the evening): checked on the HTML a
page was served with, and on a page in the browser after its swaps.

    assert duplicate_ids(response.text) == []
    assert duplicate_ids_on(page) == []      # a Playwright page, as it stands now
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids += [value for name, value in attrs if name == "id" and value is not None]


def duplicate_ids(html: str) -> list[str]:
    """The ids that more than one element of `html` carries, in order, each once."""
    parser = _Ids()
    parser.feed(html)
    parser.close()
    return [found for found, count in Counter(parser.ids).items() if count > 1]


# Every element of the live document, however it got there (a swap, an out-of-band one).
_DUPLICATES_JS = """() => {
  const seen = new Map();
  document.querySelectorAll("[id]").forEach(e => seen.set(e.id, (seen.get(e.id) || 0) + 1));
  return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
}"""


def duplicate_ids_on(page) -> list[str]:
    """The ids that more than one element of the page in the browser carries now."""
    found: list[str] = page.evaluate(_DUPLICATES_JS)
    return found
