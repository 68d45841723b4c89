"""Loose ends in a real browser: a card whose polls fail says so in a note floating over
the page, its bar stopped, and its words do not move when the note comes or goes (at the
three sizes). (Every control on every page as a tap target of 44 px or more, at the
three sizes: test_browser_evening.py.)

Debian's chromium through Playwright (tests/helpers/browser.py); screenshots go to
test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import (
    SIZES,
    app_of_its_own,
    needs_chromium,
    read_attached,
    story_bar,
)

pytestmark = needs_chromium

NOTE_WAIT_MS = 20_000  # app.js: the note from the first failed poll


@pytest.fixture(scope="module")
def slow_app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Stories that take a minute to write: long enough to lose the connection meanwhile."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("slow-taps"), allow_open=True,
                        demo_delay_s=60, worker_concurrency=4) as url:
        yield url


def write(page, prompt: str):
    page.fill("#prompt", prompt)
    page.get_by_role("button", name="Write the story").click()
    card = page.locator("#jobs .job-card", has_text=prompt).first
    card.wait_for(state="attached")
    return card


def first_line_top(card) -> float:
    """Where the card's words begin, below its top (earlier cards on the page, still being
    written by this module's other runs, may grow and move the whole card meanwhile)."""
    return read_attached(card.locator(".job-draft p").first, "p => p.getBoundingClientRect()"
                         ".top - p.closest('.job-card').getBoundingClientRect().top")


@pytest.mark.parametrize("size", list(SIZES))
def test_a_card_that_lost_its_connection_says_so_over_the_page_and_no_word_moves(
    open_page, slow_app, size
):
    page = open_page(slow_app, size).page
    page.goto(slow_app + "/")
    card = write(page, f"a fox who counts the stars ({size})")
    bar = story_bar(card)
    bar.wait_for()
    expect(card.locator(".job-draft p").first).to_be_visible(timeout=NOTE_WAIT_MS)
    before = first_line_top(card)
    page.route("**/stories/jobs/*", lambda route: route.abort())  # the app went away
    try:
        note = card.locator("[data-reconnecting][role=status]")
        expect(note).to_contain_text("Reconnecting…", timeout=NOTE_WAIT_MS)
        expect(note).to_be_visible()
        assert read_attached(note, "note => getComputedStyle(note).position") == "fixed"
        assert abs(first_line_top(card) - before) <= 1  # the words stay where they are read
        box, height = note.bounding_box(), page.viewport_size["height"]
        assert box["y"] >= 0 and box["y"] + box["height"] <= height  # on screen, wherever
        assert box["height"] >= 40  # a notice, not a hint in small print
        value = read_attached(bar, "bar => bar.value")
        page.wait_for_timeout(1500)
        assert read_attached(bar, "bar => bar.value") == value  # stopped, not creeping on
        assert float(read_attached(bar, "bar => getComputedStyle(bar).opacity")) < 0.6
        page.screenshot(path=f"test-artifacts/{size}-card-connection-lost.png")
    finally:
        page.unroute("**/stories/jobs/*")
    expect(note).to_have_count(0, timeout=NOTE_WAIT_MS)  # the next good answer: as it was
    assert abs(first_line_top(card) - before) <= 1
    # Retried: the poll that answers may be swapping the card (and its bar) for a new one.
    expect(bar).to_have_css("opacity", "1", timeout=NOTE_WAIT_MS)
