"""Loose ends of issue 21 in a real browser: a card whose polls fail says so at its top with
its bar stopped. (Every control on every page as a tap target of 44 px or more, at the
three sizes: test_browser_evening.py.)

Debian's chromium through Playwright (tests/helpers/browser.py); screenshots go to
test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import app_of_its_own, needs_chromium, story_bar

pytestmark = needs_chromium

NOTE_WAIT_MS = 20_000  # app.js: the note from the first failed poll


@pytest.fixture(scope="module")
def slow_app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Stories that take a minute to write: long enough to lose the connection meanwhile."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("slow-taps"), allow_open=True,
                        demo_delay_s=60) as url:
        yield url


def write(page, prompt: str):
    page.fill("#prompt", prompt)
    page.get_by_role("button", name="Write the story").click()
    card = page.locator("#jobs .job-card", has_text=prompt).first
    card.wait_for(state="attached")
    return card


def test_a_card_that_lost_its_connection_says_so_at_its_top_with_its_bar_stopped(
    open_page, slow_app
):
    page = open_page(slow_app, "phone").page
    page.goto(slow_app + "/")
    card = write(page, "a fox who counts the stars")
    bar = story_bar(card)
    bar.wait_for()
    page.route("**/stories/jobs/*", lambda route: route.abort())  # the app went away
    try:
        note = card.locator("[data-reconnecting][role=status]")
        expect(note).to_contain_text("Reconnecting…", timeout=NOTE_WAIT_MS)
        expect(note).to_be_visible()
        assert card.evaluate("card => card.firstElementChild.matches('[data-reconnecting]')")
        note_box, prompt_box = note.bounding_box(), card.locator(".job-prompt").bounding_box()
        assert note_box["y"] < prompt_box["y"]  # above the prompt, the draft and the bar
        assert note_box["height"] >= 40  # a notice, not a hint in small print
        value = bar.evaluate("bar => bar.value")
        page.wait_for_timeout(1500)
        assert bar.evaluate("bar => bar.value") == value  # stopped, not creeping on
        assert float(bar.evaluate("bar => getComputedStyle(bar).opacity")) < 0.6
        page.screenshot(path="test-artifacts/phone-card-connection-lost.png", full_page=True)
    finally:
        page.unroute("**/stories/jobs/*")
    expect(note).to_have_count(0, timeout=NOTE_WAIT_MS)  # the next good answer: as it was
    # Retried: the poll that answers may be swapping the card (and its bar) for a new one.
    expect(bar).to_have_css("opacity", "1", timeout=NOTE_WAIT_MS)
