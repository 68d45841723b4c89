"""A story's language (issue 21): asked for by tag, kept on the job, told to the
storyteller, carried on the story page's text and in backups; English hashes as before."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from app.queue.store import JobStore
from app.requests import request_hash
from app.stories import StoryRequest, written_in
from app.storytelling.demo import DemoStoryteller
from tests.helpers.app import ACCEPT_JSON, new_key, post_story, serve, wait_for_job
from tests.helpers.forms import finished_story, job_id_of

pytestmark = pytest.mark.anyio


def prompt_of(call: dict) -> str:
    return call["body"]["messages"][-1]["content"]


async def written(client, body: dict) -> dict:
    """The story a JSON request asked for, once written (as GET /stories/{id} gives it)."""
    response = await post_story(client, body)
    assert response.status_code == 202, response.text
    job = await wait_for_job(client, response.json()["job_id"])
    assert job["status"] == "completed", job
    return (await client.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()


@pytest.mark.parametrize("language", ["xx", "EN", "english", "", 7, True, ["fr"]])
async def test_a_language_not_among_the_story_languages_is_refused_naming_the_field(
    client, db, language
):
    response = await post_story(client, {"prompt": "a dragon", "language": language})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and "language" in error["message"]


def test_an_english_request_hashes_exactly_as_before_languages_existed():
    request = StoryRequest(prompt="a dragon", child_name="Mia", age=5, length="short")
    before = json.dumps({"prompt": "a dragon", "child_name": "Mia", "age": 5,
                         "length": "short"}, sort_keys=True, ensure_ascii=False)
    assert request_hash(request) == hashlib.sha256(before.encode()).hexdigest()
    assert request_hash(StoryRequest(prompt="a dragon", language="en")) == request_hash(
        StoryRequest(prompt="a dragon"))
    assert request_hash(StoryRequest(prompt="a dragon", language="fr")) != request_hash(
        StoryRequest(prompt="a dragon"))


async def test_an_omitted_language_is_english_for_a_replay_and_another_is_a_new_body(client):
    key = new_key()
    first = await post_story(client, {"prompt": "a dragon"}, key=key)
    again = await post_story(client, {"prompt": "a dragon", "language": "en"}, key=key)
    assert again.status_code == 202 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["job_id"] == first.json()["job_id"]
    other = await post_story(client, {"prompt": "a dragon", "language": "es"}, key=key)
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"


async def test_the_language_reaches_the_prompt_the_story_and_its_page(client, fake_llm):
    story = await written(client, {"prompt": "a sleepy owl", "language": "fr"})
    assert story["language"] == "fr"
    assert "Write the story in French." in prompt_of(fake_llm.requests[-1])
    page = (await client.get(f"/stories/{story['story_id']}")).text
    assert re.search(r'<div class="story-text" data-story-text lang="fr" dir="ltr">', page)

    english = await written(client, {"prompt": "a sleepy owl"})
    assert english["language"] == "en"
    assert "Write the story in" not in prompt_of(fake_llm.requests[-1])
    page = (await client.get(f"/stories/{english['story_id']}")).text
    assert 'data-story-text lang="en"' in page


async def test_the_form_offers_the_languages_by_their_own_names_and_keeps_the_one_chosen(
    own_pages, fake_llm
):
    client = own_pages
    home = (await client.get("/")).text
    select = re.search(r'<select id="language" name="language".*?</select>', home, re.S)
    assert select, home
    options = re.findall(r'<option value="(\w+)" lang="\w+"( selected)?>([^<]+)</option>',
                         select.group())
    assert [(tag, name) for tag, _, name in options] == [
        ("en", "English"), ("es", "Español"), ("fr", "Français"), ("de", "Deutsch"),
        ("it", "Italiano"), ("pt", "Português"), ("nl", "Nederlands"), ("pl", "Polski"),
        ("ar", "العربية"), ("uk", "Українська"), ("ja", "日本語")]
    assert [tag for tag, chosen, _ in options if chosen] == ["en"]

    story_id = await finished_story(client, language="de")
    story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
    assert story["language"] == "de"
    assert "Write the story in German." in prompt_of(fake_llm.requests[-1])
    # A script's request is no device's form choice: the next form starts in the page's
    # language; a sequel keeps its story's.
    assert '<option value="en" lang="en" selected>' in (await client.get("/")).text
    sequel_form = (await client.get(f"/?sequel={story_id}")).text
    assert '<option value="de" lang="de" selected>' in sequel_form


async def test_a_form_with_a_language_not_offered_is_shown_again_with_the_message(own_pages):
    client = own_pages
    home = (await client.get("/")).text
    key = re.search(r'name="idempotency_key" value="([^"]+)"', home).group(1)
    response = await client.post("/stories/generate", data={
        "prompt": "a dragon", "length": "medium", "language": "klingon",
        "idempotency_key": key})
    assert response.status_code == 422
    assert 'id="language-error"' in response.text


@pytest.mark.parametrize("language", ["es", "uk", "ja"])
async def test_the_demo_storyteller_says_plainly_that_it_writes_english_only(language):
    """Ukrainian and Japanese as Spanish: an English story, said so, its text English."""
    demo = DemoStoryteller(delay_s=0, seed=1)
    asked = StoryRequest(prompt="a dragon", language=language)
    story = await demo.write(asked, job_id=1)
    assert story.body.endswith("(The demo storyteller writes in English only.)")
    assert written_in(asked, demo.model) == "en"
    english = await demo.write(StoryRequest(prompt="a dragon"), job_id=1)
    assert "English only" not in english.body
    assert story.body.split("\n\n")[:-2] == english.body.split("\n\n")[:-1]


@pytest.mark.parametrize(("language", "told", "name"), [
    ("uk", "Write the story in Ukrainian.", "Українська"),
    ("ja", "Write the story in Japanese.", "日本語"),
])
async def test_a_ukrainian_and_a_japanese_story_are_asked_kept_and_told(
    own_pages, fake_llm, db, language, told, name
):
    """Each is its record and its catalogue: the columns take it (migration 038), the
    storyteller is told it (Japanese in characters: the same reading time as 480 words),
    and a profile and the household's pages may be in it."""
    story = await written(own_pages, {"prompt": "a dragon", "language": language,
                                      "length": "medium"})
    assert story["language"] == language
    prompt = prompt_of(fake_llm.requests[-1])
    assert told in prompt
    assert ("about 1,000 characters." if language == "ja" else "about 480 words.") in prompt
    child = await own_pages.post("/children", json={"name": "Mia", "language": language},
                                 headers=ACCEPT_JSON)
    assert child.status_code in (200, 201), child.text
    assert child.json()["language"] == language
    pages = await own_pages.post("/children/language", json={"language": language},
                                 headers=ACCEPT_JSON)
    assert pages.status_code == 200 and pages.json() == {"language": language}, pages.text
    home = (await own_pages.get("/")).text
    assert f'<html lang="{language}" dir="ltr"' in home and f">{name}</option>" in home


async def test_the_demo_app_notes_it_on_the_story_page(make_app):
    async with serve(make_app(storyteller="demo", demo_delay_s=0)) as client:
        story = await written(client, {"prompt": "a dragon", "language": "it"})
        assert story["body"].endswith("(The demo storyteller writes in English only.)")
        page = (await client.get(f"/stories/{story['story_id']}")).text
        assert "The demo storyteller writes in English only." in page
        # Its words are English, so the page says so (and read-aloud picks an English
        # voice), on the story's page and on its card; the job keeps what it asked.
        assert 'data-story-text lang="en"' in page
        card = (await client.get(f"/stories/jobs/{story['job_id']}")).text
        assert 'job-story" lang="en"' in card
        assert story["language"] == "it"


async def test_a_card_says_the_language_its_story_was_written_in_after_the_storyteller_changes(
    make_app,
):
    """An installation that moves from the demo to a model (or back) keeps its old cards'
    `lang`: the demo's story is English, the model's is in the language asked for."""
    async with serve(make_app(storyteller="demo", demo_delay_s=0)) as client:
        by_demo = await written(client, {"prompt": "a dragon", "language": "it"})
    async with serve(make_app()) as client:
        by_model = await written(client, {"prompt": "a dragon", "language": "it"})
        card = (await client.get(f"/stories/jobs/{by_demo['job_id']}")).text
        assert 'job-story" lang="en"' in card
    async with serve(make_app(storyteller="demo", demo_delay_s=0)) as client:
        card = (await client.get(f"/stories/jobs/{by_model['job_id']}")).text
        assert 'job-story" lang="it"' in card


async def test_a_retry_keeps_the_language_of_the_story_that_failed(own_pages, db, fake_llm):
    fake_llm.mode = "500"
    failed = (await post_story(own_pages, {"prompt": "a dragon", "language": "pl"})).json()
    assert (await wait_for_job(own_pages, failed["job_id"]))["status"] == "failed"
    job = await JobStore(db).get(failed["job_id"])
    assert job is not None and job.request.language == "pl"
    fake_llm.mode = "ok"
    response = await own_pages.post(f"/stories/jobs/{failed['job_id']}/retry")
    retried = await wait_for_job(own_pages, job_id_of(response))
    assert retried["status"] == "completed"
    assert "Write the story in Polish." in prompt_of(fake_llm.requests[-1])


async def test_the_language_reaches_a_background_response_too(make_app, fake_llm):
    async with serve(make_app(llm_api="responses")) as client:
        story = await written(client, {"prompt": "a sleepy owl", "language": "nl"})
        assert story["language"] == "nl"
        create = next(call for call in fake_llm.requests if "messages" not in call["body"])
        assert "Write the story in Dutch." in fake_llm._prompt(create["body"])


async def test_a_japanese_story_s_reading_time_counts_its_characters(own_pages, fake_llm):
    """No spaces, no words to count: its page and its library row say the minutes its
    characters take to read aloud (about 250 a minute), not "1 min" for one long "word"."""
    fake_llm.story = "月夜のおさんぽ\n\n" + "ふくろうはねむりました。" * 84  # 1,008 characters
    story_id = await finished_story(own_pages, language="ja", length="medium")
    page = (await own_pages.get(f"/stories/{story_id}")).text
    assert "about 4 min to read aloud" in page
    library = (await own_pages.get("/stories")).text
    row = library[library.index(f'href="/stories/{story_id}"'):]
    assert re.search(r"medium · 4 min ·", row[:2000]), row[:2000]
