"""The lows of an evening at the three sizes (issue 54, item 6): nothing runs off a phone's
edge or is cut (the idea chips, the newest stories' days, the sleep timer), a one-tap
button says what tonight's story is about, a story cut short waits on the first screen of
home, and the file button of "Import a backup" takes the theme's colours in Night.
Screenshots in test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from playwright.sync_api import expect

from app.db import connect_pool
from app.queue.store import JobStore
from tests.helpers.browser import SIZES, SLOW_SPEECH, needs_chromium, served_over_http
from tests.helpers.database import in_a_thread
from tests.helpers.jobs import cut_short
from tests.helpers.shelving import shelve
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = needs_chromium

CUT_SHORT_IDEA = "a moth who reads by moonlight"


def an_evening_on_the_shelf(database_url: str) -> None:
    """A story cut short, then six finished ones for Mia and Leo (the last three the home
    page's cards, the rest its newest stories), as the worker leaves them."""
    async def arrange() -> None:
        db = connect_pool(database_url)
        await db.connect()
        try:
            store = JobStore(db)
            await cut_short(store, CUT_SHORT_IDEA, "Once upon a time a moth read. " * 20)
            for n in range(6):
                await shelve(store, f"evening-{n}", prompt="an owl",
                             child_name=("Mia", "Leo")[n % 2],
                             title=f"The Owl Who Counted the Stars, {n}")
        finally:
            await db.close()
    in_a_thread(arrange)


@pytest.fixture
def evening(settings) -> Iterator[str]:
    """The household's app (no worker: nothing but the arranged rows moves), Mia and Leo
    with a one-tap button each, and an evening on the shelf; its URL."""
    with served_over_http(replace(settings, illustrator="off", worker_concurrency=0)) as url:
        with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as http:
            for name in ("Mia", "Leo"):
                assert http.post("/children", json={"name": name, "age": 5}).status_code == 201
        an_evening_on_the_shelf(settings.database_url)
        yield url


def cut_or_off_screen(page, selector: str) -> list[str]:
    """The elements under `selector` that are cut (their content wider than their box, or
    hidden) or reach past the screen's sides."""
    return page.evaluate("""(selector) => {
      const width = document.documentElement.clientWidth;
      return [...document.querySelectorAll(selector)].flatMap((el) => {
        const box = el.getBoundingClientRect();
        const wrong = [];
        if (box.width === 0 || box.height === 0) wrong.push("not shown");
        if (box.left < -0.5 || box.right > width + 0.5) {
          wrong.push(`${box.left}-${box.right} of ${width}`);
        }
        if (el.scrollWidth > el.clientWidth + 1) {
          wrong.push(`${el.scrollWidth} in ${el.clientWidth}`);
        }
        const name = `${el.className || el.tagName} "${el.textContent.trim()}"`;
        return wrong.length ? [`${name}: ${wrong}`] : [];
      });
    }""", selector)


@pytest.mark.parametrize("size", list(SIZES))
def test_home_fits_the_screen_and_says_what_each_tap_will_write(open_page, evening, size):
    watched = open_page(evening, size)
    page = watched.page
    page.goto(evening + "/")
    # The idea chips wrap within the form: none off the edge, none cut. On a phone the
    # one-tap buttons' own ideas take their place (the page stays within 2.5 screens).
    if size == "phone":
        expect(page.locator(".ideas")).to_be_hidden()
    else:
        expect(page.locator(".ideas .chip").first).to_be_visible()
        assert cut_or_off_screen(page, ".ideas, .ideas .chip") == []
    # Each of the newest stories says whom it was for and its day, whole.
    days = page.locator("#newest-stories li time")
    expect(days).to_have_count(3)
    assert cut_or_off_screen(page, "#newest-stories .meta, #newest-stories time") == []
    # Each one-tap button says what tonight's story is about: the idea its tap sends.
    buttons = page.locator(".child-buttons form")
    expect(buttons).to_have_count(3)  # Mia, Leo, and both together
    for index in range(3):
        button = buttons.nth(index)
        idea = button.locator("input[name=prompt]").get_attribute("value")
        assert idea
        expect(button.locator(".one-tap-idea")).to_have_text(idea)
        expect(button.locator(".one-tap-idea")).to_be_visible()
    assert cut_or_off_screen(page, ".one-tap-idea") == []
    if size != "phone":  # whole; a phone shows two lines of it (six buttons, a third of it)
        assert page.locator(".one-tap-idea").evaluate_all(
            "ideas => ideas.filter(i => i.scrollHeight > i.clientHeight + 1).length") == 0
    # The story cut short waits on the first screen, with its Finish in reach.
    finish = page.locator("#unfinished li", has_text=CUT_SHORT_IDEA).get_by_role(
        "button", name="Finish")
    expect(finish).to_be_in_viewport(ratio=1)
    watched.shot(f"small-screens-home-{size}")  # no wider than the screen
    assert watched.problems == []


def test_the_idea_chips_wrap_within_a_phone(open_page, settings):
    """With no profiles (no one-tap buttons), a phone shows every idea, wrapped."""
    with served_over_http(replace(settings, worker_concurrency=0)) as url:
        watched = open_page(url, "phone")
        page = watched.page
        page.goto(url + "/")
        chips = page.locator(".ideas .chip")
        expect(chips.first).to_be_visible()
        assert all(chips.nth(i).is_visible() for i in range(chips.count()))
        assert cut_or_off_screen(page, ".ideas, .ideas .chip") == []
        watched.shot("small-screens-ideas-phone")
        assert watched.problems == []


@pytest.mark.parametrize("language", ["en", "es", "ar"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_sleep_timer_is_never_cut(open_page, evening, size, language):
    watched = open_page(evening, size, extra_http_headers={"Accept-Language": language})
    page = watched.page
    page.add_init_script(SLOW_SPEECH)
    page.goto(evening + "/stories/1")
    page.locator(".reading-tools [data-speak=start]").click()
    bar = page.locator(".reading-tools [data-read-bar]")
    expect(bar).to_be_visible()
    # The timer's choice as wide as its words need (a copy of it, free to take its own
    # width, measures them), and every control on the screen.
    needed, has = page.locator(".reading-tools [data-sleep]").evaluate("""(timer) => {
      const copy = timer.cloneNode(true);
      copy.style.cssText = "position: absolute; width: auto; max-width: none; flex: none";
      timer.parentNode.append(copy);
      const needed = copy.getBoundingClientRect().width;
      copy.remove();
      return [needed, timer.getBoundingClientRect().width];
    }""")
    assert needed <= has + 0.5, f"the sleep timer needs {needed} px and has {has}"
    assert cut_or_off_screen(
        page, ".reading-tools [data-read-bar] > :not([hidden]):not(.no-voice)") == []
    watched.shot(f"small-screens-sleep-timer-{language}-{size}")
    assert watched.problems == []


def test_the_import_button_takes_night_s_colours(open_page, evening):
    watched = open_page(evening, "tablet")
    page = watched.page
    page.context.add_cookies([{"name": "theme", "value": "night", "url": evening}])
    page.goto(evening + "/stories")
    expect(page.locator("html")).to_have_attribute("data-theme", "night")
    file_button, app_button = page.evaluate("""() => {
      const look = (style) => [style.backgroundColor, style.color, style.borderTopColor];
      return [look(getComputedStyle(document.querySelector("#backup-file"),
                                    "::file-selector-button")),
              look(getComputedStyle(document.querySelector(".import-form button")))];
    }""")
    # As the app's own buttons are, not the browser's light grey slab.
    assert file_button == app_button
    watched.shot("small-screens-import-night")
    assert watched.problems == []


def test_dollars_read_us_dollar_in_an_arabic_page(open_page, settings):
    """Arabic writes "US$" after the amount; right to left, the bidi algorithm gave the "$"
    the line's direction and the reader saw "$US"."""
    with served_over_http(replace(settings, monthly_budget_micros=5_000_000)) as url:
        watched = open_page(url, "phone", extra_http_headers={"Accept-Language": "ar"})
        page = watched.page
        page.goto(url + "/spend")
        expect(page.locator("html")).to_have_attribute("dir", "rtl")
        order = page.locator(".spend-total bdi").last.evaluate("""(amount) => {
          const text = amount.firstChild, at = text.data.indexOf("US$");
          const left = (i) => {
            const range = document.createRange();
            range.setStart(text, i);
            range.setEnd(text, i + 1);
            return range.getBoundingClientRect().left;
          };
          return [left(at), left(at + 1), left(at + 2)];  // U, S, $
        }""")
        assert order == sorted(order), f"U, S and $ at {order}: it reads \"$US\""
        assert watched.problems == []
