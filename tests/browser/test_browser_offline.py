"""The shelf in a real browser (Debian's Chromium through Playwright, see tests/helpers/browser.py):
the service worker installs; with the network cut (Playwright's offline mode) a story read
before opens and the home page says, calmly, that it is offline; the library's quiet row
actions, Undo, and a sequel two taps away; all under the strict CSP, with no console
errors. Screenshots go to test-artifacts/shelf-*.png.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from app.config import Settings
from app.db import connect_pool
from app.queue.store import JobStore
from tests.helpers.browser import (
    ARTIFACTS,
    CARD_POLL_S,
    SIZES,
    STORY_WAIT_MS,
    VIEWPORTS,
    admin,
    needs_chromium,
    overflows,
    request_story,
    served_over_http,
)
from tests.helpers.database import TEMPLATE_DB, in_a_thread, with_database
from tests.helpers.shelving import shelve, shelve_many

pytestmark = needs_chromium

CSP_WATCH = ("document.addEventListener('securitypolicyviolation', e => "
             "console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))")
CONTROLLED = """() => new Promise(resolve => {
  if (navigator.serviceWorker.controller) return resolve(true);
  navigator.serviceWorker.addEventListener("controllerchange", () => resolve(true));
})"""
KEPT = """async path => {
  for (let i = 0; i < 100; i++) {
    const names = (await caches.keys()).filter(n => n.startsWith("bedtime-stories-"));
    for (const name of names) {
      if (await (await caches.open(name)).match(path, {ignoreVary: true})) return true;
    }
    await new Promise(r => setTimeout(r, 100));
  }
  return false;
}"""


# An app and a database for each test, so no test finds another's stories or limit.
@pytest.fixture
def live_database(pg_url: str) -> Iterator[str]:
    name = f"offline_{int(time.time() * 1000)}"
    admin(pg_url, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')
    yield with_database(pg_url, name)
    admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def live_url(live_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(
        database_url=live_database,
        data_dir=tmp_path_factory.mktemp("offline-data"),
        storyteller="demo",
        demo_delay_s=1.0,
        card_poll_s=CARD_POLL_S,
        shutdown_grace_s=2,
        allow_open=True,
    )
    with served_over_http(settings) as url:
        yield url


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"shelf-{name}.png"), full_page=True)
    assert not overflows(page), f"{name} is wider than the screen"


def write_and_read(page, base_url: str) -> str:
    """Tap "Write the story", wait for it, open it; the story page's path."""
    job_id = request_story(page)
    page.locator(f"#job-{job_id}.status-completed").wait_for(timeout=STORY_WAIT_MS)
    page.locator(f"#job-{job_id}").get_by_role("link", name="Read the story").click()
    page.wait_for_url(re.compile(r"/stories/\d+$"))
    return page.url.removeprefix(base_url)


def test_a_story_read_before_opens_offline_and_the_shelf_works(browser, live_url):
    context = browser.new_context(viewport=VIEWPORTS["tablet"])
    problems: list[str] = []
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.add_init_script(CSP_WATCH)
    try:
        page.goto(live_url + "/")
        assert page.evaluate(CONTROLLED) is True  # installed, and in charge of the page
        assert page.evaluate("navigator.serviceWorker.controller.scriptURL") == live_url + "/sw.js"

        page.fill("#prompt", "a sleepy owl who lost its hoot")
        page.fill("#child_name", "Mia")
        story_path = write_and_read(page, live_url)
        title = page.locator("h1").inner_text()
        assert page.evaluate(KEPT, story_path) is True  # kept on this device for later
        page.get_by_role("button", name="Favourite").click()
        page.locator("button.favourite[aria-pressed='true']").wait_for()
        shot(page, "story")

        # "What happens next?": the form, filled in, then one tap.
        page.get_by_role("link", name="What happens next?").click()
        page.wait_for_url(re.compile(r"/\?sequel=\d+"))
        assert page.locator("#prompt").input_value() == f"what happens next in “{title}”"
        assert page.locator("#child_name").input_value() == "Mia"
        shot(page, "sequel-form")
        sequel_path = write_and_read(page, live_url)
        # "Continues “…”", the title isolated for direction (<bdi>, named with spaces round it)
        continues = re.compile(r"^“\s*" + re.escape(title) + r"\s*”$")
        assert page.get_by_role("link", name=continues).count() == 1
        shot(page, "sequel")

        # The library: what each was about, the sequel under its story, a quiet menu.
        page.goto(live_url + "/stories")
        rows = page.locator("li.shelf-item")
        assert rows.count() == 2
        assert rows.nth(0).locator("a.shelf-link").get_attribute("href") == story_path
        assert "is-sequel" in rows.nth(1).get_attribute("class")
        # A word of what the sequel was asked ("what happens next in ..."), the first was not.
        page.fill("#q", "happens")
        page.locator(f"#library-results a[href='{story_path}']").wait_for(state="detached")
        assert page.locator("#library-results li.shelf-item").count() == 1
        page.fill("#q", "")
        page.locator(f"#library-results a[href='{story_path}']").wait_for()
        shot(page, "library-search")
        page.fill("#q", "")
        page.locator(f"#library-results a[href='{sequel_path}']").wait_for()
        sequel_row = page.locator("li.shelf-item", has=page.locator(f"a[href='{sequel_path}']"))
        sequel_row.locator("summary").click()
        shot(page, "library-menu")
        sequel_row.get_by_role("button", name="Delete").click()  # htmx: the row says so
        undo = page.get_by_role("button", name="Undo")
        undo.wait_for()
        shot(page, "library-undo")
        undo.click()
        page.locator(f"li.shelf-item a.shelf-link[href='{sequel_path}']").wait_for()
        assert page.locator("li.shelf-gone").count() == 0

        # The Wi-Fi drops: the page says so, calmly; yesterday's story still opens.
        context.set_offline(True)
        page.locator(".offline-note").wait_for()
        shot(page, "library-offline-note")
        page.goto(live_url + story_path)
        assert page.locator("h1").inner_text() == title
        assert page.locator("[data-story-text] p").count() > 2
        assert page.locator(".offline-note").count() == 0  # a story reads the same offline
        shot(page, "offline-story")
        page.goto(live_url + "/")
        assert page.get_by_role("heading", name="You’re offline").is_visible()
        saved = page.locator("[data-saved-stories] a")
        saved.first.wait_for()
        assert title in saved.all_inner_texts()
        shot(page, "offline-home")
        page.get_by_role("link", name=title).click()
        page.wait_for_url(live_url + story_path)
        assert page.locator("h1").inner_text() == title

        context.set_offline(False)  # back: the network answers again, with fresh pages
        page.goto(live_url + "/")
        assert page.get_by_role("heading", name="A story for tonight").is_visible()
    finally:
        context.close()
    assert problems == []


def test_more_stories_grows_the_list_in_place(browser, live_url, live_database):
    async def many() -> None:
        async with connect_pool(live_database) as db:
            await shelve_many(db, 60)

    in_a_thread(many)
    context = browser.new_context(viewport=VIEWPORTS["tablet"])
    try:
        page = context.new_page()
        total = len(page.request.get(live_url + "/stories",
                                     headers={"Accept": "application/json"}).json()["stories"])
        assert total == 60  # more than a page of 50
        page.goto(live_url + "/stories")
        assert page.locator("li.shelf-item").count() == 50
        page.evaluate("window.__sameDocument = true")
        page.get_by_role("link", name="More stories").click()
        page.locator("li.shelf-more").wait_for(state="detached")
        assert page.locator("li.shelf-item").count() == total
        assert page.evaluate("window.__sameDocument") is True  # grown in place, no reload
    finally:
        context.close()


def test_the_shelf_fits_a_phone(browser, live_url, live_database):
    async def one() -> None:
        async with connect_pool(live_database) as db:
            await shelve(JobStore(db), uuid.uuid4().hex, title="The Phone's Own Story")

    in_a_thread(one)
    context = browser.new_context(viewport=VIEWPORTS["phone"])
    try:
        page = context.new_page()
        page.goto(live_url + "/stories")
        first = page.locator("li.shelf-item").first
        title = first.locator(".shelf-title").inner_text()
        first.locator("summary").click()
        shot(page, "phone-library")
        first.get_by_role("button", name="Delete").click()
        page.get_by_role("button", name="Undo").wait_for()
        page.goto(live_url + "/stories/deleted")
        shot(page, "phone-recently-deleted")
        page.get_by_role("button", name=f"Restore “{title}”").click()
        page.wait_for_url(re.compile(r"/stories/deleted(\?restored=\d+)?$"))
        assert page.get_by_text(f"Restored: {title}").is_visible()
        assert page.get_by_text("Nothing else was deleted").is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_saved_story_opened_offline_at_bedtime_follows_night(browser, live_url, size):
    """The page kept is shown in Dark at noon and in Night at 21:00 in the household's zone
    (UTC here, the device elsewhere); an explicit Light choice is kept offline too."""
    context = browser.new_context(viewport=SIZES[size], timezone_id="Asia/Tokyo")
    problems: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.goto(live_url + "/")
        assert page.evaluate(CONTROLLED) is True
        page.fill("#prompt", "a garden that grows at night")
        story_path = write_and_read(page, live_url)
        assert page.evaluate(KEPT, story_path) is True
        page.close()

        context.set_offline(True)
        noon = context.new_page()
        noon.clock.install(time=datetime(2026, 12, 1, 12, 0, tzinfo=UTC))
        noon.goto(live_url + story_path)
        expect(noon.locator("html")).to_have_attribute("data-theme", "dark")
        noon.close()
        night = context.new_page()
        night.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        night.clock.install(time=datetime(2026, 12, 1, 21, 0, tzinfo=UTC))
        night.goto(live_url + story_path)
        expect(night.locator("html")).to_have_attribute("data-theme", "night")
        night.screenshot(path=str(ARTIFACTS / f"shelf-offline-story-at-night-{size}.png"))
        night.goto(live_url + "/stories")  # the offline page, Night too
        night.get_by_role("heading", name="You’re offline").wait_for()
        expect(night.locator("html")).to_have_attribute("data-theme", "night")
        night.screenshot(path=str(ARTIFACTS / f"shelf-offline-page-at-night-{size}.png"))

        context.add_cookies([{"name": "theme", "value": "light", "url": live_url}])
        night.goto(live_url + story_path)
        expect(night.locator("html")).to_have_attribute("data-theme", "light")
        assert problems == []
    finally:
        context.set_offline(False)
        context.close()
