"""A story stopped and finished where it is read, in a real browser at issue 21's three sizes
(a tablet upright and on its side, a phone): while a story is written, Stop is in the card's
header, on the first screen however long the story grows, and it asks before it stops;
"Finish this story" keeps the kept words on the screen, in the card the reader is on, and
grows them there: the page does not scroll and the paragraph being read does not move, from
the tap until the finished story is there; and no id is on the page twice.

Debian's chromium through Playwright (tests/helpers/browser.py); screenshots go to
test-artifacts/.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest
from playwright.sync_api import Route, expect

from tests.helpers.browser import (
    ARTIFACTS,
    CARD_POLL_S,
    SIZES,
    box_of,
    needs_chromium,
    request_story,
    served_over_http,
    settled_scroll,
    top_of_paragraph,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.ids import duplicate_ids_on

pytestmark = needs_chromium

STILL_PX = 2  # "0 px", to within a rounding of the layout
WAIT_MS = 20_000
TITLE = "The Lantern Fox"
WORDS = ("hush", "moss", "owl", "fern", "star", "brook", "pine", "dusk")
PARAGRAPHS = [" ".join(f"{word}{n}" for n in range(48)) + " the end." for word in WORDS]
STORY = TITLE + "\n\n" + "\n\n".join(PARAGRAPHS)
# The story is stopped halfway through its last paragraph: those words are kept (and shown
# until the finish's own come), but a finish carries on from the last whole sentence, so
# the half paragraph is written again by the finish, below the paragraph being read.
HALF = STORY[: STORY.rindex("\n\n") + 2 + len(PARAGRAPHS[-1]) // 2]
REST = "\n\n" + PARAGRAPHS[-1] + "\n\nGoodnight, little fox."


def chunks(text: str) -> int:
    """How many chunks the fake streams `text` in (two words each)."""
    return len(re.findall(r"\S*\s*", text)) // 2


@pytest.fixture
def sized_page(request, browser):
    """A page at one of SIZES, in a fresh context of the Chromium the browser tests share
    (as test_browser_reading_view's is)."""
    problems: list[str] = []
    context = browser.new_context(viewport=SIZES[request.param])
    page = context.new_page()
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    try:
        yield page, request.param, problems
    finally:
        context.close()


def writing(page, url: str) -> str:
    """Ask for a story on the home page (no scroll anchoring, as in Safari on an iPad: the
    layout itself must hold still); the id of its card."""
    page.goto(url + "/")
    page.evaluate("window.__sameDocument = true")  # gone if anything reloads the page
    page.evaluate("document.documentElement.style.overflowAnchor = 'none';"
                  " document.body.style.overflowAnchor = 'none'")
    page.fill("#prompt", "a fox with a lantern")
    return "job-" + request_story(page)


# Stop's box and the card's, read in one turn of the page's script (a card being written
# is replaced at every poll).
STOP_BOX = """id => {
  const card = document.getElementById(id);
  const stop = card && card.querySelector(".job-stop > summary");
  if (!stop) return null;
  const box = stop.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, left: box.left, right: box.right,
          card: card.getBoundingClientRect().bottom, text: stop.innerText.trim()};
}"""


def stop_via_the_card(page, job_id: str, size: str) -> None:
    """Stop… asks first (the story goes on meanwhile), then Yes stops it, keeping its words."""
    card = page.locator(f"#{job_id}")
    card.locator(".job-stop > summary").click()
    question = card.locator(".job-stop form")
    expect(question).to_be_visible()
    # Asked on screen: wholly in view once a smooth scroll (if any) has brought it there;
    # a one-shot read may land mid-scroll on a busy machine.
    expect(question).to_be_in_viewport(ratio=1)
    assert "status-running" in card.get_attribute("class")  # only asked, not stopped
    page.screenshot(path=str(ARTIFACTS / f"finish-in-place-stop-asks-{size}.png"))
    question.get_by_role("button", name="Yes, stop it").click()
    card.get_by_role("button", name="Finish this story").wait_for(timeout=WAIT_MS)


@pytest.mark.parametrize("sized_page", list(SIZES), indirect=True)
def test_stop_is_on_the_first_screen_while_the_story_grows(settings, fake_llm: FakeLLM,
                                                          sized_page):
    page, size, problems = sized_page
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.03  # written over several seconds, a couple of words at a time
    fake_llm.hold_after_chunks = chunks(HALF)
    fake_llm.hold()
    with served_over_http(replace(settings, llm_timeout_s=60, card_poll_s=CARD_POLL_S)) as url:
        job_id = writing(page, url)
        settled_scroll(page)  # the new card came to the top of the screen
        height = page.viewport_size["height"]
        boxes = []
        begun = time.monotonic()
        deadline = begun + 30
        # While the story grows: 3.5 s at least, and until its card is taller than the
        # screen (the foot of the card, where Stop used to be, is off it).
        while time.monotonic() < deadline:
            box = page.evaluate(STOP_BOX, job_id)
            if box is not None:
                boxes.append(box)
                if box["card"] > height and time.monotonic() - begun > 3.5:
                    break
            time.sleep(0.2)
        assert boxes and boxes[-1]["card"] > height, boxes[-1:]
        page.screenshot(path=str(ARTIFACTS / f"finish-in-place-stop-in-reach-{size}.png"))
        print(f"{size}: Stop at y={boxes[0]['top']:.1f}..{boxes[-1]['top']:.1f} "
              f"(bottom {max(b['bottom'] for b in boxes):.1f}) on a {height}-px screen, "
              f"the card's foot at {boxes[-1]['card']:.1f}; {len(boxes)} samples")
        for box in boxes:
            assert box["text"] == "Stop…"
            assert 0 <= box["top"] and box["bottom"] <= height, box
            assert 0 <= box["left"] and box["right"] <= page.viewport_size["width"], box
            assert box["bottom"] - box["top"] >= 44  # a tap target
        stop_via_the_card(page, job_id, size)
        fake_llm.release()
        card = page.locator(f"#{job_id}")
        assert "You stopped this story." in card.inner_text()
        assert card.locator(".story-text").get_by_text(PARAGRAPHS[2]).count() == 1  # kept
    assert problems == []


# The card's polls answered and swapped in so far, counted on <body> for expect() to watch,
# and the swaps counted when the finger lifted: the next poll may come at any moment after.
COUNT_POLLS = """() => {
  const body = document.body;
  body.dataset.answered = body.dataset.swapped = 0;
  document.addEventListener("htmx:afterRequest", () => body.dataset.answered++);
  document.addEventListener("htmx:afterSwap", () => body.dataset.swapped++);
  document.addEventListener("pointerup", () => body.dataset.swappedAtUp = body.dataset.swapped,
                            true);
}"""


# app.js times a press with Date.now() (a press longer than a tap lets the poll's answer
# in): the page's clock stands still while the button is down, so the press is as quick as
# a finger's however long a busy machine takes to answer the poll within it.
STILL_CLOCK = "() => { const now = Date.now(); window.__realNow = Date.now; Date.now = () => now; }"
RUNNING_CLOCK = "() => { Date.now = window.__realNow; }"


@pytest.mark.parametrize("sized_page", list(SIZES), indirect=True)
def test_a_tap_on_stop_that_spans_a_poll_still_asks(settings, fake_llm: FakeLLM, sized_page):
    """A finger's tap takes a moment, and the card's poll may be answered within it. The
    browser drops a click whose pressed element moved meanwhile, and a swap moves Stop…
    into the new card: the tap did nothing. The card waits for the press to end instead,
    and then takes the next poll's news."""
    page, size, problems = sized_page
    fake_llm.story = STORY
    fake_llm.hold_after_chunks = chunks(HALF) // 2
    fake_llm.hold()
    with served_over_http(replace(settings, llm_timeout_s=60, card_poll_s=CARD_POLL_S)) as url:
        job_id = writing(page, url)
        card, body = page.locator(f"#{job_id}"), page.locator("body")
        card.locator(".story-text").get_by_text(PARAGRAPHS[0]).wait_for(timeout=WAIT_MS)
        page.evaluate(COUNT_POLLS)
        stop = card.locator(".job-stop > summary")
        box = box_of(stop)
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        # The card's next poll is held until the finger is down, then answered mid-tap:
        # its answer always lands inside the press, however busy the machine.
        with held_poll(page, job_id) as release:
            page.evaluate(STILL_CLOCK)  # a finger's quick tap, however slow this machine
            page.mouse.down()
            release()
            page.wait_for_function("() => document.body.dataset.answered === '1'",  # mid-tap
                                   polling="raf", timeout=WAIT_MS)
        page.mouse.up()
        page.evaluate(RUNNING_CLOCK)
        expect(card.locator(".job-stop form")).to_be_visible()  # asked
        assert body.get_attribute("data-swapped-at-up") == "0"
        expect(body).not_to_have_attribute("data-swapped", "0", timeout=WAIT_MS)  # polls on
        expect(card.locator(".job-stop form")).to_be_visible()  # still asking after it
        fake_llm.release()
    assert problems == []


@contextmanager
def held_poll(page, job_id: str) -> Iterator[Callable[[], None]]:
    """Hold the card's next poll (its GET) at the network until `release()` is called;
    every other request, and every poll after it, goes as usual."""
    held: list[Route] = []
    path = f"/stories/jobs/{job_id.removeprefix('job-')}"

    def hold(route: Route) -> None:
        request = route.request
        if request.method == "GET" and request.url.endswith(path) and not held:
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(re.escape(path) + "$"), hold)
    deadline = time.monotonic() + WAIT_MS / 1000
    while not held:  # the poll comes every CARD_POLL_S: Playwright's events are read here
        assert time.monotonic() < deadline, "no poll came to hold"
        page.wait_for_timeout(20)

    def release() -> None:
        held[0].continue_()

    try:
        yield release
    finally:
        page.unroute(re.compile(re.escape(path) + "$"), hold)


# Every 30 ms from the tap on: the page's scroll and the read paragraph's screen top (null
# when it is not on the page at all).
WATCH_THE_PARAGRAPH = """text => {
  window.__watched = [];
  window.__watch = setInterval(() => {
    const p = [...document.querySelectorAll("#jobs .story-text p")]
      .find(p => p.textContent.includes(text));
    window.__watched.push([window.scrollY, p ? p.getBoundingClientRect().top : null]);
  }, 30);
}"""


# "Finish this story" as a card rendered before the finish would post it (its own key).
STALE_FINISH = """card => htmx.ajax("POST", `/stories/jobs/${card.slice(4)}/finish`, {
  target: `#${card}`, swap: "outerHTML", values: {idempotency_key: `finish-${card.slice(4)}`},
})"""


@pytest.mark.parametrize("sized_page", list(SIZES), indirect=True)
def test_finishing_keeps_the_kept_words_where_they_are_read(settings, fake_llm: FakeLLM,
                                                            sized_page):
    page, size, problems = sized_page
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.005
    fake_llm.hold_after_chunks = chunks(HALF)
    fake_llm.hold()
    with served_over_http(replace(settings, llm_timeout_s=60, card_poll_s=CARD_POLL_S)) as url:
        cut = writing(page, url)
        page.locator(f"#{cut} .story-text").get_by_text(PARAGRAPHS[-2]).wait_for(
            timeout=WAIT_MS)
        stop_via_the_card(page, cut, size)
        fake_llm.release()

        selector = "#jobs .job-card .story-text"
        # A parent reads the kept words down to Finish, at the foot of the screen, the last
        # whole paragraph above it.
        button = page.locator(f"#{cut}").get_by_role("button", name="Finish this story")
        foot = button.evaluate("b => b.getBoundingClientRect().bottom")
        page.evaluate(f"window.scrollTo(0, window.scrollY + {foot} - window.innerHeight + 24)")
        before = settled_scroll(page)
        assert before > 0
        # The paragraph being read: the last whole one on the screen (in a narrow column,
        # one begun above it).
        height = page.viewport_size["height"]
        read = next(p for p in reversed(PARAGRAPHS[:-1])
                    if top_of_paragraph(page, selector, p) < height)
        line_before = top_of_paragraph(page, selector, read)
        page.screenshot(path=str(ARTIFACTS / f"finish-in-place-before-{size}.png"))

        fake_llm.reset()
        fake_llm.story = REST
        fake_llm.chunk_delay_s = 0.02
        fake_llm.hold()  # waiting for its first words a while: polls come meanwhile
        page.evaluate(WATCH_THE_PARAGRAPH, read)
        button.click()
        finishing = page.locator(f"#jobs .job-card:not(#{cut})").first
        finishing.wait_for(state="attached", timeout=WAIT_MS)
        page.wait_for_timeout(int(2.5 * CARD_POLL_S * 1000))
        page.screenshot(path=str(ARTIFACTS / f"finish-in-place-finishing-{size}.png"))
        fake_llm.release()
        finishing.get_by_role("link", name="Read the story").wait_for(timeout=WAIT_MS)
        after = settled_scroll(page)
        line_after = top_of_paragraph(page, selector, read)
        watched = page.evaluate("clearInterval(window.__watch) || window.__watched")
        page.screenshot(path=str(ARTIFACTS / f"finish-in-place-finished-{size}.png"))
        tops = [t for _, t in watched if t is not None]
        print(f"{size}: paragraph {PARAGRAPHS.index(read) + 1} read; scrollY {before} -> "
              f"{after} (delta {after - before:+.1f}); its top {line_before:.1f} -> "
              f"{line_after:.1f} (delta {line_after - line_before:+.1f}); over "
              f"{len(watched)} samples it moved at most "
              f"{max(abs(t - line_before) for t in tops):.1f} px and was missing "
              f"{len(watched) - len(tops)} times")
        assert abs(after - before) < STILL_PX
        assert abs(line_after - line_before) < STILL_PX
        # Never gone, never moved, from the tap until the finished story was there.
        assert all(t is not None for _, t in watched), "the kept words left the screen"
        assert max(abs(y - before) for y, _ in watched) < STILL_PX
        assert max(abs(t - line_before) for _, t in watched) < STILL_PX

        # The finishing job's card took the stopped one's place: one card, the whole story.
        new_id = finishing.get_attribute("id")
        assert new_id != cut and finishing.get_attribute("data-continues") == cut
        assert page.locator(f"#{cut}").count() == 0
        story = finishing.locator(".story-text")
        assert story.locator(".job-title").inner_text() == TITLE
        assert story.locator("p:not(.job-title)").all_inner_texts() == [
            *PARAGRAPHS, "Goodnight, little fox."]
        assert duplicate_ids_on(page) == []
        assert page.evaluate("window.__sameDocument") is True

        # Seen again (a reload): the stopped card leads to the finished story, and offers
        # neither a second finish nor a fresh start; still no id twice.
        page.reload()
        stopped = page.locator(f"#{cut}")
        expect(stopped.get_by_role("link", name="Read the finished story")).to_be_visible()
        assert stopped.get_by_role("button", name="Finish this story").count() == 0
        assert stopped.get_by_role("button", name="Start it again").count() == 0
        assert duplicate_ids_on(page) == []
        # A finish tapped on a card left on a screen from before (another tablet's, say)
        # answers with the finishing job's card, which is on this page already: it takes
        # the tapped card's place, and the other goes.
        page.keyboard.press("Shift")  # a key, as a tap: htmx comes (app.js)
        page.wait_for_function("() => typeof htmx === 'object'")
        page.evaluate(STALE_FINISH, cut)
        expect(page.locator(f"#{cut}")).to_have_count(0)
        expect(page.locator(f"#{new_id}")).to_have_count(1)
        assert duplicate_ids_on(page) == []
    assert problems == []
