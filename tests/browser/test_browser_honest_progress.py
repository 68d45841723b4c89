"""Honest in trouble, in a real browser (issue 29, item 7): the progress bar moves only while
words come, standing still from the first poll that fails and once the story stops growing,
and moving on when words come again; "Reconnecting…" is on the card right after the first
failed poll; and being offline is told apart from a server that does not answer, on the
card, for a tap (the favourite star) and on the page shown when one cannot be loaded.

Debian's chromium through Playwright (tests/helpers/browser.py); screenshots of the
Reconnecting card at the three sizes go to test-artifacts/.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import pytest
from playwright.sync_api import expect

from app.config import Settings
from tests.helpers.browser import (
    ARTIFACTS,
    CARD_POLL_S,
    REPORT_CSP,
    SIZES,
    needs_chromium,
    overflows,
    served_over_http,
    story_bar,
)
from tests.helpers.fake_llm import FakeLLM

pytestmark = needs_chromium

WAIT_MS = 20_000
STALL_S = 7  # app.js: the bar stands still once the story has not grown for this long
STILL_FOR_S = 2.5  # how long a still bar is watched, sampled every 100 ms
TITLE = "The Quiet Harbour"
STORY = TITLE + "\n\n" + " ".join(f"wave{n}" for n in range(400)) + " the end."
SERVER_NOT_ANSWERING = "The server isn’t answering just now"
OFFLINE_ON_THE_CARD = "You’re offline: this story can’t be followed"

# The story bar of the card with this id and its words, read in one turn of the page's
# script (a card being written is replaced at every poll).
READ_THE_CARD = """id => {
  const card = document.getElementById(id);
  const bar = card && card.querySelector('progress[aria-label="Story progress"]');
  const draft = card && card.querySelector(".job-draft");
  return {value: bar ? bar.value : null, words: draft ? draft.textContent.trim() : "",
          running: !!card && card.classList.contains("status-running"),
          note: card && card.querySelector("[data-reconnecting]")
            ? card.querySelector("[data-reconnecting]").textContent : null};
}"""


@pytest.fixture
def page_at(browser):
    """A page in a fresh context of the module's Chromium at one of SIZES, and the list
    where its script errors and CSP violations land (failed loads are the point here)."""
    contexts = []
    problems: list[str] = []

    def open_one(size: str = "tablet"):
        contexts.append(browser.new_context(viewport=SIZES[size]))
        page = contexts[-1].new_page()
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda m: m.text.startswith("CSP violation")
                and problems.append(m.text))
        page.add_init_script(REPORT_CSP)
        return page

    yield open_one, problems
    for context in contexts:
        context.close()


def held_after(fake_llm: FakeLLM, words: int) -> None:
    """The fake writes STORY a few words at a time and stops after about `words` words,
    until release()."""
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.05
    fake_llm.hold_after_chunks = words // 2  # two words a chunk
    fake_llm.hold()


def serving(settings: Settings):
    return served_over_http(replace(settings, llm_timeout_s=60, card_poll_s=CARD_POLL_S))


def write(page, url: str, idea: str) -> str:
    """Ask for a story on the home page; the id of its card."""
    page.goto(url + "/")
    page.fill("#prompt", idea)
    page.get_by_role("button", name="Write the story").click()
    card = page.locator("#jobs .job-card", has_text=idea)
    card.wait_for(state="attached")
    return card.get_attribute("id")


def read(page, card_id: str) -> dict:
    return page.evaluate(READ_THE_CARD, card_id)


def until(page, condition: Callable[[], bool], what: str, timeout_s: float = WAIT_MS / 1000):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s} s for {what}"
        page.wait_for_timeout(100)


def values_over(page, card_id: str, seconds: float) -> list[float | None]:
    values = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        values.append(read(page, card_id)["value"])
        page.wait_for_timeout(100)
    return values


def test_the_bar_stands_still_while_no_words_come_and_moves_on_when_they_do(
    settings: Settings, fake_llm: FakeLLM, page_at
):
    open_one, problems = page_at
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.05
    fake_llm.hold()  # thinking: not a word yet
    with serving(settings) as url:
        page = open_one()
        card_id = write(page, url, "a harbour seal who counts boats")
        fake_llm.wait_for_call(int(card_id.removeprefix("job-")))
        until(page, lambda: read(page, card_id)["value"] is not None, "the bar")
        # While the storyteller thinks, the clock alone does not carry the bar on.
        thinking = read(page, card_id)["value"]
        values = values_over(page, card_id, STILL_FOR_S)
        assert set(values) == {thinking}, values
        assert read(page, card_id)["running"] and read(page, card_id)["note"] is None

        # Words come, about 120, then none for a while.
        fake_llm.hold_after_chunks = 60  # two words a chunk
        until(page, lambda: len(read(page, card_id)["words"].split()) >= 110, "the words")
        until(page, lambda: read(page, card_id)["value"] > thinking, "the bar moving with them")
        page.wait_for_timeout((STALL_S + 1) * 1000)  # the story has not grown since
        seen = read(page, card_id)
        assert seen["running"] and seen["note"] is None  # every poll answered
        values = values_over(page, card_id, STILL_FOR_S)
        assert read(page, card_id)["words"] == seen["words"]  # none came meanwhile
        assert set(values) == {seen["value"]}, values  # so the bar did not move
        assert 0 < seen["value"] < 100

        fake_llm.release()
        until(page, lambda: read(page, card_id)["words"] != seen["words"], "new words")
        # Moving on with them (a finished card's bar is full: more, too).
        until(page, lambda: (read(page, card_id)["value"] or 0) > seen["value"],
              "the bar moving on with the words")
        story_bar(page.locator(f"#{card_id}")).wait_for()
    assert problems == []


@pytest.mark.parametrize("size", list(SIZES))
def test_reconnecting_is_on_the_card_at_the_first_failed_poll_saying_why(
    settings: Settings, fake_llm: FakeLLM, page_at, size: str
):
    open_one, problems = page_at
    held_after(fake_llm, 600)  # words keep coming throughout
    fake_llm.chunk_delay_s = 0.2
    with serving(settings) as url:
        page = open_one(size)
        card_id = write(page, url, "a lighthouse that hums")
        until(page, lambda: len(read(page, card_id)["words"].split()) >= 6, "the first words")

        # The server stops answering: the note is there after the first poll that failed,
        # before the next one is sent, and the bar stands where it was.
        failed: list[float] = []
        noted: list[bool] = []  # whether the note was on the card as each poll went out

        def refuse(route):
            noted.append(bool(read(page, card_id)["note"]))
            failed.append(time.monotonic())
            route.abort("connectionrefused")

        page.route(f"**/stories/jobs/{card_id.removeprefix('job-')}", refuse)
        until(page, lambda: bool(read(page, card_id)["note"]), "the note")
        shown_at = time.monotonic()
        # Read as each poll goes out, not by this loop, which a busy machine may slow.
        assert not noted[0] and all(noted[1:]), "the note came only after a second failed poll"
        print(f"{size}: Reconnecting {shown_at - failed[0]:.2f} s after the first failed poll")
        note = read(page, card_id)["note"]
        assert SERVER_NOT_ANSWERING in note and "Reconnecting…" in note
        stood = read(page, card_id)["value"]
        values = values_over(page, card_id, STILL_FOR_S)
        assert set(values) == {stood}, values
        expect(page.locator(f"#{card_id} [data-reconnecting][role=status]")).to_be_visible()
        page.screenshot(path=str(ARTIFACTS / f"honest-reconnecting-{size}.png"), full_page=True)
        assert not overflows(page)

        # This device loses its network: the next failed poll says so instead.
        page.context.set_offline(True)
        until(page, lambda: OFFLINE_ON_THE_CARD in (read(page, card_id)["note"] or ""),
              "the offline note")
        assert read(page, card_id)["value"] == stood

        # Back: the server's card again, no note, and the bar moves on with the words.
        page.unroute(f"**/stories/jobs/{card_id.removeprefix('job-')}")
        page.context.set_offline(False)
        until(page, lambda: read(page, card_id)["note"] is None, "the note gone")
        until(page, lambda: (read(page, card_id)["value"] or 0) > stood, "the bar moving on")
        fake_llm.release()
    assert problems == []


def test_a_tap_that_did_not_get_through_says_why_and_moves_nothing(
    settings: Settings, fake_llm: FakeLLM, page_at
):
    open_one, problems = page_at
    fake_llm.story = STORY
    with serving(settings) as url:
        page = open_one("phone")
        card_id = write(page, url, "a kite that sleeps in a tree")
        page.locator(f"#{card_id}").get_by_role("link", name="Read the story").click(
            timeout=WAIT_MS)
        page.wait_for_url(f"{url}/stories/*")
        star = page.get_by_role("button", name="Favourite")
        title = page.get_by_role("heading", level=1)
        story_top = page.locator(".story-text").first
        before = story_top.evaluate("e => e.getBoundingClientRect().top")

        page.route("**/favourite", lambda route: route.abort("connectionrefused"))
        star.click()
        alert = page.get_by_role("alert").filter(has_text="didn’t get through")
        expect(alert).to_contain_text("The server isn’t answering just now")
        expect(alert).to_be_visible()
        after = story_top.evaluate("e => e.getBoundingClientRect().top")
        print(f"the story moved {after - before:+.1f} px when the star's note came")
        assert abs(after - before) < 1  # the note floats over, the story stays put
        expect(title).to_be_visible()
        assert star.get_attribute("aria-pressed") == "false"

        page.context.set_offline(True)
        star.click()
        expect(alert).to_contain_text("You’re offline, so that didn’t get through")
        assert abs(story_top.evaluate("e => e.getBoundingClientRect().top") - before) < 1

        page.context.set_offline(False)
        page.unroute("**/favourite")
        star.click()
        expect(page.locator("button.favourite[aria-pressed='true']")).to_be_visible()
        expect(page.get_by_text("didn’t get through")).to_have_count(0)
    assert problems == []


def test_the_page_that_could_not_come_tells_offline_from_a_server_not_answering(
    settings: Settings, page_at
):
    open_one, problems = page_at
    with serving(settings) as url:
        page = open_one("phone")
        page.goto(url + "/static/offline.html")
        heading = page.locator("[data-offline-heading]")
        why = page.locator("[data-offline-why]")
        expect(heading).to_have_text("The server isn’t answering")
        expect(why).to_contain_text("This device is online")
        page.context.set_offline(True)  # followed as the device changes
        expect(heading).to_have_text("You’re offline")
        expect(why).to_contain_text("There’s no connection just now")
        page.context.set_offline(False)
        expect(heading).to_have_text("The server isn’t answering")
    assert problems == []
