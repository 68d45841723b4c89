"""Share… on an Arabic page, right to left: its panel opens under its button wherever the
story's tools put it (the row's end on a tablet, where the Arabic tools fit on one line),
and the link in it reads from its start ("http://…"), as a link is written, not from its
end cut mid-word. English alongside, as a check that nothing moved for it.
Screenshots in test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from playwright.sync_api import expect

from app.db import connect_pool
from app.queue.store import JobStore
from tests.helpers.browser import SIZES, needs_chromium, served_over_http
from tests.helpers.database import in_a_thread
from tests.helpers.shelving import shelve

pytestmark = needs_chromium

STORY = ("ليلى والقمر", "في مساء هادئ، حين طلع القمر مستديرًا فضيًا، كان ليلى يستعد للنوم.\n\n"
                       "ثم نام نومًا هادئًا. تصبح على خير.")


@pytest.fixture
def arabic_story(settings) -> Iterator[str]:
    """An Arabic story on the shelf (no worker, no picture); its page's URL."""
    shelved: list[int] = []

    async def arrange() -> None:
        db = connect_pool(settings.database_url)
        await db.connect()
        try:
            shelved.append(await shelve(JobStore(db), "moon", prompt="قطة تبحث عن القمر",
                                        title=STORY[0], body=STORY[1], language="ar"))
        finally:
            await db.close()

    with served_over_http(replace(settings, illustrator="off", worker_concurrency=0)) as url:
        in_a_thread(arrange)
        yield f"{url}/stories/{shelved[0]}"


def shared(open_page, url: str, size: str, language: str):
    """The story's page with Share… open and a link made."""
    watched = open_page(url, size, extra_http_headers={"Accept-Language": language})
    page = watched.page
    page.goto(url)
    expect(page.locator("html")).to_have_attribute("lang", language)
    page.locator(".share-menu > summary").click()
    page.locator("form[data-share-make] button").click()
    expect(page.locator("[data-share-url]")).to_be_visible()
    return watched


@pytest.mark.parametrize("language", ["ar", "en"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_share_panel_opens_under_its_button(open_page, arabic_story, size, language):
    watched = shared(open_page, arabic_story, size, language)
    page = watched.page
    button = page.locator(".share-menu > summary").bounding_box()
    panel = page.locator(".share-panel").bounding_box()
    assert button and panel
    assert panel["x"] <= button["x"] + 1, (button, panel)
    assert panel["x"] + panel["width"] >= button["x"] + button["width"] - 1, (button, panel)
    assert panel["y"] >= button["y"] + button["height"]
    watched.shot(f"share-rtl-panel-{language}-{size}")
    assert watched.problems == []


@pytest.mark.parametrize("size", list(SIZES))
def test_the_link_reads_from_its_start_on_an_arabic_page(open_page, arabic_story, size):
    watched = shared(open_page, arabic_story, size, "ar")
    link = watched.page.locator("[data-share-url]")
    assert link.input_value().startswith("http://")
    # Laid left to right, as a link is: its start in view (the box is narrower than the
    # link on a phone and a tablet), not its end with the start cut off.
    assert link.evaluate("input => getComputedStyle(input).direction") == "ltr"
    assert link.evaluate("input => input.scrollLeft") == 0
    assert watched.problems == []
