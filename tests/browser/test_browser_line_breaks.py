"""Where a phone breaks home's lines, in English and in Arabic: when "Spending" goes to a
line of its own, under "Add your children…", it starts that line; no separator is left
standing before it ("· Spending"). Screenshots in test-artifacts/."""

from __future__ import annotations

from dataclasses import replace

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import needs_chromium, served_over_http

pytestmark = needs_chromium

# Whether the last link is on a line of its own, and how far its start is from the line's
# (the paragraph's inline start: its left edge, right to left its right edge).
LAST_LINE = """(p) => {
  const first = p.querySelector("a").getBoundingClientRect();
  const last = p.querySelector("a:last-of-type").getBoundingClientRect();
  const box = p.getBoundingClientRect();
  const rtl = getComputedStyle(p).direction === "rtl";
  return [last.top >= first.bottom - 1, rtl ? box.right - last.right : last.left - box.left];
}"""


@pytest.mark.parametrize("language", ["en", "ar"])
def test_spending_starts_its_own_line_on_a_phone(open_page, settings, language):
    with served_over_http(replace(settings, worker_concurrency=0)) as url:
        watched = open_page(url, "phone", extra_http_headers={"Accept-Language": language})
        page = watched.page
        page.goto(url + "/")
        links = page.locator(".children-link")
        expect(links.locator("a")).to_have_count(2)
        own_line, indent = links.evaluate(LAST_LINE)
        assert own_line, "both links fit on one line: nothing to see here"
        assert indent < 1, f"something stands {indent} px before “Spending” on its line"
        watched.shot(f"line-breaks-home-{language}-phone")
        assert watched.problems == []
