"""A first visit to home after an evening of 10 stories, in Chromium, as bench/bytes.py
measures it: at most 30 KB on the wire (headers included, br/gzip as the browser asks),
a repeat visit at most 5 KB; htmx is fetched only once the page is touched; and a page
rendered just now works out no household clock of its own (a phone's first time-zone
lookup, in shelf.js, cost a tenth of a second of every load). With pictures, the
thumbnails of home's newest stories, below a phone's first screen, come only as they are
scrolled to."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from app.config import DEFAULT
from tests.browser.test_browser_pictures import finished_story
from tests.helpers.browser import app_of_its_own, byte_counters, needs_chromium, served_over_http
from tests.helpers.fake_images import painted
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.waits import WAIT_S

pytestmark = needs_chromium

EVENING = 10
FIRST_VISIT_MAX_BYTES = 30_000
REPEAT_VISIT_MAX_BYTES = 5_000
# Counts the time-zone lookups a page makes (Intl.DateTimeFormat with a timeZone).
COUNT_ZONE_LOOKUPS = """
  window.__zoneLookups = 0;
  const Real = Intl.DateTimeFormat;
  Intl.DateTimeFormat = function (locale, options) {
    if (options && options.timeZone) window.__zoneLookups += 1;
    return new Real(locale, options);
  };
  Intl.DateTimeFormat.prototype = Real.prototype;
  Intl.DateTimeFormat.supportedLocalesOf = Real.supportedLocalesOf;
"""


@pytest.fixture(scope="module")
def evening(pg_url: str, fake_llm_server: FakeLLM,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An evening of 10 stories, written once for the module: its tests only load pages,
    each in a fresh browser context (an empty cache)."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("first-visit"), allow_open=True,
                        storyteller="openai", openai_api_key="test-key",
                        openai_base_url=fake_llm_server.url, story_model="fake-model",
                        card_poll_s=DEFAULT.card_poll_s) as url:
        fake_llm_server.reset()  # whatever a test before left it doing
        try:
            for _ in range(EVENING):
                finished_story(url)
        finally:
            fake_llm_server.reset()  # as the next test's `fake_llm` would find it
        yield url


@pytest.fixture
def evening_with_pictures(settings, fake_llm):
    """An evening of 10 stories, each with its picture drawn (as heavy as a painted one)."""
    fake_llm.images.picture = painted((768, 512), "WEBP")
    drawing = replace(settings, illustrator="openai", image_model="fake-image")
    with served_over_http(drawing) as url:
        story_ids = [finished_story(url) for _ in range(EVENING)]
        with httpx.Client(base_url=url, timeout=10) as client:
            deadline = time.monotonic() + WAIT_S
            for story_id in story_ids:
                while (client.get(f"/stories/{story_id}", headers={"Accept": "application/json"}
                                  ).json()["picture"] or {}).get("status") != "ready":
                    assert time.monotonic() < deadline, f"story {story_id}'s picture"
                    time.sleep(0.05)
        yield url


def visit(page, cdp, url: str) -> dict[str, int]:
    """Bytes received per URL for one load of `url`, everything it fetched by then (the
    listeners of an earlier visit fill that visit's own dictionaries)."""
    urls, received = byte_counters(cdp)
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(300)  # anything the page asks for once it is idle
    return {urls.get(rid, "?"): size for rid, size in received.items()}


@contextlib.contextmanager
def a_phone(browser) -> Iterator[tuple[Any, Any]]:
    """A phone with no service worker (what HTTP caching does is what is counted): its page
    and that page's CDP session, listening to the network."""
    context = browser.new_context(service_workers="block", viewport={"width": 390,
                                                                     "height": 844})
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        yield page, cdp
    finally:
        context.close()


def test_a_first_visit_to_home_fits_in_30_kb_and_a_repeat_in_5(browser, evening):
    with a_phone(browser) as (page, cdp):
        first = visit(page, cdp, evening + "/")
        assert 0 < sum(first.values()) <= FIRST_VISIT_MAX_BYTES, first
        assert not any("htmx" in url for url in first), "htmx before any tap"
        repeat = visit(page, cdp, evening + "/")
        assert 0 < sum(repeat.values()) <= REPEAT_VISIT_MAX_BYTES, repeat

        # A tap, and htmx comes (from /static/), ready for the form.
        page.locator("#prompt").click()
        page.wait_for_function("() => typeof htmx === 'object'")


def test_thumbnails_below_the_first_screen_come_only_when_scrolled_to(
        browser, evening_with_pictures):
    with a_phone(browser) as (page, cdp):
        first = visit(page, cdp, evening_with_pictures + "/")
        assert not [url for url in first if "size=small" in url], first
        assert 0 < sum(first.values()) <= FIRST_VISIT_MAX_BYTES, first
        thumbs = page.locator("#newest-stories img.thumb")
        assert thumbs.count() > 0
        # Scrolled to, each comes, in its place (its box was there all along).
        thumbs.last.scroll_into_view_if_needed()
        page.wait_for_function("""() => [...document.querySelectorAll(
            '#newest-stories img.thumb')].every(img => img.complete && img.naturalWidth > 0)""")


@pytest.mark.parametrize("path", ["/", "/stories"])
def test_a_page_rendered_just_now_makes_no_time_zone_lookup(browser, evening, path):
    context = browser.new_context(timezone_id="America/New_York")  # not the household's
    try:
        page = context.new_page()
        page.add_init_script(COUNT_ZONE_LOOKUPS)
        page.goto(evening + path, wait_until="networkidle")
        assert page.evaluate("window.__zoneLookups") == 0
        # The theme shown is the server's, for the household's clock (UTC here).
        assert page.locator("html").get_attribute("data-theme") == page.locator(
            "html").get_attribute("data-auto-theme")
    finally:
        context.close()
