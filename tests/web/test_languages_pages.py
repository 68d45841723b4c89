"""An evening's pages in each of the story languages: home, a card while its story is written,
a finished story, the library, the budget page, a refusal, a shared page and the offline
page, each with the right `<html lang dir>` and its words from the language's catalogue."""

from __future__ import annotations

import re
import unicodedata

import anyio
import pytest

from app.i18n import UI_LANGUAGES, gettext, ngettext, speaking
from app.languages import language_of
from tests.helpers.app import ACCEPT_JSON, serve, wait_for_job
from tests.helpers.forms import HX, finished_story, job_id_of, submit
from tests.helpers.languages import english_left

pytestmark = [pytest.mark.anyio]

STORY = "The Whale Who Hummed\n\nOnce upon a time a whale hummed the sea to sleep."
# What each page must say, in the page's language: one sentence or more of its own.
WORDS = {
    "home": ["Write the story", "A story for tonight", "Library"],
    "writing": ["The storyteller is thinking… time to get cosy.", "Stop…"],
    "story": ["Back to the library", "What happens next?"],
    "library": ["Find a story by what it was about, its title or the child's name"],
    "spend": ["What it went on", "Stories"],
    "shared": ["Read aloud"],
    "offline": ["You’re offline", "Stories on this device"],
}


def not_in_latin_letters(language: str) -> bool:
    """Arabic, Ukrainian, Japanese: Latin words a reader sees on their pages are English."""
    return "LATIN" not in unicodedata.name(language_of(language).name[0])


def said(language: str, english: str) -> str:
    with speaking(language):
        return gettext(english)


def lang_dir(page: str) -> tuple[str, str]:
    tag = re.search(r"<html[^>]*>", page)
    assert tag, page[:300]
    lang = re.search(r' lang="([^"]+)"', tag.group(0))
    direction = re.search(r' dir="([^"]+)"', tag.group(0))
    assert lang and direction, tag.group(0)
    return lang.group(1), direction.group(1)


def in_language(language: str, page: str, key: str) -> None:
    for english in WORDS[key]:
        translated = said(language, english)
        assert translated in page.replace("&#39;", "'").replace("&#34;", '"'), (
            language, key, translated)
        if language != "en":
            assert translated != english, (language, english)
    if not_in_latin_letters(language):  # Latin letters a reader sees are English left over
        # The family's own words: the story's title (in <title>) and the idea they typed.
        left = english_left(page, besides=(STORY.splitlines()[0], "a brave little dragon"))
        assert left == [], (key, left)


@pytest.mark.parametrize("language", UI_LANGUAGES)
@pytest.mark.slow
async def test_an_evening_in_each_language(make_app, fake_llm, language):
    fake_llm.story = STORY
    direction = "rtl" if language == "ar" else "ltr"
    app = make_app(daily_story_limit=3, monthly_budget_micros=5_000_000)
    async with serve(app, from_own_pages=True) as client:
        client.headers["Accept-Language"] = f"{language}, en;q=0.1"
        home = (await client.get("/")).text
        assert lang_dir(home) == (language, direction)
        in_language(language, home, "home")

        story_id = await finished_story(client, language="en")
        story = (await client.get(f"/stories/{story_id}")).text
        assert lang_dir(story) == (language, direction)
        in_language(language, story, "story")
        # The story keeps its own language and direction, whatever the page's.
        assert 'id="story-title" lang="en" dir="ltr">' in story

        fake_llm.hold()
        job_id = job_id_of(await submit(client, htmx=True))
        await anyio.to_thread.run_sync(fake_llm.wait_for_call, job_id)
        card = (await client.get(f"/stories/jobs/{job_id}", headers=HX)).text
        in_language(language, card, "writing")
        page = (await client.get(f"/stories/jobs/{job_id}")).text
        assert lang_dir(page) == (language, direction)
        fake_llm.release()
        await wait_for_job(client, job_id)

        library = (await client.get("/stories")).text
        assert lang_dir(library) == (language, direction)
        in_language(language, library, "library")

        spend = (await client.get("/spend")).text
        assert lang_dir(spend) == (language, direction)
        in_language(language, spend, "spend")
        assert "<strong><bdi>" in spend  # amounts isolated inside the sentence

        await finished_story(client)
        refused = await submit(client, htmx=True)
        assert refused.status_code == 429
        with speaking(language):
            limit = ngettext("That's the %(num)d story for today.",
                             "That's all %(num)d stories for today.", 3) % {"num": 3}
        assert limit.replace("'", "&#39;") in refused.text, (language, refused.text[:2000])
        assert not not_in_latin_letters(language) or english_left(refused.text, besides=(
            "a brave little dragon",)) == []

        made = await client.post(f"/stories/{story_id}/share", json={}, headers=ACCEPT_JSON)
        shared_url = made.json()["url"]
        offline = (await client.get("/offline")).text
        assert lang_dir(offline) == (language, direction)
        in_language(language, offline, "offline")

    # The shared page follows its reader's browser, whatever the household's language.
    async with serve(make_app()) as reader:
        shared = (await reader.get(shared_url, headers={"Accept-Language": language})).text
        assert lang_dir(shared) == (language, direction)
        in_language(language, shared, "shared")
        assert 'class="story-text" data-story-text lang="en" dir="ltr">' in shared
