"""A story's picture in a real browser, at the three sizes: the story page opened while the
picture is drawn shows its calm placeholder in the picture's place, and when the picture
comes nothing on the page moves (no layout shift, the first paragraph where it was); in
Night the picture is dimmed. Debian's chromium through Playwright; screenshots go to
test-artifacts/."""

from __future__ import annotations

import time
from dataclasses import replace

import httpx
import pytest

from tests.helpers.browser import (
    ARTIFACTS,
    CARD_POLL_S,
    SIZES,
    needs_chromium,
    picture_loaded,
    served_over_http,
)
from tests.helpers.waits import WAIT_S, json_when

pytestmark = needs_chromium

STILL_PX = 1
TITLE = "The Whale Who Hummed"
STORY = TITLE + "\n\n" + "\n\n".join(
    f"Paragraph {n}: the whale hummed and the sea grew still and sleepy." for n in range(6))
SHIFTS = """
window.__shifts = 0;
new PerformanceObserver(list => { for (const e of list.getEntries())
  if (!e.hadRecentInput) window.__shifts += e.value; })
  .observe({type: "layout-shift", buffered: true});
"""


def open_story(browser, url: str, story_id: int, size: str):
    """The story page in a new context at `size`, in Light whatever the hour ("auto" turns
    to Night in the evening), its layout shifts counted from the start: (context, page)."""
    context = browser.new_context(viewport=SIZES[size])
    context.add_cookies([{"name": "theme", "value": "light", "url": url}])
    page = context.new_page()
    page.add_init_script(SHIFTS)
    page.goto(f"{url}/stories/{story_id}", wait_until="networkidle")
    return context, page


def finished_story(url: str) -> int:
    """A story asked for over the JSON API and written: its id (its picture being drawn)."""
    with httpx.Client(base_url=url, timeout=10) as client:
        job = client.post("/stories/generate", json={"prompt": "a humming whale"},
                          headers={"Idempotency-Key": f"whale-{time.monotonic_ns()}"}).json()
        deadline = time.monotonic() + WAIT_S
        while (state := client.get(f"/stories/jobs/{job['job_id']}",
                                   headers={"Accept": "application/json"}).json()
               )["status"] != "completed":
            assert time.monotonic() < deadline, state
            time.sleep(0.05)
        return state["story_id"]


@pytest.mark.parametrize("size", list(SIZES))
def test_the_picture_arrives_in_its_place_and_nothing_moves(browser, settings, fake_llm, size):
    fake_llm.story = STORY
    fake_llm.images.hold()  # the page opens while the picture is drawn
    drawing = replace(settings, illustrator="openai", image_model="fake-image",
                      card_poll_s=CARD_POLL_S)
    with served_over_http(drawing) as url:
        story_id = finished_story(url)
        context, page = open_story(browser, url, story_id, size)
        try:
            # From here on: what the picture's coming moves (the page's own start is
            # measured by Lighthouse, bench/lighthouse.py).
            page.evaluate("window.__shifts = 0")
            # Read at once, in one script: a poll may replace the placeholder between reads.
            placeholder, frame, first = page.evaluate("""() => {
                const box = (selector) => {
                    const rect = document.querySelector(selector).getBoundingClientRect();
                    return {y: rect.y, width: rect.width, height: rect.height};
                };
                return [document.querySelector('figure.picture .picture-placeholder') !== null,
                        box('figure.picture'), box('.story-text p')];
            }""")
            assert placeholder
            assert frame["width"] > 0 and abs(frame["height"] - frame["width"] * 2 / 3) < 2
            fake_llm.images.release()
            page.locator("figure.picture img").wait_for(state="visible",
                                                        timeout=WAIT_S * 1000)
            picture_loaded(page)
            page.screenshot(path=str(ARTIFACTS / f"picture-{size}.png"))
            after = page.locator(".story-text p").first.bounding_box()
            assert abs(after["y"] - first["y"]) <= STILL_PX
            assert abs(page.locator("figure.picture").bounding_box()["height"]
                       - frame["height"]) <= STILL_PX
            assert page.evaluate("window.__shifts") == 0
            assert page.locator("figure.picture img").get_attribute("alt") == TITLE
            # The placeholder polls no more once the picture is there.
            assert page.locator("figure.picture").get_attribute("hx-trigger") is None
            # In Night the picture is dimmed: never the brightest thing on the screen.
            assert page.evaluate("getComputedStyle(document.querySelector("
                                 "'figure.picture img')).filter") == "none"
            context.add_cookies([{"name": "theme", "value": "night", "url": url}])
            page.reload()
            assert page.locator("html").get_attribute("data-theme") == "night"
            dimmed = page.evaluate("getComputedStyle(document.querySelector("
                                   "'figure.picture img')).filter")
            assert "brightness(0.55)" in dimmed
            page.screenshot(path=str(ARTIFACTS / f"picture-{size}-night.png"))
        finally:
            context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_story_page_does_not_move_from_its_first_paint(browser, settings, fake_llm, size):
    """Its picture ready, a story page opened with scripts: the reading tools the scripts
    reveal (read aloud, keep the screen on) come in places kept for them, so neither the
    picture nor the story moves down (Lighthouse saw 0.05 of CLS on a phone before)."""
    fake_llm.story = STORY
    drawing = replace(settings, illustrator="openai", image_model="fake-image")
    with served_over_http(drawing) as url:
        story_id = finished_story(url)
        json_when(f"{url}/stories/{story_id}",
                  lambda story: story["picture"]["status"] == "ready", "the picture")
        context, page = open_story(browser, url, story_id, size)
        try:
            picture_loaded(page)
            tools = page.locator(".reading-tools .wake-lock, .reading-tools .read-aloud")
            assert tools.first.is_visible()  # revealed by the scripts: the case tested
            assert page.evaluate("window.__shifts") == 0
        finally:
            context.close()


# Where a slow tablet may have read the page to when it first paints it.
READ_TO = ["</nav>", '<details class="reading-menu" data-reading-menu>',
           '<summary class="button tool"']


@pytest.mark.parametrize("size", list(SIZES))
def test_the_header_holds_still_however_much_of_the_page_has_come(browser, settings, size):
    """A busy tablet may paint the page before it has read all of it. The header's links
    and menu are where they will stay from then on: a menu not read yet keeps its place,
    and one whose button has not come shows no wider "Details" of its own (the links
    jumped 16 px sideways, measured as layout shift on a story page)."""
    with served_over_http(settings) as url:
        html = httpx.get(f"{url}/stories").text
        context = browser.new_context(viewport=SIZES[size])
        try:
            page = context.new_page()

            def header(read_to: str | None) -> list:
                body = html if read_to is None else html[:html.index(read_to) + len(read_to)]
                page.route(f"{url}/stories", lambda route: route.fulfill(
                    status=200, content_type="text/html", body=body))
                page.goto(f"{url}/stories")
                page.unroute(f"{url}/stories")
                return page.evaluate("""() => [".site-header nav", ".reading-menu"].map(s => {
                    const box = document.querySelector(s)?.getBoundingClientRect();
                    return box && [box.x, box.y, box.width, box.height];
                })""")

            nav, menu = header(None)
            for read_to in READ_TO:
                early_nav, early_menu = header(read_to)
                assert early_nav == nav, read_to
                assert early_menu in (None, menu), read_to
        finally:
            context.close()
