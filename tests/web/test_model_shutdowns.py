"""Models with an end date: a configured model (STORY_MODEL, IMAGE_MODEL) whose shutdown is
announced, by the provider's answer to `GET /models/{id}` (`shutdown_date`) or by the
pinned openai library's list, is named with its date in one start-up WARNING and, from 60
days before that date, on the home page in the page's language; after the date, the page
says which variable to set. Dates are reckoned from today, so these hold any winter."""

from __future__ import annotations

import html
import logging
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from babel.dates import format_date

from app.i18n import gettext, speaking
from app.languages import language_of
from tests.helpers.app import serve
from tests.helpers.waits import until

pytestmark = pytest.mark.anyio

STORY_SOON = ("The storyteller's model, <code>%(model)s</code>, will be shut down by the "
              "provider on %(day)s. Before then, set STORY_MODEL to a current model.")
STORY_PAST = ("The provider shut down the storyteller's model, <code>%(model)s</code>, on "
              "%(day)s. Set STORY_MODEL to a current model.")
IMAGE_PAST = ("The provider shut down the illustrator's model, <code>%(model)s</code>, on "
              "%(day)s. Set IMAGE_MODEL to a current model.")


def today() -> date:
    """The household's today (the tests' TZ is UTC, as the settings' default)."""
    return datetime.now(UTC).date()


def written(day: date, language: str) -> str:
    """A date as a page in `language` writes it (English: the app's own "11 December 2026")."""
    if language == "en":
        return f"{day.day} {day:%B} {day.year}"
    return format_date(day, language_of(language).day_format, locale=language)


def said(sentence: str, language: str, **values: str) -> str:
    with speaking(language):
        return gettext(sentence) % values


def deprecations(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "event=model_deprecated" in r.getMessage()]


async def home(client, language: str = "en") -> str:
    return html.unescape((await client.get("/", headers={"Accept-Language": language})).text)


def notes_of(page: str) -> list[str]:
    return re.findall(r'<p class="[^"]*shutdown-note[^"]*"[^>]*>(.*?)</p>', page, re.S)


async def checked(caplog, setting: str = "STORY_MODEL") -> None:
    """The start-up check has had the provider's answer for `setting`'s model."""
    await until(lambda: f"event=model_checked setting={setting}" in caplog.text,
                f"the start-up check of {setting}")


@pytest.mark.parametrize("language", ["en", "fr", "ja"])
async def test_a_story_model_shut_down_within_60_days_is_named_with_its_date(
    make_app, fake_llm, caplog, language
):
    caplog.set_level(logging.INFO, logger="bedtime")
    shutdown = today() + timedelta(days=20)
    fake_llm.shutdown_dates = {"fake-model": shutdown.isoformat()}
    async with serve(make_app()) as client:
        await checked(caplog)
        page = await home(client, language)
    [note] = notes_of(page)
    assert said(STORY_SOON, language, model="fake-model",
                day=written(shutdown, language)) in html.unescape(note)
    assert written(shutdown, language) in note and "STORY_MODEL" in note
    [warning] = deprecations(caplog)
    assert (f"setting=STORY_MODEL model=fake-model shutdown={shutdown.isoformat()}"
            " source=provider") in warning


async def test_a_shutdown_as_a_unix_timestamp_beyond_60_days_is_logged_not_shown(
    make_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    shutdown = today() + timedelta(days=90)
    midday = datetime(shutdown.year, shutdown.month, shutdown.day, 12, tzinfo=UTC)
    fake_llm.shutdown_dates = {"fake-model": int(midday.timestamp())}
    async with serve(make_app()) as client:
        await checked(caplog)
        page = await home(client)
    assert notes_of(page) == [] and "shut down" not in page
    [warning] = deprecations(caplog)
    assert f"model=fake-model shutdown={shutdown.isoformat()} source=provider" in warning


async def test_sixty_days_before_is_the_first_day_the_page_says_so(make_app, fake_llm, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.shutdown_dates = {"fake-model": (today() + timedelta(days=61)).isoformat()}
    async with serve(make_app()) as client:
        await checked(caplog)
        assert notes_of(await home(client)) == []
    caplog.clear()
    fake_llm.shutdown_dates = {"fake-model": (today() + timedelta(days=60)).isoformat()}
    async with serve(make_app()) as client:
        await checked(caplog)
        assert len(notes_of(await home(client))) == 1


@pytest.mark.parametrize("language", ["en", "de", "ar"])
async def test_after_its_shutdown_the_page_says_which_variable_to_set(
    make_app, fake_llm, caplog, language
):
    caplog.set_level(logging.INFO, logger="bedtime")
    shutdown = today() - timedelta(days=3)
    fake_llm.shutdown_dates = {"fake-model": f"{shutdown.isoformat()}T00:00:00Z"}
    async with serve(make_app()) as client:
        await checked(caplog)
        page = await home(client, language)
    [note] = notes_of(page)
    assert said(STORY_PAST, language, model="fake-model",
                day=written(shutdown, language)) in html.unescape(note)
    assert len(deprecations(caplog)) == 1


async def test_the_provider_s_date_wins_over_the_library_s_in_one_warning(
    make_app, fake_llm, caplog
):
    """gpt-4o-mini is deprecated in the pinned library (shutdown 2027-01-14); the provider's
    own answer says otherwise, and the app says what the provider says, once."""
    caplog.set_level(logging.INFO, logger="bedtime")
    shutdown = today() + timedelta(days=400)
    fake_llm.shutdown_dates = {"gpt-4o-mini": shutdown.isoformat()}
    async with serve(make_app(story_model="gpt-4o-mini")) as client:
        await checked(caplog)
        page = await home(client)
    [warning] = deprecations(caplog)
    assert f"model=gpt-4o-mini shutdown={shutdown.isoformat()} source=provider" in warning
    assert notes_of(page) == []


@pytest.mark.parametrize("garbage", ["soon", "", "2026-02-30", -5, 10**15, True, {"on": 1}])
async def test_a_shutdown_date_that_is_not_a_date_is_passed_over_quietly(
    make_app, fake_llm, caplog, garbage
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.shutdown_dates = {"fake-model": garbage}
    async with serve(make_app()) as client:
        await checked(caplog)
        page = await home(client)
        assert (await client.get("/healthz")).status_code == 200
    assert notes_of(page) == [] and deprecations(caplog) == []
    assert not [r for r in caplog.records
                if r.levelno >= logging.WARNING and "model" in r.getMessage()]


async def test_an_image_model_the_library_says_was_shut_down_names_image_model(
    make_app, fake_llm, caplog
):
    """gpt-image-1's shutdown (2026-10-23, in the pinned library) is past for good."""
    caplog.set_level(logging.INFO, logger="bedtime")
    async with serve(make_app(illustrator="openai", image_model="gpt-image-1")) as client:
        await checked(caplog, "IMAGE_MODEL")
        page = await home(client)
    [note] = notes_of(page)
    assert said(IMAGE_PAST, "en", model="gpt-image-1", day="23 October 2026") in note
    [warning] = deprecations(caplog)
    assert "setting=IMAGE_MODEL model=gpt-image-1 shutdown=2026-10-23" in warning
    assert "source=openai_library" in warning
    assert "gpt-image-1" in fake_llm.model_lookups  # the provider was asked too


async def test_an_image_model_s_date_from_the_provider_is_shown_beside_the_story_model_s(
    make_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    soon, later = today() + timedelta(days=10), today() + timedelta(days=30)
    fake_llm.shutdown_dates = {"fake-image": soon.isoformat(), "fake-model": later.isoformat()}
    async with serve(make_app(illustrator="openai", image_model="fake-image")) as client:
        await checked(caplog, "IMAGE_MODEL")
        await checked(caplog, "STORY_MODEL")
        page = await home(client)
    notes = notes_of(page)
    assert len(notes) == 2
    assert "fake-image" in notes[0] and "IMAGE_MODEL" in notes[0]  # the sooner first
    assert "fake-model" in notes[1] and "STORY_MODEL" in notes[1]
    assert len(deprecations(caplog)) == 2
