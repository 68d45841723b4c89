"""The screen stays on while a story is on screen: a card's story once written, a job
page opened later, until the page is hidden or 30 minutes pass (taken again, for another
30, when the page comes back with the story still there). The story page's own toggle and
the shared page's reading aloud: tests/browser/test_browser_read_along.py and
test_browser_shares.py. Headless Chromium has no screen to keep on: the page is given a
wake lock that notes what it is asked (tests/helpers/browser.py's WAKE_LOCK_STUB), and a
clock the test moves (Playwright's page.clock)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.helpers.browser import WAKE_LOCK_STUB, app_of_its_own, needs_chromium
from tests.helpers.waits import HTTP_TIMEOUT_S, WAIT_S

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("screen-on"), allow_open=True,
                        worker_concurrency=1) as url:
        yield url


def written_job(url: str) -> int:
    """A story written by the demo storyteller, through the API; its job's id."""
    with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as http:
        answer = http.post("/stories/generate", json={"prompt": "a snail's slow parade"},
                           headers={"Idempotency-Key": uuid.uuid4().hex})
        job_id = answer.json()["job_id"]
        for _ in range(int(WAIT_S * 20)):
            if http.get(f"/stories/jobs/{job_id}",
                        headers={"Accept": "application/json"}).json()["status"] == "completed":
                return int(job_id)
            time.sleep(0.05)
    raise AssertionError("the story was not written")


def test_a_finished_story_s_page_keeps_the_screen_on_for_30_minutes(open_page, app):
    job_id = written_job(app)
    page = open_page(app, "phone").page
    page.add_init_script(WAKE_LOCK_STUB)
    page.clock.install()
    page.goto(f"{app}/stories/jobs/{job_id}")
    expect(page.locator(".job-story")).to_be_visible()
    html = page.locator("html")
    expect(html).to_have_attribute("data-wake", "held")
    page.clock.fast_forward("29:00")
    expect(html).to_have_attribute("data-wake", "held")
    page.clock.fast_forward("01:05")
    expect(html).to_have_attribute("data-wake", "free")  # 30 minutes: let go
    # Back into view with the story still there: another 30 minutes.
    page.evaluate("window.__hide(); window.__show()")
    expect(html).to_have_attribute("data-wake", "held")
    page.evaluate("window.__hide()")
    expect(html).to_have_attribute("data-wake", "free")  # hidden: let go
    assert page.evaluate("window.__wake") == ["request screen", "release"] * 2


def test_a_page_without_a_story_on_screen_takes_no_lock(open_page, app):
    page = open_page(app, "phone").page
    page.add_init_script(WAKE_LOCK_STUB)
    page.goto(f"{app}/stories", wait_until="networkidle")
    page.goto(f"{app}/stories/jobs/{written_job(app)}")  # wake.js loaded, and working
    expect(page.locator("html")).to_have_attribute("data-wake", "held")
    page.goto(f"{app}/children", wait_until="networkidle")
    assert page.evaluate("window.__wake") == []


def test_the_home_page_loads_its_reading_tools_only_once_a_card_needs_them(open_page, app):
    """An evening's home (finished requests, a line each) is lighter without wake.js and
    reading.js; they come with the first card that writes or shows a story."""
    written_job(app)
    page = open_page(app, "phone").page
    page.add_init_script(WAKE_LOCK_STUB)
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(f"{app}/", wait_until="networkidle")
    expect(page.locator("#jobs .job-compact").first).to_be_visible()
    expect(page.locator("#jobs .job-card:not(.job-compact)")).to_have_count(0)
    assert not [url for url in fetched if "/wake.js" in url or "/reading.js" in url], fetched
    page.fill("#prompt", "a hedgehog who bakes bread")
    page.get_by_role("button", name="Write the story").click()
    # wake.js came: after htmx, the post and the card's first answer, seconds on a busy
    # machine (past expect's own 5 s once in a full run on two cores).
    expect(page.locator("html")).to_have_attribute("data-wake", "held", timeout=WAIT_S * 1000)
    assert [url for url in fetched if "/reading.js" in url]
