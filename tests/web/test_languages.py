"""Which language a page is in: UI_LANGUAGE, else the household's (the Children page),
else the browser's Accept-Language by its q-values, else English; a shared page its
reader's. `<html lang dir>` say it; the JSON API keeps its error codes."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.config import load_settings
from app.config_values import ConfigError
from app.i18n import gettext, ngettext, speaking
from app.i18n.choice import choose, from_accept_language
from tests.helpers.app import ACCEPT_JSON, serve
from tests.helpers.forms import finished_story

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]


def html_tag(page: str) -> str:
    match = re.search(r"<html[^>]*>", page)
    assert match, page[:200]
    return match.group(0)


def lang_dir(page: str) -> tuple[str, str]:
    tag = html_tag(page)
    lang = re.search(r' lang="([^"]+)"', tag)
    direction = re.search(r' dir="([^"]+)"', tag)
    assert lang and direction, tag
    return lang.group(1), direction.group(1)


@pytest.mark.parametrize(("header", "chosen"), [
    ("es-ES,es;q=0.9,en;q=0.5", "es"),
    ("en;q=0.4, pl;q=0.8, de;q=0.6", "pl"),
    ("sv, ar-EG;q=0.3", "ar"),
    ("ja-JP, uk;q=0.5", "ja"),
    ("fr-CH, fr;q=0.9", "fr"),
    ("pt-BR;q=0, nl", "nl"),  # q=0: not wanted at all
    ("sv, zh", None),
    ("*", None),
    ("es;q=abc, it", "it"),
    ("", None),
])
def test_accept_language_is_read_by_its_q_values(header, chosen):
    assert from_accept_language(header) == chosen


def test_the_choice_goes_setting_household_browser_english():
    assert choose(setting="de", household="es", accept="fr") == "de"
    assert choose(setting=None, household="es", accept="fr") == "es"
    assert choose(setting=None, household=None, accept="fr") == "fr"
    assert choose(setting=None, household=None, accept="sv") == "en"
    assert choose(setting="de", household="es", accept="pl", reader_first=True) == "pl"
    assert choose(setting=None, household="es", accept="sv", reader_first=True) == "es"


def test_ui_language_must_be_a_story_language():
    assert load_settings({"UI_LANGUAGE": "ar"}, env_file="-").ui_language == "ar"
    assert load_settings({}, env_file="-").ui_language is None
    with pytest.raises(ConfigError, match="^UI_LANGUAGE must be one of en, es, fr, de, it, pt, "
                                          "nl, pl, ar, uk, ja, got 'klingon'$"):
        load_settings({"UI_LANGUAGE": "klingon"}, env_file="-")


@pytest.mark.slow
async def test_the_browser_chooses_until_the_household_does_and_ui_language_wins(make_app):
    async with serve(make_app(), from_own_pages=True) as client:
        assert lang_dir((await client.get("/")).text) == ("en", "ltr")
        page = await client.get("/", headers={"Accept-Language": "ar,en;q=0.5"})
        assert lang_dir(page.text) == ("ar", "rtl")
        assert "Accept-Language" in page.headers["vary"]
        # The household chooses Spanish on the Children page: every browser gets it.
        saved = await client.post("/children/language", data={"language": "es"})
        assert saved.status_code == 303 and saved.headers["location"] == "/children#language"
        page = (await client.get("/", headers={"Accept-Language": "pl"})).text
        assert lang_dir(page) == ("es", "ltr")
        # Before any story, the form asks for one in the page's language.
        assert '<option value="es" lang="es" selected>' in page
        children = (await client.get("/children", headers={"Accept": "text/html"})).text
        assert re.search(r'<option value="es" lang="es" selected>', children)
        answer = await client.post("/children/language", json={"language": "klingon"})
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_request"
        answer = await client.post("/children/language", json={"language": None})
        assert answer.json() == {"language": None}  # each browser's own again
        assert lang_dir((await client.get("/", headers={"Accept-Language": "pl"})).text) == (
            "pl", "ltr")
        await client.post("/children/language", json={"language": "es"})
    async with serve(make_app(ui_language="de"), from_own_pages=True) as client:
        page = await client.get("/", headers={"Accept-Language": "ar"})
        assert lang_dir(page.text) == ("de", "ltr")  # over the household's Spanish too
        assert "Accept-Language" not in page.headers.get("vary", "")
        children = await client.get("/children", headers={"Accept": "text/html"})
        # Said in plain words: the setting's name is for whoever runs the app.
        assert "so eingestellt von der Person" in children.text  # in German, as the page is
        assert "UI_LANGUAGE" not in children.text


async def test_another_process_sees_the_households_language_within_its_freshness(make_app):
    other = make_app()
    async with serve(make_app(), from_own_pages=True) as first, \
            serve(other, from_own_pages=True) as second:
        assert lang_dir((await second.get("/stories")).text) == ("en", "ltr")
        await first.post("/children/language", json={"language": "it"})
        # What its background read does once BEDTIME_FRESH_S has gone by.
        await other.state.services.household.load()
        assert lang_dir((await second.get("/stories")).text) == ("it", "ltr")


async def test_a_story_keeps_its_own_language_on_a_page_in_another(make_app):
    async with serve(make_app(), from_own_pages=True) as client:
        story_id = await finished_story(client, language="en")
        page = (await client.get(f"/stories/{story_id}",
                                 headers={"Accept-Language": "es"})).text
        assert lang_dir(page) == ("es", "ltr")
        assert re.search(r'<div class="story-text[^"]*"[^>]*lang="en"', page), page


async def test_the_json_api_keeps_its_codes_and_may_speak_the_readers_language(make_app):
    async with serve(make_app(daily_story_limit=2), from_own_pages=False) as client:
        for key in ("k-1", "k-2", "k-3"):
            answer = await client.post(
                "/stories/generate", json={"prompt": "a moon"},
                headers={**ACCEPT_JSON, "Idempotency-Key": key, "Accept-Language": "fr"})
        assert answer.status_code == 429
        error = answer.json()["error"]
        assert error["code"] == "daily_limit_reached"
        with speaking("fr"):
            said = ngettext("That's the %(num)d story for today.",
                            "That's all %(num)d stories for today.", 2) % {"num": 2}
        assert error["message"].startswith(said) and "stories for today" not in said


def test_a_language_is_only_what_was_chosen_for_a_request():
    with speaking("es"):
        assert gettext("Library") != "Library"
        with speaking("xx"):
            assert gettext("Library") == "Library"  # an unknown one: English
    assert gettext("Library") == "Library"


def test_settings_replace_keeps_ui_language(settings):
    assert replace(settings, ui_language="ar").ui_language == "ar"


async def test_an_arabic_story_reads_right_to_left_on_an_english_page(make_app):
    async with serve(make_app(storyteller="demo", demo_delay_s=0), from_own_pages=True) as client:
        story_id = await finished_story(client, language="ar", prompt="تنين صغير")
        story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        assert story["language"] == "ar" and "راوي العرض" in story["body"]
        page = (await client.get(f"/stories/{story_id}")).text
        assert lang_dir(page) == ("en", "ltr")
        # Its direction is its language's, not guessed from its first letter.
        assert 'id="story-title" lang="ar" dir="rtl">' in page
        assert 'data-story-text lang="ar" dir="rtl">' in page
        library = (await client.get("/stories")).text
        assert 'class="shelf-title" lang="ar" dir="rtl">' in library


async def test_the_service_workers_fallback_speaks_the_households_language(make_app):
    async with serve(make_app(), from_own_pages=True) as client:
        english = (await client.get("/sw.js")).text
        assert "var WORDS = {};" in english
        spanish = (await client.get("/sw.js", headers={"Accept-Language": "es"})).text
        offline = "You are offline. Please try again when the connection is back."
        with speaking("es"):
            fallback = gettext(offline)
        assert fallback in spanish and fallback != offline
        assert spanish != english  # a new worker, which keeps the offline page in Spanish
