"""When the storyteller fails, the job fails with a short reason after exactly one call; what
the model sends back is cleaned (or cut at its last sentence) and stored (issue 10, item 6)."""

from __future__ import annotations

import logging
import time
from dataclasses import replace

import pytest

from app.lengths import LENGTH_WORDS
from app.main import create_app
from app.queue import storing as storing_module
from app.stories import Story, StoryRequest, clean_text
from app.storytelling import reader as reader_module
from app.storytelling.limits import LENGTH_MAX_TOKENS, token_budget
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.fake_llm import free_port
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("mode", "code", "detail"),
    [
        ("500", "storyteller_failed", "HTTP 500"),
        ("429", "storyteller_busy", "HTTP 429"),
        ("malformed", "storyteller_unreadable", "detail="),
        ("empty", "storyteller_empty", "it sent nothing"),
        ("refusal", "declined", "refused"),
        ("no_choices", "storyteller_empty", "no choices"),
    ],
)
async def test_a_failing_storyteller_fails_the_job_after_one_call(
    client, fake_llm, mode, code, detail, caplog
):
    fake_llm.mode = mode
    caplog.set_level(logging.WARNING, logger="bedtime")
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"], job["story_id"]) == ("failed", code, None)
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.total_calls == 1
    # the code is stored; the provider's own detail is logged
    [failed] = [r.getMessage() for r in caplog.records
                if f"event=job_failed job_id={job_id}" in r.getMessage()]
    assert f"error={code}" in failed and detail in failed


@pytest.mark.slow
async def test_a_storyteller_past_the_timeout_fails_the_job_after_one_call(make_app, fake_llm):
    fake_llm.delay_s = 3
    async with serve(make_app(llm_timeout_s=1)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"], job["error"]) == (
        "failed", "storyteller_timeout", "the storyteller took too long")
    assert fake_llm.calls_for(job_id) == 1


async def test_a_refused_connection_fails_the_job(make_app, fake_llm):
    closed = f"http://127.0.0.1:{free_port()}/v1"
    async with serve(make_app(openai_base_url=closed)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"], job["error"]) == (
        "failed", "storyteller_unreachable", "could not reach the storyteller")
    assert fake_llm.total_calls == 0


async def test_the_worker_carries_on_after_a_failure(client, fake_llm):
    fake_llm.mode = "500"
    failed = (await post_story(client, {"prompt": "one"})).json()["job_id"]
    assert (await wait_for_job(client, failed))["status"] == "failed"
    fake_llm.mode = "ok"
    fine = (await post_story(client, {"prompt": "two"})).json()["job_id"]
    assert (await wait_for_job(client, fine))["status"] == "completed"


# -- what the model sends back ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "title", "body"),
    [
        # NUL, escape, bell, delete and vertical tab go; newline and tab stay; CRLF is \n.
        ("nul", "The Night Light",
         "Once upon a time a lamp [0mglowed.\n\nIt hummed softly. The end."),
        ("surrogate", "The Moon  Boat", "A boat sailed  to the moon. Goodnight."),
    ],
)
async def test_model_output_with_unstorable_characters_is_cleaned_and_stored(
    client, fake_llm, mode, title, body
):
    fake_llm.mode = mode
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id, timeout_s=5)
    assert job["status"] == "completed", job
    story = (await client.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()
    assert (story["title"], story["body"]) == (title, body)
    page = await client.get(f"/stories/{job['story_id']}")
    assert page.status_code == 200
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.total_calls == 1


def test_cleaning_keeps_newlines_and_tabs_and_drops_every_other_control_character():
    controls = "".join(chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)])
    assert clean_text(f"a{controls}b\ud800c\udfffd") == "a\t\n\nbcd"  # \r is a line break
    assert clean_text("one\r\ntwo\rthree") == "one\ntwo\nthree"
    assert clean_text("Ünïcödé ✨ 🦊 “quotes” — fine") == "Ünïcödé ✨ 🦊 “quotes” — fine"


async def test_a_story_cut_off_by_the_token_limit_ends_at_its_last_full_sentence(
    client, fake_llm, caplog
):
    fake_llm.mode = "length"
    caplog.set_level(logging.INFO, logger="bedtime")
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id, timeout_s=5)
    assert job["status"] == "completed", job
    story = (await client.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()
    assert story["title"] == "The Long Night"
    assert story["body"] == ('Once upon a time there was a sleepy fox. She curled up by the '
                             'fire! "Goodnight," said the owl.')
    assert f"event=story_truncated job_id={job_id}" in caplog.text
    assert fake_llm.calls_for(job_id) == 1


async def test_a_story_cut_off_before_it_began_fails_the_job_with_the_reason(client, fake_llm):
    fake_llm.mode, fake_llm.story = "length", "  \n "
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id, timeout_s=5)
    assert (job["status"], job["error_code"]) == ("failed", "storyteller_empty")
    assert fake_llm.calls_for(job_id) == 1


class _Unstorable:
    """A storyteller whose 'story' cannot be stored: counts its calls."""

    name = "unstorable"

    def __init__(self, story: object) -> None:
        self.story = story
        self.calls = 0

    async def write(self, request: StoryRequest, *, job_id: int, on_text=None) -> Story:
        self.calls += 1
        return self.story  # type: ignore[return-value]

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize(
    "story",
    [
        pytest.param(Story(title=None, body="Once.", model="m"),  # type: ignore[arg-type]
                     id="no-title"),
        pytest.param(Story(title="T", body=b"bytes", model="m"),  # type: ignore[arg-type]
                     id="bytes-body"),
        pytest.param("not a story at all", id="not-a-story"),
    ],
)
async def test_an_unstorable_story_fails_the_job_at_once_with_a_reason(settings, story, caplog):
    caplog.set_level(logging.WARNING, logger="bedtime")
    storyteller = _Unstorable(story)
    async with serve(create_app(settings, storyteller=storyteller)) as client:
        started = time.monotonic()
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id, timeout_s=5)
    # At once: not left running until the sweeper calls it "interrupted".
    assert time.monotonic() - started < settings.heartbeat_stale_s
    assert (job["status"], job["error_code"], job["error"]) == (
        "failed", "not_saved", "the story could not be saved")
    assert storyteller.calls == 1
    assert f"event=job_failed job_id={job_id}" in caplog.text


async def test_a_story_the_database_refuses_fails_the_job_at_once(
    client, fake_llm, monkeypatch, db
):
    """What a NUL used to do: PostgreSQL refuses the text. Not an outage, so no waiting."""
    monkeypatch.setattr(reader_module, "clean_text", lambda text: text)
    monkeypatch.setattr(storing_module, "clean_story", lambda story: story)
    fake_llm.story = "Title\n\nA NUL\x00 in the middle."
    started = time.monotonic()
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id, timeout_s=5)
    assert time.monotonic() - started < 2  # the stale-heartbeat limit of these tests
    assert (job["status"], job["error_code"], job["error"]) == (
        "failed", "not_saved", "the story could not be saved")
    assert fake_llm.calls_for(job_id) == 1
    assert await fetch_val(db, "SELECT count(*) FROM stories") == 0


# -- the request: budget and shape ------------------------------------------------------------


def test_the_token_budget_comfortably_covers_the_words_asked_for():
    for length, words in LENGTH_WORDS.items():
        needed = words * 1.4 + 30  # ~1.4 tokens a word, plus the title line
        assert LENGTH_MAX_TOKENS[length] >= 1.25 * needed, length


@pytest.mark.parametrize("model", ["gpt-6-luna", "gpt-4o-mini", "o3-mini", "llama3.2"])
@pytest.mark.parametrize("llm_api", ["chat", "responses"])
async def test_a_server_of_one_s_own_gets_the_cap_in_every_spelling_and_no_room_to_reason(
    make_app, fake_llm, model, llm_api
):
    """A custom OPENAI_BASE_URL may honour either spelling of the token cap and ignore the
    other: chat sends both, sized to the length alone (STORY_REASONING_TOKENS is 0 by
    default there); no sampling parameter unless one is set."""
    async with serve(make_app(story_model=model, llm_api=llm_api)) as client:
        body = {"prompt": "a sleepy owl", "length": "long"}
        job_id = (await post_story(client, body)).json()["job_id"]
        assert (await wait_for_job(client, job_id, timeout_s=5))["status"] == "completed"
    [request] = fake_llm.requests
    sent = request["body"]
    assert sent["model"] == model
    if llm_api == "chat":
        assert sent["max_completion_tokens"] == sent["max_tokens"] == LENGTH_MAX_TOKENS["long"]
    else:
        assert sent["max_output_tokens"] == LENGTH_MAX_TOKENS["long"]
    assert "temperature" not in sent
    assert request["headers"]["x-story-job-id"] == str(job_id)


@pytest.mark.parametrize("llm_api", ["chat", "responses"])
async def test_story_reasoning_tokens_widens_the_cap(make_app, fake_llm, llm_api):
    async with serve(make_app(story_reasoning_tokens=500, llm_api=llm_api)) as client:
        job_id = (await post_story(client, {"prompt": "an owl", "length": "short"})).json()
        assert (await wait_for_job(client, job_id["job_id"]))["status"] == "completed"
    [request] = fake_llm.requests
    caps = {"max_completion_tokens", "max_tokens", "max_output_tokens"} & set(request["body"])
    assert {request["body"][cap] for cap in caps} == {LENGTH_MAX_TOKENS["short"] + 500}


def test_openai_itself_gets_the_current_spelling_with_room_to_reason(settings):
    """OpenAI's own models refuse nothing they are not sent: one spelling, and room for
    hidden reasoning (only used tokens are billed)."""
    from app.runtime import make_storyteller
    from app.storytelling.limits import CHAT_TOKEN_CAPS

    storyteller = make_storyteller(replace(settings, openai_base_url=None, llm_api="chat"))
    options = storyteller.limits.options("gpt-6-luna", CHAT_TOKEN_CAPS, "long")
    assert options == {"max_completion_tokens": token_budget("long")}
    assert token_budget("long") > LENGTH_MAX_TOKENS["long"]


def test_the_provider_client_bounds_the_call_and_connecting_apart(settings):
    """LLM_TIMEOUT_S bounds each wait on the provider (for httpx: each read); a provider that
    does not accept the connection is given up after 10 s, not after the whole limit; and
    the client never retries."""
    import openai

    from app.runtime import make_storyteller

    client = make_storyteller(replace(settings, llm_timeout_s=180)).client()
    assert client.timeout == openai.Timeout(180, connect=10)
    assert client.max_retries == 0
