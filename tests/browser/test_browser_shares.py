"""A story for Grandma, in a real browser: a link made from the story page ("Share…", then
Copy where the device has a clipboard), opened in a fresh browser profile at the three
sizes with no password: the story, its picture and the first name alone, no cookie, nothing
of the household; and printed (print media), the shared page and the story page are a
booklet page: the picture on top, no controls, black on white. Screenshots in
test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser.test_browser_pictures import STORY, TITLE, finished_story
from tests.helpers.browser import (
    ARTIFACTS,
    SIZES,
    SPEECH_STUB,
    WAKE_LOCK_STUB,
    app_of_its_own,
    needs_chromium,
    picture_loaded,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.waits import WAIT_S, json_when

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def shared(browser, pg_url: str, fake_llm_server: FakeLLM,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, str]]:
    """The household's app (pictures drawn), a story, and a link made on its page: made
    once for the module, whose tests only read them, each in a fresh browser context."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("shares"), allow_open=True,
                        storyteller="openai", openai_api_key="test-key",
                        openai_base_url=fake_llm_server.url, story_model="fake-model",
                        llm_timeout_s=60, illustrator="openai",
                        image_model="fake-image") as url:
        fake_llm_server.reset()  # whatever a test before left it doing
        fake_llm_server.story = STORY
        try:
            story_id = finished_story(url)
            wait_for_picture(url, story_id)
        finally:
            fake_llm_server.reset()  # as the next test's `fake_llm` would find it
        context = browser.new_context(viewport=SIZES["tablet"])
        try:
            page = context.new_page()
            page.goto(f"{url}/stories/{story_id}", wait_until="networkidle")
            page.locator(".share-menu > summary").click()  # "Share…", among the tools
            page.get_by_role("button", name="Make a link").click()
            link = page.locator("[data-share-url]")
            link.wait_for()
            expect(page.get_by_role("button", name="Copy the link")).to_be_visible()
            # Stopping a link asks first: a mis-tap keeps Grandma's link working.
            confirm = page.get_by_role("button", name="Yes, stop sharing")
            expect(confirm).to_be_hidden()
            page.get_by_text("Stop sharing…").click()
            expect(confirm).to_be_visible()
            page.get_by_text("Keep sharing").click()
            expect(confirm).to_be_hidden()
            page.screenshot(path=str(ARTIFACTS / "share-made-tablet.png"))
            shared_url = link.input_value()
        finally:
            context.close()
        yield url, story_id, shared_url


def wait_for_picture(url: str, story_id: int) -> None:
    json_when(f"{url}/stories/{story_id}", lambda story: story["picture"]["status"] == "ready",
              "the picture")


@pytest.mark.parametrize("size", list(SIZES))
def test_grandma_opens_the_link_in_a_fresh_browser(browser, shared, size):
    url, _, shared_url = shared
    assert re.fullmatch(rf"{re.escape(url)}/shared/[A-Za-z0-9_-]{{22,}}", shared_url)
    grandma = browser.new_context(viewport=SIZES[size])  # a fresh profile: nothing of ours
    try:
        page = grandma.new_page()
        answer = page.goto(shared_url, wait_until="networkidle")
        assert answer.status == 200
        assert page.locator("h1").inner_text() == TITLE
        assert page.locator(".story-text p").count() >= 3
        img = page.locator("figure.picture img")
        assert img.is_visible() and img.get_attribute("alt") == TITLE
        picture_loaded(page)
        assert grandma.cookies() == []
        links = page.locator("a").evaluate_all("links => links.map(a => a.href)")
        assert links == []  # no way into the household
        assert page.locator("form").count() == 0
        size_px = float(page.evaluate("parseFloat(getComputedStyle(document.querySelector("
                                      "'.story-text p')).fontSize)"))
        assert size_px >= 18  # bedtime reading type
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
        page.screenshot(path=str(ARTIFACTS / f"shared-{size}.png"), full_page=True)
    finally:
        grandma.close()


def test_grandma_can_have_the_story_read_aloud(browser, shared):
    """Read aloud on the shared page, which loads wake.js and reading.js alone (none of the
    household's scripts): the button is there, a tap reads the title and every paragraph
    with the screen kept on meanwhile, and no script fails. Headless Chromium has no
    voices: the page is given a synthesizer that notes what it is asked to say
    (tests/helpers/browser.py's SPEECH_STUB)."""
    _, _, shared_url = shared
    context = browser.new_context(viewport=SIZES["phone"])
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.add_init_script(SPEECH_STUB)
        page.add_init_script(WAKE_LOCK_STUB)
        page.goto(shared_url, wait_until="networkidle")
        start = page.get_by_role("button", name="Read aloud")
        expect(start).to_be_visible()
        html = page.locator("html")
        assert html.get_attribute("data-wake") is None  # nothing asked before reading
        start.click()
        expect(page.get_by_role("region", name="Reading aloud")).to_be_visible()
        expect(html).to_have_attribute("data-wake", "held")  # the screen on while it reads
        expect(start).to_be_visible(timeout=WAIT_S * 1000)  # read to the end: the button back
        expect(html).to_have_attribute("data-wake", "free")
        spoken = [s["text"] for s in page.evaluate("window.__spoken")]
        paragraphs = page.locator(".story-text p").all_inner_texts()
        assert spoken == [TITLE, *[p.strip() for p in paragraphs]]
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize(("scheme", "dark"), [("light", False), ("dark", True)])
def test_the_shared_page_is_night_when_the_reader_prefers_dark(browser, shared, scheme, dark):
    _, _, shared_url = shared
    context = browser.new_context(viewport=SIZES["phone"], color_scheme=scheme,
                                  timezone_id="UTC")
    try:
        page = context.new_page()
        page.clock.install(time="2026-12-04T12:00:00Z")  # noon: by the clock, not Night
        page.goto(shared_url, wait_until="networkidle")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(12, 9, 6)") == dark, background  # Night's page
        dimmed = page.evaluate("getComputedStyle(document.querySelector("
                               "'figure.picture img')).filter")
        assert ("brightness(0.55)" in dimmed) == dark
        page.screenshot(path=str(ARTIFACTS / f"shared-phone-{scheme}.png"))
    finally:
        context.close()


def test_the_shared_page_and_the_story_page_print_as_a_booklet_page(browser, shared):
    url, story_id, shared_url = shared
    context = browser.new_context(viewport=SIZES["tablet"])
    context.add_cookies([{"name": "theme", "value": "night", "url": url}])
    try:
        page = context.new_page()
        for address in (shared_url, f"{url}/stories/{story_id}"):
            page.goto(address, wait_until="networkidle")
            page.emulate_media(media="print")
            picture = page.locator("figure.picture").bounding_box()
            title = page.locator("h1").bounding_box()
            assert picture["y"] < title["y"], address  # the picture on top
            for control in ("button", ".reading-tools", ".story-foot", ".shares",
                            ".site-header"):
                visible = page.locator(control).evaluate_all(
                    "els => els.filter(e => e.getClientRects().length > 0).length")
                assert visible == 0, (address, control)
            colours = page.evaluate("""() => [getComputedStyle(document.body).backgroundColor,
                getComputedStyle(document.querySelector('.story-text p')).color]""")
            assert colours == ["rgb(255, 255, 255)", "rgb(0, 0, 0)"], address
            assert "serif" in page.evaluate("getComputedStyle(document.querySelector("
                                            "'.story-text')).fontFamily").lower()
            which = "shared" if "/shared/" in address else "story"
            page.pdf(path=str(ARTIFACTS / f"print-{which}.pdf"))
            page.emulate_media(media="screen")
    finally:
        context.close()


@pytest.mark.parametrize(("hour", "night"), [(21, True), (6, True), (12, False)])
def test_the_shared_page_is_night_by_the_reader_s_clock_too(browser, shared, hour, night):
    """A light-mode phone at Grandma's bedtime: Night all the same (the household's Night
    hours, by her own clock), and light at noon."""
    _, _, shared_url = shared
    context = browser.new_context(viewport=SIZES["phone"], color_scheme="light",
                                  timezone_id="UTC")
    try:
        page = context.new_page()
        page.clock.install(time=f"2026-12-04T{hour:02d}:00:00Z")
        page.goto(shared_url, wait_until="networkidle")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(12, 9, 6)") == night, (hour, background)
        page.screenshot(path=str(ARTIFACTS / f"shared-phone-light-at-{hour:02d}h.png"))
    finally:
        context.close()
