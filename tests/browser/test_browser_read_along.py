"""Reading along on the home page's card, in a real browser at issue 21's three sizes (a
tablet upright and on its side, a phone): the screen is kept on (a wake lock) while a story
is written on the page, taken again when the page comes back into view, and kept while
its story is read on the card; the finished card reads its story aloud, in the same bar
pinned to the screen's foot as the story page, with the screen kept on meanwhile; and with
no voice for the story's language, that bar says so and how to add one, in Night too. No
id twice.

Headless Chromium has neither a screen to keep on nor voices: the page is given a wake lock
and a synthesizer that only note what the page's own code asks of them.
Debian's chromium through Playwright (tests/helpers/browser.py); screenshots go to
test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import (
    ARTIFACTS,
    SIZES,
    SPEECH_STUB,
    STORY_WAIT_MS,
    WAKE_LOCK_STUB,
    app_of_its_own,
    box_of,
    needs_chromium,
    overflows,
    request_story,
    settled_scroll,
)
from tests.helpers.ids import duplicate_ids_on

pytestmark = needs_chromium

NO_VOICES = "speechSynthesis.getVoices = () => [];"
NOTE = "No voice for this language on this device"
HOW_TO = ("Spoken Content", "Voices", "Text-to-speech output", "Speech Services by Google",
          "Time & language", "espeak-ng")


@pytest.fixture(scope="module")
def app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo storyteller, a story in 5 s (long enough to watch it being written)."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("read-along"), allow_open=True,
                        demo_delay_s=5, worker_concurrency=2) as url:
        yield url


@pytest.fixture(scope="module")
def quick(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo storyteller, a story in a second: for the tests of a written card."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("read-along-quick"), allow_open=True,
                        demo_delay_s=1, worker_concurrency=2) as url:
        yield url


def write(page, url: str, idea: str):
    """A story asked for on the home page; its card."""
    page.goto(url + "/")
    page.fill("#prompt", idea)
    return page.locator("#job-" + request_story(page))


def written(card) -> None:
    card.get_by_role("link", name="Read the story").wait_for(timeout=STORY_WAIT_MS)


def in_screen(page, locator) -> bool:
    box, height = box_of(locator), page.viewport_size["height"]
    return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height + 0.5


@pytest.mark.parametrize("viewport", list(SIZES))
def test_the_screen_stays_on_while_a_story_is_written_and_is_let_go_after(
    open_page, app, viewport
):
    watched = open_page(app, viewport)
    page = watched.page
    page.add_init_script(WAKE_LOCK_STUB)
    card = write(page, app, f"a lighthouse keeper's cat ({viewport})")
    html = page.locator("html")
    expect(html).to_have_attribute("data-wake", "held")  # while it is written
    assert "status-completed" not in card.get_attribute("class")
    # Hidden, the browser drops the lock; back in view while still writing, it is taken again.
    page.evaluate("window.__hide()")
    expect(html).to_have_attribute("data-wake", "free")
    page.evaluate("window.__show()")
    expect(html).to_have_attribute("data-wake", "held")
    assert "status-completed" not in card.get_attribute("class")
    watched.shot(f"read-along-{viewport}-writing")

    written(card)
    # Written, it is read on the card: the screen stays on (tests/browser/
    # test_browser_screen_on.py: until the page is hidden or 30 minutes pass).
    expect(html).to_have_attribute("data-wake", "held")
    page.evaluate("window.__hide()")
    expect(html).to_have_attribute("data-wake", "free")
    wake = page.evaluate("window.__wake")
    assert wake[:3] == ["request screen", "release", "request screen"], wake
    assert wake[-1] == "release", wake
    assert watched.problems == []


@pytest.mark.parametrize("viewport", list(SIZES))
def test_a_written_card_reads_its_story_aloud_in_the_pinned_bar(open_page, quick, viewport):
    # Reduced motion: each paragraph is scrolled to at once, so the screenshot is not taken
    # in the middle of a smooth scroll.
    watched = open_page(quick, viewport, reduced_motion="reduce")
    page = watched.page
    page.add_init_script(WAKE_LOCK_STUB)
    page.add_init_script(SPEECH_STUB.replace("}, 120);", "}, 400);"))
    card = write(page, quick, f"an owl who counts the stars ({viewport})")
    written(card)
    story = card.locator(".job-story")
    title = story.locator(".job-title").inner_text().strip()
    paragraphs = [p.strip() for p in story.locator("p:not(.job-title)").all_inner_texts()]
    told = [p for p in paragraphs if not (p.startswith("(") and p.endswith(")"))]
    assert len(told) == len(paragraphs) - 1  # the demo's note is on the card, not to be read
    expect(page.locator("html")).to_have_attribute("data-wake", "held")  # a story on screen

    start = card.get_by_role("button", name="Read aloud")
    expect(start).to_be_visible()
    start.scroll_into_view_if_needed()
    assert not overflows(page)
    page.screenshot(path=str(ARTIFACTS / f"read-along-{viewport}-card-done.png"))
    start.click()
    bar = page.get_by_role("region", name="Reading aloud")
    expect(bar).to_be_visible()
    expect(page.locator("html")).to_have_attribute("data-wake", "held")  # kept on, reading
    expect(story.locator("p.is-reading")).to_have_count(1)
    for control in (bar.get_by_role("button", name="Pause"), bar.get_by_role("button", name="Stop"),
                    bar.get_by_label("Sleep timer"), bar.get_by_label("Voice")):
        assert in_screen(page, control), control
    assert not overflows(page)
    page.screenshot(path=str(ARTIFACTS / f"read-along-{viewport}-card-reading.png"))
    assert duplicate_ids_on(page) == []

    # To the end: every paragraph of the story, the title first, never the note; then the
    # bar goes and the screen is let go.
    expect(start).to_be_visible(timeout=len(told) * 1000 + 10_000)
    expect(bar).to_be_hidden()
    spoken = page.evaluate("window.__spoken")
    assert [s["text"] for s in spoken] == [title, *told]
    assert all(s["lit"] == s["text"] for s in spoken)  # each paragraph lit while it was read
    # Still on screen after reading: kept on (one lock all along), let go when hidden.
    expect(page.locator("html")).to_have_attribute("data-wake", "held")
    page.evaluate("window.__hide()")
    expect(page.locator("html")).to_have_attribute("data-wake", "free")
    assert page.evaluate("window.__wake")[-1] == "release"
    assert page.evaluate("getComputedStyle(document.body).paddingBottom") == "0px"
    assert watched.problems == []


@pytest.mark.parametrize("viewport", list(SIZES))
def test_with_no_voice_the_bar_says_so_and_how_to_add_one(open_page, quick, viewport):
    watched = open_page(quick, viewport)
    page = watched.page
    page.context.add_cookies([{"name": "theme", "value": "night", "url": quick}])
    page.add_init_script(WAKE_LOCK_STUB)
    page.add_init_script(SPEECH_STUB + NO_VOICES)
    card = write(page, quick, f"a hedgehog's lantern walk ({viewport})")
    written(card)
    expect(page.locator("html")).to_have_attribute("data-wake", "held")  # a story on screen
    wake = page.evaluate("window.__wake")
    start = card.get_by_role("button", name="Read aloud")
    start.click()  # the button stays: a tap tells why it cannot read here
    bar = page.get_by_role("region", name="Reading aloud")
    note = bar.get_by_text(NOTE)
    expect(note).to_be_visible()
    for hidden in ("Pause", "Stop"):
        expect(bar.get_by_role("button", name=hidden)).to_be_hidden()
    # The card's button stays in view, above the bar (the page scrolled to it if need be).
    settled_scroll(page)
    assert start.bounding_box()["y"] + start.bounding_box()["height"] <= bar.bounding_box()["y"]
    how = bar.get_by_text("How to add a voice")
    how.click()
    for words in HOW_TO:
        expect(bar.get_by_text(words, exact=False).first).to_be_visible()
    assert in_screen(page, bar) and in_screen(page, note)
    assert not overflows(page)
    # Readable in Night: the note's text against the bar, well past 4.5:1.
    ratio = contrast(page, ".read-aloud-bar:not([hidden]) .no-voice-what")
    print(f"{viewport}: the no-voice note's contrast in Night, {ratio:.1f}:1")
    assert ratio >= 4.5
    assert page.evaluate("window.__wake") == wake  # nothing read: no second lock
    page.screenshot(path=str(ARTIFACTS / f"read-along-{viewport}-no-voice.png"))
    assert duplicate_ids_on(page) == []

    bar.get_by_role("button", name="Close").click()
    expect(bar).to_be_hidden()
    expect(start).to_be_visible()
    assert watched.problems == []


# The contrast of an element's text against the background its nearest painted ancestor
# gives it (WCAG's relative luminance), read in the page.
CONTRAST = """s => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }).reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  let el = document.querySelector(s);
  const fg = lum(rgb(getComputedStyle(el).color));
  while (el && getComputedStyle(el).backgroundColor === "rgba(0, 0, 0, 0)") el = el.parentElement;
  const bg = lum(rgb(getComputedStyle(el || document.body).backgroundColor));
  return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
}"""


def contrast(page, selector: str) -> float:
    return page.evaluate(CONTRAST, selector)
