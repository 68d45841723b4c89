"""The app holds any OpenAI-compatible server to its own rules (app/storytelling/reader.py),
in both provider modes where the misbehaviour can happen: the length is the app's, a story
the server stopped early is never shown as finished, LLM_TIMEOUT_S bounds silence and not
writing, titles are titles, paragraphs survive, and the prompt stays out of the story."""

from __future__ import annotations

import asyncio
import html
import logging
import re
from dataclasses import replace

import pytest

from app.finishing import cut_to_last_sentence
from app.stories import Story, StoryRequest, clean_story
from app.storytelling import reader as reader_module
from app.storytelling.prompt import build_prompt
from app.storytelling.reader import Ending, Reader
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.fake_llm import LABELLED_TITLE_STORY, PARAGRAPH_TITLE_STORY
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio
HX = {"HX-Request": "true"}
SHORT = {"prompt": "a sleepy owl", "length": "short"}  # 240 words asked: at most 360 read


@pytest.fixture(params=["chat", "responses"])
def llm_api(request) -> str:
    return request.param


async def story_of(client, job_id: int) -> dict:
    job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    story = (await client.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()
    return {**story, "id": job["story_id"]}


async def card_of(client, job_id: int) -> str:
    return html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)


# -- the length is the app's --------------------------------------------------------------


async def test_a_server_that_honours_only_max_tokens_is_held_to_the_length(make_app, fake_llm):
    fake_llm.mode = "ignores_cap"  # max_completion_tokens ignored, max_tokens honoured
    async with serve(make_app()) as client:
        job_id = (await post_story(client, SHORT)).json()["job_id"]
        story = await story_of(client, job_id)
    [sent] = fake_llm.requests
    assert sent["body"]["max_tokens"] == sent["body"]["max_completion_tokens"]
    assert len(story["body"].split()) <= 360
    assert story["body"].endswith(".")


@pytest.mark.slow
async def test_a_model_that_writes_on_and_on_is_stopped_at_the_app_s_word_cap(
    make_app, fake_llm, llm_api, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.mode = "ignores_cap"
    fake_llm.refuse("fake-model", "max_tokens")  # so no spelling of the cap is honoured
    fake_llm.chunk_delay_s = 0.005  # it would write 50,000 words, still writing when stopped
    async with serve(make_app(llm_api=llm_api)) as client:
        job_id = (await post_story(client, SHORT)).json()["job_id"]
        story = await story_of(client, job_id)
        if llm_api == "chat":  # the app stopped reading: it closed the stream
            await asyncio.to_thread(fake_llm.wait_for_chat_closed, job_id)
        else:  # ... or cancelled the response at the provider
            [response_id] = fake_llm.response_ids_for(job_id)
            await asyncio.to_thread(fake_llm.wait_for_status, response_id, "cancelled")
            assert fake_llm.cancels_for(job_id) == 1
    words = len(story["body"].split())
    assert 300 < words <= 360, words  # 1.5 x 240, cut at the last whole sentence
    assert story["body"] == cut_to_last_sentence(story["body"])
    assert story["body"].endswith("stars.")
    assert f"event=story_truncated job_id={job_id}" in caplog.text
    assert fake_llm.calls_for(job_id) == 1


# -- a story the server stopped early is never shown as finished -------------------------


@pytest.mark.parametrize("mode", ["no_finish", "closed_early"])
async def test_a_stream_with_no_finish_reason_fails_with_its_words_kept(client, fake_llm, mode):
    fake_llm.mode = mode
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"]) == ("failed", "cut_short")
    assert job["story_id"] is None and fake_llm.calls_for(job_id) == 1
    full = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
    assert full["text_so_far"].startswith(f"The Story of Job {job_id}\n\nOnce upon a time")
    card = await card_of(client, job_id)
    assert "The storyteller stopped in the middle of the story." in card
    assert "Finish this story" in card and "ready" not in card.lower()


async def test_an_empty_answer_is_nothing_sent_and_offers_no_try_again(
    make_app, fake_llm, llm_api
):
    fake_llm.mode = "empty"
    async with serve(make_app(llm_api=llm_api)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        card = await card_of(client, job_id)
    assert (job["status"], job["error_code"], job["error"]) == (
        "failed", "storyteller_empty", "the storyteller sent nothing")
    assert "The storyteller sent nothing back." in card
    assert "try again" not in card.lower() and "/retry" not in card


# -- LLM_TIMEOUT_S bounds waiting, not writing -------------------------------------------


@pytest.mark.slow
async def test_a_story_arriving_at_a_steady_pace_is_not_cut_by_the_clock(
    make_app, fake_llm, llm_api
):
    fake_llm.story = "The Slow Owl\n\n" + " ".join(["The owl flew slowly."] * 10)
    fake_llm.chunk_delay_s = 0.25  # 20 chunks: 5 s in all, never 2 s without a word
    async with serve(make_app(llm_api=llm_api, llm_timeout_s=2)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        story = await story_of(client, job_id)
    assert story["body"] == " ".join(["The owl flew slowly."] * 10)


@pytest.mark.slow
async def test_a_storyteller_silent_after_its_first_words_is_cut_short(
    make_app, fake_llm, llm_api
):
    fake_llm.hold_after_chunks = 3  # then nothing, its connection open
    fake_llm.hold()
    async with serve(make_app(llm_api=llm_api, llm_timeout_s=1)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        card = await card_of(client, job_id)
        fake_llm.release()
    assert (job["status"], job["error_code"]) == ("failed", "cut_short")
    assert "Finish this story" in card


# -- titles, paragraphs, markup -----------------------------------------------------------


async def test_a_paragraph_for_a_title_stays_in_the_story_under_a_title_from_the_idea(
    make_app, fake_llm, llm_api
):
    fake_llm.mode = "paragraph_title"
    async with serve(make_app(llm_api=llm_api)) as client:
        story = await story_of(client, (await post_story(client, SHORT)).json()["job_id"])
    first_line = PARAGRAPH_TITLE_STORY.split("\n")[0]
    assert story["title"] == "The Sleepy Owl"  # as the demo storyteller names it
    assert story["body"].startswith(first_line + "\n\nShe yawned at last.")


async def test_a_title_that_names_itself_loses_its_label(make_app, fake_llm, llm_api):
    fake_llm.mode = "labelled_title"
    async with serve(make_app(llm_api=llm_api)) as client:
        story = await story_of(client, (await post_story(client)).json()["job_id"])
    assert "The story's title is" in LABELLED_TITLE_STORY
    assert (story["title"], story["body"]) == ("The Sleepy Owl",
                                               "Once upon a time an owl yawned. Goodnight.")


async def test_single_line_breaks_are_paragraphs_on_the_page(make_app, fake_llm, llm_api):
    fake_llm.mode = "single_breaks"
    async with serve(make_app(llm_api=llm_api)) as client:
        story = await story_of(client, (await post_story(client)).json()["job_id"])
        page = (await client.get(f"/stories/{story['id']}")).text
    assert story["title"] == "The Sleepy Owl"
    assert story["body"].split("\n\n") == ["Once upon a time an owl yawned in her tree.",
                                           "She blinked at the round moon.",
                                           "Then she slept. Goodnight."]
    assert "<p>She blinked at the round moon.</p>" in page


async def test_the_prompt_s_markup_echoed_back_never_reaches_the_story(
    make_app, fake_llm, llm_api
):
    fake_llm.mode = "echoed_markup"
    async with serve(make_app(llm_api=llm_api)) as client:
        story = await story_of(client, (await post_story(client)).json()["job_id"])
    assert story["title"] == "The Sleepy Owl"
    assert story["body"] == "Once upon a time Mia met an owl.\n\nThey slept. Goodnight."


# -- characters are bounded too, and tags stripped in any script (the reader alone) ---------

OWL = StoryRequest(prompt="a sleepy owl", length="short")  # 360 words, 4,320 characters


def reader_for(request: StoryRequest = OWL) -> Reader:
    # The prompt in English: no language the prompt cannot name yet is lost for it.
    return Reader(request, prompt=build_prompt(replace(request, language="en")), job_id=7)


def told(raw: str, request: StoryRequest = OWL) -> Story:
    """The story as a storyteller settles it: capped when past the cap, else finished."""
    reader = reader_for(request)
    ending = Ending.CAPPED if reader.past_cap(raw) else Ending.STOP
    return reader.story(raw, ending=ending, model="m", prompt_tokens=None,
                        completion_tokens=None)


def test_one_word_of_two_megabytes_is_past_the_cap_and_cut_not_stored(caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    word = "z" * 2_000_000
    assert not reader_for().past_cap("The Long Word\n\n" + word[:4_000])
    assert reader_for().past_cap("The Long Word\n\n" + word)
    story = told("The Long Word\n\n" + word)
    assert story.title == "The Long Word"
    assert story.body == "z" * 4_320 + "…"  # no sentence ended: cut hard at the cap
    assert "event=story_truncated job_id=7" in caplog.text and "by=char_cap" in caplog.text


def test_a_story_past_the_character_cap_ends_at_its_last_whole_sentence_within_it():
    sentence = "Supercalifragilisticexpialidocious" * 4 + "."  # one word of 137 characters
    raw = "The Long Words\n\n" + " ".join([sentence] * 100)  # 100 words, 13,799 characters
    assert reader_for().past_cap(raw)
    body = told(raw).body
    assert body == " ".join([sentence] * 31)  # 31 sentences: 4,277 characters
    assert body == cut_to_last_sentence(body)


def test_a_story_said_to_be_finished_is_still_held_to_the_cap():
    """A whole answer (a final response, JSON to a streamed request) says STOP: the cap holds."""
    reader = reader_for()
    story = reader.story("The Owl\n\n" + "Hoo. " * 2_000, ending=Ending.STOP, model="m",
                         prompt_tokens=None, completion_tokens=None)
    assert len(story.body.split()) == 360 and story.body.endswith("Hoo.")


def test_a_language_written_without_spaces_is_capped_by_its_characters():
    """Japanese: its words cannot be counted, its characters can (its length asks for 500
    of them for a short story, the cap is 750), and the story ends at its last whole
    sentence, whose end no space follows (。)."""
    assert reader_module.char_cap("short") == 4_320
    assert (reader_module.word_cap("short", "ja"), reader_module.char_cap("short", "ja")) == (
        750, 1_500)
    japanese = replace(OWL, language="ja")
    text = "ねむいフクロウ\n\n" + "ふくろうはねむりました。" * 200  # 2,400 characters, no space
    assert reader_for(japanese).past_cap(text) and not reader_for().past_cap(text)
    assert not reader_for(japanese).past_cap("ねむいフクロウ\n\n" + "ふくろうはねむりました。" * 62)
    body = told(text, japanese).body
    assert body == "ふくろうはねむりました。" * 62  # 744 characters: its last whole sentence
    assert told("ねむいフクロウ\n\n" + "ふくろうはねむりました。" * 40, japanese).body == (
        "ふくろうはねむりました。" * 40)  # within its cap: whole


@pytest.mark.parametrize(("cut", "kept"), [
    ("ふくろうはねむりました。「おやすみ。」ゆいはわら", "ふくろうはねむりました。「おやすみ。」"),
    ("つきはどこ？ほしがわら", "つきはどこ？"),
    ("نامت البومة. هل نامت؟ ثم قال", "نامت البومة. هل نامت؟"),
    ("The owl slept. «Goodnight!» Then he", "The owl slept. «Goodnight!»"),
    ("Сова заснула. Потім вона", "Сова заснула."),
])
def test_a_story_cut_short_ends_at_its_last_whole_sentence_in_any_script(cut, kept):
    """Japanese ends a sentence with 。！？ and no space after it, Arabic asks with ؟."""
    assert cut_to_last_sentence(cut) == kept


def test_bidi_overrides_never_reach_the_story_but_the_joiners_scripts_need_stay():
    body = ("\u202eSdrawkcab\u202c and \u2066isolated\u2069, \u202aembedded\u202c; "
            "می\u200cخواهم, क्\u200dष, 👨\u200d👩\u200d👧.")
    kept = "Sdrawkcab and isolated, embedded; می\u200cخواهم, क्\u200dष, 👨\u200d👩\u200d👧."
    assert reader_for().shown(f"The Owl\n{body}") == f"The Owl\n\n{kept}"
    assert told(f"The Owl\n{body}").body == kept
    assert clean_story(Story(title="The Owl", body=body, model="m")).body == kept


@pytest.mark.parametrize("tag", [
    "<قصة>", "</قصة>", "</история>", "<物語>", "<कहानी>", "<ιστορία>", "</Geschichte>",
    "<histoire/>", "<story>", "</p>", "<br />",
])
def test_the_model_s_own_tags_are_stripped_in_any_script(tag):
    shown = reader_for().shown(f"The Owl\nOnce {tag}upon a time.{tag}")
    assert shown == "The Owl\n\nOnce upon a time."


@pytest.mark.parametrize("words", [
    "She knew that a < b.", "And 3 > 2, said the owl.", "I <3 you.", "<3", "a < b > c",
    "x<1 and y>2", "<- this way, -> that way", "1<2>3",
])
def test_a_story_s_less_than_and_greater_than_are_no_tags(words):
    assert reader_for().shown(f"The Owl\n{words}") == f"The Owl\n\n{words}"


# -- recorded streams of a real server, replayed ------------------------------------------


@pytest.mark.parametrize(("recording", "said"), [
    ("no_finish_reason", "The storyteller stopped in the middle of the story."),
    # A role delta, then `[DONE]` with no finish reason: on the wire, a cut before the first
    # word (whatever the server meant by it), so it is one, and "Try again" is offered.
    ("empty_past_context", "The storyteller stopped before the story began."),
])
async def test_a_recorded_stream_cut_short_or_empty_fails(client, fake_llm, db, recording, said):
    fake_llm.replay = recording
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"]) == ("failed", "cut_short")
    assert said in await card_of(client, job_id)
    assert await fetch_val(db, "SELECT count(*) FROM stories") == 0


async def test_recorded_streams_are_held_to_the_app_s_rules(client, fake_llm):
    stories = {}
    for recording in ("single_line_breaks", "paragraph_title", "echoed_markup"):
        fake_llm.replay = recording
        job_id = (await post_story(client, {"prompt": "a star who lost her shine"})).json()
        stories[recording] = await story_of(client, job_id["job_id"])
    # Recorded from llama-cpp-python's server with SmolLM2-135M (tests/fixtures/llama_cpp/).
    breaks = stories["single_line_breaks"]["body"]
    assert len(breaks.split("\n\n")) >= 4 and "<story>" not in breaks
    assert stories["paragraph_title"]["title"] == "The Star Who Lost Her Shine"
    assert stories["paragraph_title"]["body"].startswith(
        "There once was a little fox who loved the moon.")
    markup = stories["echoed_markup"]
    assert markup["title"] == "The Star Who Lost Her Shine"
    assert "Leo" in markup["body"] and not re.search(r"</?name>", markup["body"])
    assert not re.search(r"</?idea>", markup["title"] + markup["body"])
