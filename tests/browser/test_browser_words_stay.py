"""The words never move (issue 54, items 1 and 2), at the three sizes in Debian's Chromium.

A Wi-Fi drop: on every page that can show a story's words (home with a story's card, a
job's page, a story's page, a shared story), the network is cut and brought back, and the
first paragraph stays where it was read: every note about it floats over the page.

Two stories at once: a story for Mia, then four seconds later one for Leo, both written
together. The card in view stays where it is while the other one grows, whichever it is,
and a picture comes into a placeholder of its own size.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from playwright.sync_api import expect

from tests.helpers.browser import (
    ARTIFACTS,
    CARD_POLL_S,
    SIZES,
    STORY_WAIT_MS,
    app_of_its_own,
    box_of,
    needs_chromium,
    picture_loaded,
    read_attached,
    request_story,
    served_over_http,
    settled_scroll,
)
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = needs_chromium

NOTE_WAIT_MS = 20_000
STILL_PX = 1  # "0 px": a scroll is whole pixels, a layout is not
SECOND_STORY_AFTER_S = 4.0
PAGE_NOTE = ".offline-note"
CARD_NOTE = ".job-card [data-reconnecting]"  # it says the page's news too, for its story

# Where an element (found again by its id after each swap) is on the screen, at every
# frame: the most and least of its top while the test waits.
WATCH_TOP = """([id, selector]) => {
  const watch = {min: Infinity, max: -Infinity, frames: 0, stop: false};
  const read = () => {
    const card = document.getElementById(id);
    const element = card && (selector ? card.querySelector(selector) : card);
    if (element) {
      const top = element.getBoundingClientRect().top;
      watch.min = Math.min(watch.min, top);
      watch.max = Math.max(watch.max, top);
      watch.frames += 1;
    }
    if (!watch.stop) requestAnimationFrame(read);
  };
  window.__watch = watch;
  requestAnimationFrame(read);
}"""
WATCHED = "() => { window.__watch.stop = true; const w = window.__watch;" \
          " return {min: w.min, max: w.max, frames: w.frames}; }"


@pytest.fixture(scope="module")
def household(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo storyteller writing two stories at once, each over a dozen seconds, with
    the demo's pictures; Mia and Leo on the Children page."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("words-stay"), allow_open=True,
                        demo_delay_s=12, worker_concurrency=2, illustrator="demo",
                        daily_story_limit=100, queue_max=20) as url:
        for child in ({"name": "Mia", "age": 5}, {"name": "Leo", "age": 7}):
            response = httpx.post(url + "/children", json=child, timeout=HTTP_TIMEOUT_S)
            assert response.status_code == 201, response.text
        yield url


def first_paragraph_top(page, selector: str) -> float:
    box = box_of(page.locator(selector).first)
    assert box is not None, f"{selector} is not laid out"
    return box["y"]


def drop_and_restore(page, selector: str, name: str, note: str | None) -> list[float]:
    """The network cut, then back: the first paragraph's screen top before, while offline
    (the `note` saying so shown, on the screen) and after."""
    context = page.context
    tops = [first_paragraph_top(page, selector)]
    context.set_offline(True)
    try:
        if note:
            expect(page.locator(note)).to_be_visible(timeout=NOTE_WAIT_MS)
            tops.append(first_paragraph_top(page, selector))
            assert abs(tops[1] - tops[0]) <= STILL_PX, (name, tops)
            box = box_of(page.locator(note))  # over the page, on the screen
            assert box is not None
            assert box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"], (
                name, box)
        else:
            page.wait_for_timeout(1500)  # time for a note that must not come (a poll's too)
            tops.append(first_paragraph_top(page, selector))
        page.screenshot(path=str(ARTIFACTS / f"words-stay-offline-{name}.png"))
    finally:
        context.set_offline(False)
    if note:
        expect(page.locator(note)).to_be_hidden(timeout=NOTE_WAIT_MS)
    tops.append(first_paragraph_top(page, selector))
    return tops


@pytest.mark.parametrize("size", list(SIZES))
def test_a_wifi_drop_moves_no_word_on_any_page_that_shows_one(open_page, household, size):
    page = open_page(household, size, reduced_motion="reduce").page
    page.goto(household + "/")
    page.locator("label.for-choice", has_text="Mia").click()
    page.fill("#prompt", f"an owl who keeps the moon company ({size})")
    job_id = request_story(page)
    card = f"#job-{job_id}"
    page.locator(f"{card}.status-completed").wait_for(timeout=STORY_WAIT_MS)
    moved = {}
    # Home, the story's card on it, its words in view.
    moved["home"] = drop_and_restore(page, f"{card} .story-text p", f"home-{size}", PAGE_NOTE)

    # The job's own page (its card whole), the story's page and its shared page.
    page.goto(f"{household}/stories/jobs/{job_id}")
    moved["job"] = drop_and_restore(page, f"{card} .story-text p", f"job-{size}", PAGE_NOTE)
    story_id = httpx.get(f"{household}/stories/jobs/{job_id}", timeout=HTTP_TIMEOUT_S,
                         headers={"Accept": "application/json"}).json()["story_id"]
    page.goto(f"{household}/stories/{story_id}")
    moved["story"] = drop_and_restore(page, ".story-text p", f"story-{size}", None)
    share = httpx.post(f"{household}/stories/{story_id}/share", json={},
                       timeout=HTTP_TIMEOUT_S)
    assert share.status_code == 201, share.text
    page.goto(household + share.json()["url"])
    moved["shared"] = drop_and_restore(page, ".story-text p", f"shared-{size}", None)

    # And a story being written, on its job's page: the card's own note and the page's.
    page.goto(household + "/")
    page.fill("#prompt", f"a snail who races the rain ({size})")
    writing = request_story(page)
    page.goto(f"{household}/stories/jobs/{writing}")
    expect(page.locator(f"#job-{writing} .job-draft p").first).to_be_visible(
        timeout=STORY_WAIT_MS)
    moved["writing"] = drop_and_restore(page, f"#job-{writing} .job-draft p",
                                        f"writing-{size}", CARD_NOTE)
    print(size, {page_name: [round(top, 1) for top in tops] for page_name, tops in moved.items()})
    for page_name, tops in moved.items():
        assert max(tops) - min(tops) <= STILL_PX, (page_name, tops)


def ask(page, child: str, prompt: str) -> str:
    page.locator("label.for-choice", has_text=child).click()
    page.fill("#prompt", prompt)
    return request_story(page)


@pytest.mark.parametrize("size", list(SIZES))
def test_a_second_story_moves_nothing_in_view(open_page, household, size):
    watched = open_page(household, size, reduced_motion="reduce")
    page = watched.page
    page.goto(household + "/")
    first = ask(page, "Mia", f"a whale who sings to the lighthouse ({size})")
    asked_at = time.monotonic()
    first_card = page.locator(f"#job-{first}")
    expect(first_card.locator(".job-draft p").first).to_be_visible(timeout=STORY_WAIT_MS)
    time.sleep(max(0.0, SECOND_STORY_AFTER_S - (time.monotonic() - asked_at)))
    second = ask(page, "Leo", f"a badger who builds a boat ({size})")
    settled_scroll(page)  # the new card brought to the top: the tap's answer

    # The new card in view while the first, above it, goes on growing and gets its picture.
    page.evaluate(WATCH_TOP, [f"job-{second}", ""])
    first_card.locator("figure.picture img").wait_for(timeout=STORY_WAIT_MS)
    picture_loaded(page, f"#job-{first} figure.picture img")
    page.wait_for_timeout(1200)  # a poll more: the finished card swapped in
    new_card = page.evaluate(WATCHED)
    watched.shot(f"words-stay-two-stories-{size}-second")

    # Back to the first story: it stays while the second grows below it, and gets its
    # picture too.
    first_card.locator(".story-text p").nth(1).evaluate("p => p.scrollIntoView()")
    page.evaluate(WATCH_TOP, [f"job-{first}", ".story-text p:nth-of-type(2)"])
    picture_loaded(page, f"#job-{second} figure.picture img")
    page.wait_for_timeout(1200)
    first_paragraph = page.evaluate(WATCHED)
    watched.shot(f"words-stay-two-stories-{size}-first")
    print(size, "second card's top", new_card, "first card's paragraph", first_paragraph)
    assert new_card["frames"] > 10 and first_paragraph["frames"] > 10
    assert 0 <= new_card["min"] < SIZES[size]["height"] / 3  # it was the card in view
    assert new_card["max"] - new_card["min"] <= STILL_PX, new_card
    assert first_paragraph["max"] - first_paragraph["min"] <= STILL_PX, first_paragraph
    assert watched.problems == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_cards_picture_comes_into_a_placeholder_of_its_size(open_page, settings, fake_llm,
                                                              size):
    fake_llm.images.hold()  # the card is finished while its picture is drawn
    drawing = replace(settings, illustrator="openai", image_model="fake-image",
                      card_poll_s=CARD_POLL_S)
    with served_over_http(drawing) as url:
        page = open_page(url, size, reduced_motion="reduce").page
        page.goto(url + "/")
        page.fill("#prompt", f"a hedgehog who paints the stars ({size})")
        card_id = request_story(page)
        card = page.locator(f"#job-{card_id}")
        placeholder = card.locator("figure.picture:has(.picture-placeholder)")
        placeholder.wait_for(timeout=STORY_WAIT_MS)
        size_of = "f => { const r = f.getBoundingClientRect(); return [r.width, r.height]; }"
        waiting = read_attached(placeholder, size_of)
        fake_llm.images.release()
        picture_loaded(page, f"#job-{card_id} figure.picture img")
        drawn = read_attached(card.locator("figure.picture"), size_of)
        print(size, "placeholder", waiting, "picture", drawn)
        assert waiting == pytest.approx(drawn, abs=STILL_PX)
