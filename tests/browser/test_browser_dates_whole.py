"""A date and time stay on one line on a phone, in English and in Arabic: the library's
rows and "Not finished yet" broke them where the line ran out ("7 December" / "2026,
18:42"; in Arabic "… 6:44" / "م", the time's "p.m." alone on a line). Whatever the names
before them, a row's date goes whole to the next line instead. Screenshots in
test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from playwright.sync_api import expect

from app.db import connect_pool
from app.queue.store import JobStore
from tests.helpers.browser import needs_chromium, served_over_http
from tests.helpers.database import in_a_thread
from tests.helpers.jobs import cut_short
from tests.helpers.shelving import shelve

pytestmark = needs_chromium

# Names of every length, so that the rows' lines run out at every point of their dates.
NAMES = ["Al", "Mia", "ليلى", "Sofia", "Olivia", "عبد الله", "Isabella", "Maximilian",
         "نور الهدى", "Bartholomew", "عبد الرحمن", "Anastasia Rose", "Christopher John"]

# The dates shown that take more than one line (their box taller than the tallest of their
# pieces: right to left, each run of digits is a piece of its own on the same line).
BROKEN = """() => [...document.querySelectorAll("main time")].filter((t) => {
  const line = Math.max(...[...t.getClientRects()].map((r) => r.height));
  return t.getBoundingClientRect().height > 1.5 * line;
}).map((t) => t.textContent)"""


@pytest.fixture
def shelf(settings) -> Iterator[str]:
    """A story for each child, and a story cut short for each (no worker); the app's URL."""
    async def arrange() -> None:
        db = connect_pool(settings.database_url)
        await db.connect()
        try:
            store = JobStore(db)
            for n, name in enumerate(NAMES):
                await shelve(store, f"night-{n}", prompt="an owl", child_name=name, age=5,
                             title="The Owl Who Counted the Stars")
                await cut_short(store, f"a moth {'who reads ' * (n % 4)}by moonlight",
                                "The Moth\n\nOnce upon a time a moth read.", child_name=name)
        finally:
            await db.close()

    with served_over_http(replace(settings, illustrator="off", worker_concurrency=0)) as url:
        in_a_thread(arrange)
        yield url


@pytest.mark.parametrize("language", ["en", "ar"])
def test_the_library_s_dates_stay_whole_on_a_phone(open_page, shelf, language):
    watched = open_page(shelf, "phone", extra_http_headers={"Accept-Language": language})
    page = watched.page
    page.goto(shelf + "/stories")
    expect(page.locator("#unfinished time")).to_have_count(len(NAMES))
    assert page.locator("main .shelf time").count() >= len(NAMES)
    assert page.evaluate(BROKEN) == []
    watched.shot(f"dates-whole-library-{language}-phone")
    assert watched.problems == []
