"""Share… as a parent finds it: among the story's tools at the top of its page, its panel
floating over the words (none of them moves when it opens or a link comes); a second Share…
on the same device offers the link it made before (no new link in the database) while the
server still lists it, and a new one once that is stopped; Stop sharing asks first; and
without JavaScript the menu's form still makes a link. At the three sizes."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

import asyncpg
import pytest
from playwright.sync_api import expect

from tests.browser.test_browser_pictures import finished_story
from tests.helpers.browser import ARTIFACTS, SIZES, needs_chromium, served_over_http

pytestmark = needs_chromium


def share_rows(database_url: str, story_id: int) -> int:
    async def count() -> int:
        conn = await asyncpg.connect(database_url)
        try:
            rows: int = await conn.fetchval(
                "SELECT count(*) FROM story_shares WHERE story_id = $1", story_id)
            return rows
        finally:
            await conn.close()

    # From a thread: Playwright's loop runs in this one.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, count()).result()


def first_line_top(page) -> float:
    top: float = page.evaluate("document.querySelector('.story-text p')"
                               ".getBoundingClientRect().top + window.scrollY")
    return top


@pytest.fixture
def story(settings, fake_llm):
    with served_over_http(settings) as url:
        yield url, finished_story(url)


@pytest.mark.parametrize("size", list(SIZES))
def test_a_second_share_offers_the_same_link_and_stop_asks_first(browser, story, database_url,
                                                                 size):
    url, story_id = story
    context = browser.new_context(viewport=SIZES[size])
    try:
        page = context.new_page()
        page.goto(f"{url}/stories/{story_id}", wait_until="networkidle")
        share = page.locator(".reading-tools .share-menu > summary")
        expect(share).to_have_text("Share…")
        # Beside the story's other tools, above its title, in the first screen.
        assert share.bounding_box()["y"] < page.locator("h1").bounding_box()["y"]
        assert share.bounding_box()["y"] + 48 < SIZES[size]["height"]
        words_at = first_line_top(page)

        share.click()
        make = page.get_by_role("button", name="Make a link")
        expect(make).to_be_visible()
        make.click()
        link = page.locator("[data-share-url]")
        expect(link).to_have_value(re.compile(rf"^{re.escape(url)}/shared/[A-Za-z0-9_-]{{22,}}$"))
        made = link.input_value()
        assert share_rows(database_url, story_id) == 1
        assert first_line_top(page) == words_at  # the panel floats: the words stay put
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
        page.screenshot(path=str(ARTIFACTS / f"share-menu-{size}.png"))

        # The menu closed, then Share… again, and on a fresh load of the page: the same link.
        share.click()
        expect(link).to_be_hidden()
        share.click()
        expect(link).to_have_value(made)
        page.reload(wait_until="networkidle")
        share.click()
        expect(link).to_have_value(made)
        expect(page.get_by_role("button", name="Make a link")).to_be_hidden()
        assert share_rows(database_url, story_id) == 1  # nothing new made

        # Stop sharing asks first; once stopped, the next Share… makes another link.
        confirm = page.get_by_role("button", name="Yes, stop sharing")
        expect(confirm).to_be_hidden()
        page.locator(".share-stop > summary").click()
        expect(confirm).to_be_visible()
        page.locator(".share-stop > summary").click()  # "Keep sharing"
        expect(confirm).to_be_hidden()
        page.locator(".share-stop > summary").click()
        confirm.click()
        expect(page.locator(".share-list li")).to_have_count(0)
        page.reload(wait_until="networkidle")
        share.click()
        page.get_by_role("button", name="Make a link").click()
        expect(link).to_have_value(re.compile(r"/shared/"))
        assert link.input_value() != made
        assert share_rows(database_url, story_id) == 2
        assert first_line_top(page) == words_at
    finally:
        context.close()


def test_without_javascript_the_menu_still_makes_a_link(browser, story, database_url):
    url, story_id = story
    context = browser.new_context(viewport=SIZES["phone"], java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{url}/stories/{story_id}")
        page.locator(".share-menu > summary").click()
        page.get_by_role("button", name="Make a link").click()
        page.wait_for_load_state()
        link = page.locator("[data-share-url]")
        expect(link).to_be_visible()  # the menu comes back open, the link in it
        assert re.search(r"/shared/[A-Za-z0-9_-]{22,}$", link.input_value())
        assert share_rows(database_url, story_id) == 1
    finally:
        context.close()
