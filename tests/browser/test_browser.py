"""The household UI in a real browser: Debian's headless Chromium driven by Playwright.

The app runs under uvicorn on a free loopback port (its own database, the demo
storyteller with a short delay). Each flow is walked at a tablet and a phone size, with
JavaScript on and off; screenshots go to test-artifacts/. Accessibility is checked by
injecting the vendored axe-core into each page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest

from tests.helpers.browser import (
    AXE,
    STORY_WAIT_MS,
    VIEWPORTS,
    Watched,
    app_of_its_own,
    needs_chromium,
    open_reading_menu,
    overflows,
    request_story,
)

pytestmark = needs_chromium


@dataclass
class LiveApp:
    url: str


@pytest.fixture(scope="module")
def live_app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApp]:
    """The app over real HTTP on 127.0.0.1, with a database of its own."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("browser-data"),
                        allow_open=True) as url:
        yield LiveApp(url)


@pytest.fixture
def new_context(browser):
    """Browser contexts for one test, closed however it ends (so the app can stop)."""
    opened = []

    def open_context(viewport: str, **options):
        opened.append(browser.new_context(viewport=VIEWPORTS[viewport], **options))
        return opened[-1]

    yield open_context
    for context in opened:
        context.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_story_from_one_tap_to_reading_with_javascript(new_context, live_app, viewport):
    context = new_context(viewport)
    watched = Watched(context, live_app.url)
    page = watched.page
    page.goto(live_app.url + "/")
    page.evaluate("window.__sameDocument = true")  # gone if anything reloads the page
    page.locator("a.chip", has_text="a trip to the moon").click()
    assert page.locator("#prompt").input_value() == "a trip to the moon"
    page.fill("#child_name", "Mia")
    page.fill("#age", "5")
    watched.shot(f"{viewport}-js-home")
    job_id = request_story(page)
    assert page.locator("#prompt").input_value() == ""  # a fresh form, ready for the next
    assert page.locator("#child_name").input_value() == "Mia"
    page.locator(f"#job-{job_id}.status-completed").wait_for(timeout=STORY_WAIT_MS)
    assert page.evaluate("window.__sameDocument") is True
    assert page.url == live_app.url + "/"
    watched.shot(f"{viewport}-js-home-done")

    page.goto(f"{live_app.url}/stories/jobs/{job_id}")
    watched.shot(f"{viewport}-js-job")
    page.get_by_role("link", name="Read the story").click()
    page.wait_for_url(re.compile(r"/stories/\d+$"))
    assert "Mia" in page.locator("h1").inner_text()
    page.get_by_role("button", name="Keep the screen on").wait_for()  # app.js has run
    assert page.locator("[data-read-aloud]").is_visible() == page.evaluate(
        "'speechSynthesis' in window"
    )  # with no voice too (headless Chromium has none): its bar says how to add one
    assert page.locator("html").get_attribute("data-theme-choice") == "auto"
    assert page.locator("html").get_attribute("data-theme") in ("dark", "night")  # by the clock
    watched.shot(f"{viewport}-js-story")
    open_reading_menu(page)
    page.get_by_role("button", name="Light theme").click()
    page.get_by_role("button", name="Larger text").click()
    assert page.locator("html").get_attribute("data-theme") == "light"
    assert page.locator("html").get_attribute("data-text-size") == "4"
    page.keyboard.press("Escape")  # the menu closed (on a phone it lies over the tools)
    page.get_by_role("button", name="Favourite").click()
    page.locator("button.favourite[aria-pressed='true']").wait_for()
    watched.shot(f"{viewport}-js-story-light")
    page.reload()
    assert page.locator("html").get_attribute("data-theme") == "light"  # remembered

    page.goto(live_app.url + "/stories")
    watched.shot(f"{viewport}-js-library")
    page.fill("#q", "Mia")
    page.locator("#library-results .shelf-item").first.wait_for()
    assert watched.problems == []


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_story_from_one_tap_to_reading_without_javascript(new_context, live_app, viewport):
    context = new_context(viewport, java_script_enabled=False)
    watched = Watched(context, live_app.url)
    page = watched.page
    page.goto(live_app.url + "/")
    page.locator("a.chip", has_text="a whale who sings lullabies").click()
    page.wait_for_url(re.compile(r"idea="))
    assert page.locator("#prompt").input_value() == "a whale who sings lullabies"
    page.fill("#child_name", "Theo")
    page.get_by_role("button", name="Write the story").click()
    page.wait_for_url(re.compile(r"/stories/jobs/\d+$"))
    watched.shot(f"{viewport}-nojs-job")
    # The page refreshes itself every 3 s until the story is there.
    page.get_by_role("link", name="Read the story").wait_for(timeout=STORY_WAIT_MS)
    watched.shot(f"{viewport}-nojs-job-done")
    page.get_by_role("link", name="Read the story").click()
    page.wait_for_url(re.compile(r"/stories/\d+$"))
    story_url = page.url
    assert "Theo" in page.locator("h1").inner_text()
    assert not page.locator("[data-read-aloud]").is_visible()  # needs the script
    watched.shot(f"{viewport}-nojs-story")
    open_reading_menu(page)
    page.get_by_role("button", name="Light theme").click()  # a plain form post
    page.wait_for_url(story_url)
    assert page.locator("html").get_attribute("data-theme") == "light"

    page.goto(live_app.url + "/stories")
    item = page.locator(".shelf-item", has=page.locator(f"a[href='{urlsplit(story_url).path}']"))
    item.locator("summary").click()
    watched.shot(f"{viewport}-nojs-library-menu")
    item.get_by_role("button", name="Delete").click()
    page.wait_for_url(re.compile(r"/stories\?deleted=\d+$"))
    assert page.locator(f"a.shelf-link[href='{urlsplit(story_url).path}']").count() == 0
    page.get_by_role("button", name="Undo").click()  # a plain form post, then the story
    page.wait_for_url(re.compile(r"/stories\?restored=\d+$"))
    assert page.get_by_text("Restored:").is_visible()
    assert page.locator(f"a.shelf-link[href='{urlsplit(story_url).path}']").count() == 1
    assert watched.problems == []


def test_pages_have_no_serious_accessibility_violations(new_context, live_app):
    context = new_context("tablet", bypass_csp=True)  # lets axe be injected
    watched = Watched(context, live_app.url)
    page = watched.page
    page.goto(live_app.url + "/")
    page.get_by_role("button", name="Write the story").click()  # the prompt is required
    page.fill("#prompt", "a sleepy owl")
    job_id = request_story(page)
    page.locator(f"#job-{job_id}.status-completed").wait_for(timeout=STORY_WAIT_MS)
    story_path = page.get_by_role("link", name="Read the story").first.get_attribute("href")

    # The children's page with a child on it (that child's form, and the new child's).
    page.goto(live_app.url + "/children")
    page.fill("#new-name", "Mia")
    page.get_by_role("button", name="Add", exact=True).click()
    page.get_by_role("heading", name="Mia").wait_for()

    # Auto is one of the three on any page (data-theme says which): each is checked once.
    page.goto(live_app.url + "/")
    assert page.locator("html").get_attribute("data-theme") in ("dark", "light", "night")
    found = {}
    for theme in ("dark", "light", "night"):
        context.add_cookies([{"name": "theme", "value": theme, "url": live_app.url}])
        for path in ("/", f"/stories/jobs/{job_id}", story_path, "/stories", "/children"):
            page.goto(live_app.url + path)
            open_reading_menu(page)  # its panel is checked too
            page.add_script_tag(path=str(AXE))
            violations = page.evaluate(
                """async () => (await axe.run(document, {resultTypes: ["violations"]}))
                    .violations.filter(v => ["serious", "critical"].includes(v.impact))
                    .map(v => v.id + ": " + v.nodes.map(n => n.target.join(" ")).join(", "))"""
            )
            if violations:
                found[f"{theme} {path}"] = violations
            for width in (320, 1366):  # the narrowest phone, a landscape tablet
                page.set_viewport_size({"width": width, "height": 800})
                if overflows(page):
                    found[f"{theme} {path} at {width}px"] = ["wider than the screen"]
            page.set_viewport_size(VIEWPORTS["tablet"])
    assert found == {}
    assert watched.problems == []
