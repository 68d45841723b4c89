"""The household's language in a real browser: an evening in Arabic at the three sizes,
right to left, with nothing overlapping or cut off; an evening in Spanish; and a Polish
grandmother's shared page. Screenshots of each go to test-artifacts/."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from app.i18n import gettext, speaking
from tests.helpers.browser import (
    ARTIFACTS,
    SIZES,
    STORY_WAIT_MS,
    app_of_its_own,
    needs_chromium,
    overflows,
)
from tests.helpers.waits import HTTP_TIMEOUT_S, json_when

pytestmark = needs_chromium

# What a page shows a reader, as boxes: the header's parts, and every control, heading and
# line of text in the page's main part that is on screen.
BOXES = """
  () => {
    const picked = [...document.querySelectorAll(
      "header .brand, header nav a, header nav summary, header .reading-menu > summary, " +
      "main h1, main h2, main label, main legend, main button, main a.button, main a.more, " +
      "main a.chip, main input:not([type=hidden]), main select, main textarea, main p")];
    return picked.map((el) => {
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      const shown = r.width > 0 && r.height > 0 && style.visibility !== "hidden" &&
        !el.closest("[hidden]") && !el.closest("details:not([open]) > :not(summary)") &&
        !el.closest(".visually-hidden, .skip-link");
      let scroller = false;  // in a row that scrolls sideways (the phone's idea chips)
      for (let p = el.parentElement; p; p = p.parentElement) {
        if (["auto", "scroll"].includes(getComputedStyle(p).overflowX)) scroller = true;
      }
      return {tag: el.tagName, text: (el.textContent || el.value || "").trim().slice(0, 40),
              x: r.left, y: r.top, w: r.width, h: r.height, shown, scroller,
              clipped: el.scrollWidth > el.clientWidth + 1 && style.overflowX === "hidden"};
    }).filter((b) => b.shown);
  }
"""
# Which of two boxes holds the other (an <a> in a <p>): those may overlap.
NESTED = """
  () => {
    const picked = [...document.querySelectorAll(
      "header .brand, header nav a, header nav summary, header .reading-menu > summary, " +
      "main h1, main h2, main label, main legend, main button, main a.button, main a.more, " +
      "main a.chip, main input:not([type=hidden]), main select, main textarea, main p")]
      .filter((el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 &&
        getComputedStyle(el).visibility !== "hidden" && !el.closest("[hidden]") &&
        !el.closest("details:not([open]) > :not(summary)") &&
        !el.closest(".visually-hidden, .skip-link"); });
    const pairs = [];
    picked.forEach((a, i) => picked.forEach((b, j) => {
      if (i < j && (a.contains(b) || b.contains(a))) pairs.push([i, j]);
    }));
    return pairs;
  }
"""


def laid_out_well(page, where: str) -> None:
    """Nothing cut off at the screen's sides, and no two things on top of each other."""
    assert not overflows(page), f"{where}: wider than the screen"
    width = page.evaluate("window.innerWidth")
    boxes = page.evaluate(BOXES)
    nested = {tuple(pair) for pair in page.evaluate(NESTED)}
    for box in boxes:
        if box["scroller"]:
            continue  # reached by scrolling its row, in either direction
        assert box["x"] >= -1 and box["x"] + box["w"] <= width + 1, (where, box)
        assert not box["clipped"], (where, box)
    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            if (i, j) in nested:
                continue
            across = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
            down = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
            assert across <= 1 or down <= 1, (where, a, b)


def reads_right_to_left(page) -> None:
    """The header starts at the right: the name of the app right of its links, and the
    first link right of the second; a heading's text starts at its right edge."""
    assert page.evaluate("document.documentElement.dir") == "rtl"
    brand = page.locator("header .brand").bounding_box()
    links = page.locator("header nav a")
    first, second = links.nth(0).bounding_box(), links.nth(1).bounding_box()
    if abs(first["y"] - brand["y"]) < brand["height"]:  # on one line (tablet)
        assert brand["x"] > first["x"]
    assert first["x"] > second["x"]
    assert page.evaluate("getComputedStyle(document.querySelector('main h1')).direction") == "rtl"


@pytest.fixture(scope="module")
def households(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One app, the demo storyteller (quick) with its pictures, two children, a budget."""
    with app_of_its_own(pg_url, tmp_path_factory.mktemp("languages"), allow_open=True,
                        demo_delay_s=0.6, daily_story_limit=100, queue_max=20,
                        illustrator="demo", monthly_budget_micros=5_000_000) as url:
        for child in ({"name": "ليلى", "age": 5, "language": "ar"},
                      {"name": "Lucía", "age": 6, "language": "es"}):
            answer = httpx.post(url + "/children", json=child, timeout=HTTP_TIMEOUT_S)
            assert answer.status_code == 201, answer.text
        yield url


def write_a_story(page, child: str) -> None:
    """One tap for `child`, then the story's own page once it is written."""
    page.locator("ul.child-buttons li:not(.sibling-button) button", has_text=child).click()
    page.locator(".job-card.status-completed a.button.primary").first.wait_for(
        timeout=STORY_WAIT_MS)
    page.locator(".job-card.status-completed a.button.primary").first.click()
    page.wait_for_url("**/stories/*")


@pytest.mark.parametrize("size", list(SIZES))
def test_an_evening_in_arabic_reads_right_to_left_and_nothing_overlaps(
    open_page, households, size
):
    watched = open_page(households, size, locale="ar", extra_http_headers={
        "Accept-Language": "ar"})
    page = watched.page
    page.goto(households + "/")
    reads_right_to_left(page)
    with speaking("ar"):
        assert page.locator("h1").first.inner_text() == gettext("A story for tonight")
    laid_out_well(page, f"ar {size} home")
    watched.shot(f"languages-ar-{size}-home")

    write_a_story(page, "ليلى")
    reads_right_to_left(page)
    title = page.locator("#story-title")
    assert title.get_attribute("lang") == "ar"
    laid_out_well(page, f"ar {size} story")
    watched.shot(f"languages-ar-{size}-story")

    for path, name in (("/stories", "library"), ("/spend", "spend"), ("/children", "children")):
        page.goto(households + path)
        reads_right_to_left(page)
        laid_out_well(page, f"ar {size} {name}")
        watched.shot(f"languages-ar-{size}-{name}")
    assert not watched.problems, watched.problems


def test_an_evening_in_spanish(open_page, households):
    watched = open_page(households, "tablet", locale="es-ES",
                        extra_http_headers={"Accept-Language": "es-ES,es;q=0.9"})
    page = watched.page
    page.goto(households + "/")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == [
        "es", "ltr"]
    assert page.get_by_role("button", name="Escribir el cuento").is_visible()
    # The scripts speak it too: the idea's counter, as app.js rewrites it while typing.
    page.locator("#prompt").fill("un búho")
    assert page.locator("[data-char-count]").inner_text() == "7 de 500 caracteres"
    laid_out_well(page, "es home")
    watched.shot("languages-es-tablet-home")
    write_a_story(page, "Lucía")
    laid_out_well(page, "es story")
    watched.shot("languages-es-tablet-story")
    page.goto(households + "/stories")
    watched.shot("languages-es-tablet-library")
    page.goto(households + "/spend")
    laid_out_well(page, "es spend")
    watched.shot("languages-es-tablet-spend")
    assert not watched.problems, watched.problems


def test_a_polish_grandmothers_shared_page(open_page, households):
    # A story of its own: the module's other tests may have run on another worker, with
    # another app.
    asked = httpx.post(households + "/stories/generate", json={"prompt": "a snail at sea"},
                       headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=HTTP_TIMEOUT_S)
    assert asked.status_code == 202, asked.text
    job = json_when(households + asked.json()["poll_url"],
                    lambda job: job["status"] not in ("pending", "running"), "the story")
    assert job["status"] == "completed", job
    made = httpx.post(households + f"/stories/{job['story_id']}/share", json={},
                      headers={"Accept": "application/json"}, timeout=HTTP_TIMEOUT_S)
    assert made.status_code == 201, made.text
    watched = open_page(households, "phone", locale="pl-PL",
                        extra_http_headers={"Accept-Language": "pl-PL,pl;q=0.9,en;q=0.5"})
    page = watched.page
    page.goto(households + made.json()["url"])
    assert page.evaluate("document.documentElement.lang") == "pl"
    with speaking("pl"):
        assert page.get_by_role("button", name=gettext("Read aloud")).count() == 1
    laid_out_well(page, "pl shared")
    watched.shot("languages-pl-phone-shared")
    assert ARTIFACTS.joinpath("languages-pl-phone-shared.png").exists()
