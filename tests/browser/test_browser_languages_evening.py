"""An evening as a family has it, in Spanish, Arabic, Ukrainian and Japanese, at the three
sizes: home, a
card while its story is written, the finished story, the library, the budget page, the
form closed for the night (a refusal) and the offline page, each laid out well and with no
English left; and a Polish grandmother's shared page. The screenshots go to
test-artifacts/languages/ (tools/language_screenshots.py makes them alone). make test runs
Arabic's evening on the tablet; the other evenings are variants (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.i18n import gettext, speaking
from app.stories import text_language
from tests.browser.test_browser_languages import laid_out_well, reads_right_to_left
from tests.helpers.browser import ARTIFACTS, SIZES, STORY_WAIT_MS, app_of_its_own, needs_chromium
from tests.helpers.languages import english_left
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = needs_chromium

SHOTS = ARTIFACTS / "languages"
CHILDREN = {"es": {"name": "Lucía", "age": 6, "likes": "los zorros y la luna",
                   "companions": "Pip, un dinosaurio verde"},
            "ar": {"name": "ليلى", "age": 5, "likes": "القطط والنجوم",
                   "companions": "بيب، ديناصور أخضر صغير"},
            "uk": {"name": "Оксана", "age": 5, "likes": "лисички й місяць",
                   "companions": "Піп, маленький зелений динозаврик"},
            "ja": {"name": "ゆい", "age": 4, "likes": "きつねとお月さま",
                   "companions": "ピップ、小さなみどりの恐竜"}}
# Their pages are not written in Latin letters: three Latin words in a row are English.
NOT_LATIN = ("ar", "uk", "ja")


@pytest.fixture
def evening(pg_url: str, tmp_path: Path, language: str) -> Iterator[str]:
    """A household in `language`, with its child, and one story a night."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    with app_of_its_own(pg_url, tmp_path, allow_open=True, demo_delay_s=2.0,
                        daily_story_limit=1, illustrator="demo",
                        monthly_budget_micros=5_000_000) as url:
        for path, body in (("/children/language", {"language": language}),
                           ("/children", CHILDREN[language])):
            answer = httpx.post(url + path, json=body, timeout=HTTP_TIMEOUT_S)
            assert answer.status_code in (200, 201), answer.text
        yield url


def no_english(page, where: str, *family: str) -> None:
    left = english_left(page.content(), besides=family)
    assert left == [], (where, left)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("language", ["es", "ar", "uk", "ja"])
def test_an_evening_as_a_family_has_it(open_page, evening, language, size):
    """A story for the child, then, the night's story told, the form closed for the night;
    the Spanish evening's story is shared with a Polish grandmother."""
    evening_at(open_page, evening, language, size)
    closed_for_the_night(open_page, evening, language, size)
    if language == "es":
        shared_with_grandmother(open_page, evening, size)


def looked_at(watched, language: str, size: str, name: str) -> None:
    page = watched.page
    if language == "ar":
        reads_right_to_left(page)
    if language in NOT_LATIN:
        no_english(page, name, "Pip")
    laid_out_well(page, f"{language} {size} {name}")
    watched.shot(f"languages/{language}-{size}-{name}")


def evening_at(open_page, url: str, language: str, size: str) -> None:
    child = CHILDREN[language]["name"]
    watched = open_page(url, size, locale=language)
    page = watched.page
    page.goto(url + "/")
    with speaking(language):
        assert page.locator("h1").first.inner_text() == gettext("A story for tonight")
    looked_at(watched, language, size, "1-home")
    page.locator("ul.child-buttons li:not(.sibling-button) button", has_text=child).click()
    page.locator(".job-card.status-running").first.wait_for(timeout=STORY_WAIT_MS)
    looked_at(watched, language, size, "2-writing")
    done = page.locator(".job-card.status-completed a.button.primary").first
    done.wait_for(timeout=STORY_WAIT_MS)
    done.click()
    page.wait_for_url("**/stories/*")
    # The demo storyteller writes English and Arabic only: a Spanish, Ukrainian or Japanese
    # story is in English.
    written = text_language(language, "demo")
    assert page.locator("#story-title").get_attribute("lang") == written
    looked_at(watched, language, size, "3-story")
    for path, name in (("/stories", "4-library"), ("/spend", "5-spend"),
                       ("/offline", "7-offline")):
        page.goto(url + path)
        looked_at(watched, language, size, name)
    assert not watched.problems, watched.problems


def closed_for_the_night(open_page, url: str, language: str, size: str) -> None:
    watched = open_page(url, size, locale=language)
    watched.page.goto(url + "/")
    with speaking(language):
        watched.page.get_by_text(gettext("No more stories tonight. Sleep well.")).first.wait_for(
            timeout=STORY_WAIT_MS)
    looked_at(watched, language, size, "6-refusal")


def shared_with_grandmother(open_page, url: str, size: str) -> None:
    story = httpx.get(url + "/stories", headers={"Accept": "application/json"},
                      timeout=HTTP_TIMEOUT_S).json()["stories"][0]
    made = httpx.post(url + f"/stories/{story['story_id']}/share", json={},
                      headers={"Accept": "application/json"}, timeout=HTTP_TIMEOUT_S)
    assert made.status_code == 201, made.text
    watched = open_page(url, size, locale="pl-PL",
                        extra_http_headers={"Accept-Language": "pl-PL,pl;q=0.9,en;q=0.5"})
    page = watched.page
    page.goto(url + made.json()["url"])
    assert page.evaluate("document.documentElement.lang") == "pl"
    with speaking("pl"):
        assert page.get_by_role("button", name=gettext("Read aloud")).count() == 1
    laid_out_well(page, f"pl {size} shared")
    watched.shot(f"languages/pl-{size}-shared")
