"""Loose ends of issue 21 in a real browser: a card whose polls fail says so at its top with
its bar stopped, and every control on every page is a tap target of 44 px or more each way
at the phone size.

Debian's chromium through Playwright (tests/helpers/browser.py); screenshots go to
test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import (
    STORY_WAIT_MS,
    VIEWPORTS,
    Watched,
    app_of_its_own,
    needs_chromium,
)

pytestmark = needs_chromium

PASSWORD = "moonbeam"
TAP_MIN_PX = 44
NOTE_WAIT_MS = 20_000  # app.js: three failed polls in a row (3 s apart), then the note
# Every visible control with its size, every <details> opened first (what is inside a
# closed one is tapped only once it is open).
CONTROLS = """() => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  return [...document.querySelectorAll("a, button, summary, input[type=submit], select")]
    .map(e => [e, e.getBoundingClientRect(), getComputedStyle(e)])
    .filter(([e, box, style]) => box.width > 0 && box.height > 0 && style.visibility !== "hidden")
    .map(([e, box]) => ({what: e.outerHTML.slice(0, 90), width: box.width, height: box.height}));
}"""


@pytest.fixture(scope="module")
def open_app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("taps"), allow_open=True) as url:
        yield url


@pytest.fixture(scope="module")
def slow_app(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Stories that take a minute to write: long enough to lose the connection meanwhile."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("slow-taps"), allow_open=True,
                        demo_delay_s=60) as url:
        yield url


@pytest.fixture(scope="module")
def household(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("taps-household"),
                        household_password=PASSWORD) as url:
        yield url


@pytest.fixture
def phone(browser):
    opened = []

    def open_one(url: str) -> Watched:
        opened.append(browser.new_context(viewport=VIEWPORTS["phone"]))
        return Watched(opened[-1], url)

    yield open_one
    for context in opened:
        context.close()


def write(page, prompt: str):
    page.fill("#prompt", prompt)
    page.get_by_role("button", name="Write the story").click()
    card = page.locator("#jobs .job-card", has_text=prompt).first
    card.wait_for(state="attached")
    return card


def finished(page, url: str, prompt: str, start: str = "/") -> tuple[str, str]:
    """Write a story from `start`; (its job page's path, its story's path)."""
    page.goto(url + start)
    card = write(page, prompt)
    job = "/stories/jobs/" + card.get_attribute("id").removeprefix("job-")
    link = card.get_by_role("link", name="Read the story")
    link.wait_for(timeout=STORY_WAIT_MS)
    return job, link.get_attribute("href")


def too_small(page) -> list[dict]:
    return [control for control in page.evaluate(CONTROLS)
            if control["height"] < TAP_MIN_PX - 0.01 or control["width"] < TAP_MIN_PX - 0.01]


def test_a_card_that_lost_its_connection_says_so_at_its_top_with_its_bar_stopped(
    phone, slow_app
):
    page = phone(slow_app).page
    page.goto(slow_app + "/")
    card = write(page, "a fox who counts the stars")
    bar = card.locator("progress")
    bar.wait_for()
    page.route("**/stories/jobs/*", lambda route: route.abort())  # the app went away
    try:
        note = card.locator("[data-reconnecting][role=status]")
        expect(note).to_contain_text("Connection lost", timeout=NOTE_WAIT_MS)
        expect(note).to_be_visible()
        assert card.evaluate("card => card.firstElementChild.matches('[data-reconnecting]')")
        note_box, prompt_box = note.bounding_box(), card.locator(".job-prompt").bounding_box()
        assert note_box["y"] < prompt_box["y"]  # above the prompt, the draft and the bar
        assert note_box["height"] >= 40  # a notice, not a hint in small print
        value = bar.evaluate("bar => bar.value")
        page.wait_for_timeout(1500)
        assert bar.evaluate("bar => bar.value") == value  # stopped, not creeping on
        assert float(bar.evaluate("bar => getComputedStyle(bar).opacity")) < 0.6
        page.screenshot(path="test-artifacts/phone-card-connection-lost.png", full_page=True)
    finally:
        page.unroute("**/stories/jobs/*")
    expect(note).to_have_count(0, timeout=NOTE_WAIT_MS)  # the next good answer: as it was
    assert float(bar.evaluate("bar => getComputedStyle(bar).opacity")) == 1


def test_every_control_is_a_tap_target_of_44_px_each_way_on_a_phone(phone, open_app, household):
    watched = phone(open_app)
    page = watched.page
    job, story = finished(page, open_app, "a hedgehog's lantern walk")
    story_id = story.rsplit("/", 1)[1]
    _, sequel = finished(page, open_app, "what the hedgehog found", start=f"/?sequel={story_id}")
    _, gone = finished(page, open_app, "a raincloud that wanted to be a pillow")
    page.goto(open_app + gone)
    page.locator(".story-foot details.confirm > summary").click()
    page.get_by_role("button", name="Yes, delete it").click()
    page.wait_for_url(f"**/stories?deleted={gone.rsplit('/', 1)[1]}")

    pages = {
        "home": "/", "home-sequel-form": f"/?sequel={story_id}", "library": "/stories",
        "library-no-match": "/stories?q=zzzqqq", "story": story, "story-sequel": sequel,
        "job": job, "recently-deleted": "/stories/deleted", "deleted-story": gone,
    }
    small: dict[str, list[dict]] = {}
    for name, path in pages.items():
        page.goto(open_app + path)
        page.screenshot(path=f"test-artifacts/phone-taps-{name}.png", full_page=True)
        small[name] = too_small(page)
    login = phone(household).page
    login.goto(household + "/login")
    login.screenshot(path="test-artifacts/phone-taps-login.png", full_page=True)
    small["login"] = too_small(login)
    assert {name: found for name, found in small.items() if found} == {}
    # The deleted story's own page: its title, the day it went and a Restore that works.
    page.goto(open_app + gone)
    expect(page.get_by_text("This story was deleted on")).to_be_visible()
    page.get_by_role("button", name="Restore").click()
    page.wait_for_url(open_app + gone)
    expect(page.locator("[data-story-text]")).to_be_visible()
