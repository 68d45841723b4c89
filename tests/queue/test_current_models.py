"""It still works next winter: a current model writes with one billed call whatever
optional parameters it refuses, and a model the provider no longer offers is named (in
the log at start-up, on the home page, in the failed job, in the 503 that refuses a new
story once it is known), in both provider APIs, with the real openai client over HTTP
against the fake."""

from __future__ import annotations

import asyncio
import html
import logging
import time

import pytest

from tests.helpers.app import post_story, serve, wait_for_job
from tests.helpers.waits import WAIT_S

pytestmark = pytest.mark.anyio

MODES = ("chat", "responses")
HX = {"HX-Request": "true"}


async def until(done, timeout_s: float = WAIT_S) -> None:
    """Wait (without blocking the app) until `done()` is true."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError("never happened")
        await asyncio.sleep(0.02)


def billed(fake_llm, job_id: int) -> list[dict]:
    return [r["body"] for r in fake_llm.requests if r["job_id"] == str(job_id)]


@pytest.mark.parametrize("llm_api", MODES)
async def test_gpt_6_luna_refusing_max_tokens_and_temperature_writes_with_one_billed_call(
    make_app, fake_llm, llm_api
):
    fake_llm.refuse("gpt-6-luna", "max_tokens", "temperature")
    async with serve(make_app(story_model="gpt-6-luna", llm_api=llm_api)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    # A server of one's own gets both spellings of the cap: its refusal of max_tokens is
    # answered before any word (unbilled) and the one billed call goes without it.
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.unbilled_for(job_id) <= 1
    [sent] = billed(fake_llm, job_id)
    assert "temperature" not in sent and "max_tokens" not in sent


@pytest.mark.parametrize("llm_api", MODES)
async def test_a_refused_temperature_is_dropped_once_billed_once_and_remembered(
    make_app, fake_llm, llm_api, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.refuse("gpt-6-luna", "temperature")
    app = make_app(story_model="gpt-6-luna", llm_api=llm_api, story_temperature=0.8)
    async with serve(app) as client:
        first = (await post_story(client)).json()["job_id"]
        assert (await wait_for_job(client, first))["status"] == "completed"
        second = (await post_story(client)).json()["job_id"]
        assert (await wait_for_job(client, second))["status"] == "completed"
    # The refusal came before any word and billed nothing; the retry was the one bill.
    assert (fake_llm.unbilled_for(first), fake_llm.calls_for(first)) == (1, 1)
    assert fake_llm.unbilled_requests[0]["body"]["temperature"] == 0.8
    assert "temperature" not in billed(fake_llm, first)[0]
    # Remembered for the model: the next job leaves it out straight away.
    assert (fake_llm.unbilled_for(second), fake_llm.calls_for(second)) == (0, 1)
    assert caplog.text.count("event=parameter_refused model=gpt-6-luna parameter=temperature") == 1


@pytest.mark.parametrize("llm_api", MODES)
async def test_story_temperature_is_sent_when_set(make_app, fake_llm, llm_api):
    async with serve(make_app(llm_api=llm_api, story_temperature=0.7)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        assert (await wait_for_job(client, job_id))["status"] == "completed"
    [sent] = billed(fake_llm, job_id)
    assert sent["temperature"] == 0.7


async def test_a_server_refusing_max_completion_tokens_gets_max_tokens_and_it_is_remembered(
    make_app, fake_llm
):
    fake_llm.refuse_max_completion_tokens = True  # an older local server
    async with serve(make_app(llm_api="chat")) as client:
        first = (await post_story(client, {"prompt": "an owl", "length": "short"})).json()[
            "job_id"]
        assert (await wait_for_job(client, first))["status"] == "completed"
        second = (await post_story(client)).json()["job_id"]
        assert (await wait_for_job(client, second))["status"] == "completed"
    assert (fake_llm.unbilled_for(first), fake_llm.calls_for(first)) == (1, 1)
    assert "max_completion_tokens" in fake_llm.unbilled_requests[0]["body"]
    [retried] = billed(fake_llm, first)
    assert "max_completion_tokens" not in retried
    assert retried["max_tokens"] == fake_llm.unbilled_requests[0]["body"][
        "max_completion_tokens"]
    assert (fake_llm.unbilled_for(second), fake_llm.calls_for(second)) == (0, 1)
    assert "max_tokens" in billed(fake_llm, second)[0]


async def test_a_refusal_of_a_parameter_the_app_cannot_leave_out_is_not_retried(
    make_app, fake_llm
):
    fake_llm.refuse("fake-model", "messages")
    async with serve(make_app(story_temperature=0.8)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        card = html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)
    assert (job["status"], job["error_code"]) == ("failed", "storyteller_failed")
    assert (fake_llm.calls_for(job_id), fake_llm.unbilled_for(job_id)) == (0, 1)
    assert "The storyteller answered with an error." in card
    assert "whoever set up the app can see why in its log" in card


@pytest.mark.parametrize("llm_api", MODES)
@pytest.mark.slow
async def test_a_retired_model_is_named_at_start_up_on_the_home_page_and_refuses_new_stories(
    make_app, fake_llm, llm_api, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.retired_models = {"gpt-4o-mini"}
    async with serve(make_app(story_model="gpt-4o-mini", llm_api=llm_api)) as client:
        await until(lambda: "event=model_unavailable" in caplog.text)
        home = await client.get("/")
        assert ("Stories can't be written: the storyteller no longer offers "
                "<code>gpt-4o-mini</code>. Set STORY_MODEL to a current model.") in home.text
        started = time.monotonic()
        refused = await post_story(client)
        assert time.monotonic() - started < 3  # at once, not after a timeout
    [warning] = [r for r in caplog.records if "event=model_unavailable" in r.getMessage()]
    assert warning.levelno == logging.WARNING
    assert "setting=STORY_MODEL model=gpt-4o-mini" in warning.getMessage()
    # Known before anyone asked: refused, naming the model, with no job and no call.
    assert refused.status_code == 503
    error = refused.json()["error"]
    assert error["code"] == "storyteller_unavailable"
    assert "gpt-4o-mini" in error["message"] and "STORY_MODEL" in error["message"]
    assert "LLM_API" not in error["message"]
    assert fake_llm.total_calls == 0 and fake_llm.unbilled_requests == []


@pytest.mark.parametrize("llm_api", MODES)
async def test_a_model_not_found_during_a_job_turns_the_notice_on(
    make_app, fake_llm, llm_api, caplog
):
    """A server without `GET /models/{id}` is not blocked (no notice after the check), and
    the first job the provider refuses for its model fails at once, naming the model, and
    turns it on."""
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.models_api = False
    fake_llm.retired_models = {"gpt-4o-mini"}
    async with serve(make_app(story_model="gpt-4o-mini", llm_api=llm_api)) as client:
        await until(lambda: "event=model_check_skipped" in caplog.text)
        assert "no longer offers" not in (await client.get("/")).text
        assert "event=model_unavailable" not in caplog.text
        started = time.monotonic()
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        assert time.monotonic() - started < 3  # at once, not after a timeout
        card = html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)
        home = await client.get("/")
    assert (job["status"], job["error_code"]) == ("failed", "model_unavailable")
    assert "STORY_MODEL" in job["error"] and "LLM_API" not in job["error"]
    [failed] = [r.getMessage() for r in caplog.records
                if f"event=job_failed job_id={job_id}" in r.getMessage()]
    assert "error=model_unavailable" in failed and "gpt-4o-mini" in failed  # the log names it
    assert fake_llm.calls_for(job_id) == 0 and fake_llm.unbilled_for(job_id) == 1
    assert "The storyteller's model is no longer offered" in card
    assert "Try again" not in card and "try again" not in card
    assert "the storyteller no longer offers <code>gpt-4o-mini</code>" in home.text
    assert caplog.text.count("event=model_unavailable setting=STORY_MODEL model=gpt-4o-mini") == 1


async def test_a_server_without_model_lookup_writes_stories_quietly(make_app, fake_llm, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.models_api = False
    async with serve(make_app()) as client:
        await until(lambda: "event=model_check_skipped" in caplog.text)
        job_id = (await post_story(client)).json()["job_id"]
        assert (await wait_for_job(client, job_id))["status"] == "completed"
        assert "no longer offers" not in (await client.get("/")).text
    assert fake_llm.model_lookups == ["fake-model"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and "model" in r.getMessage()]


async def test_an_offered_model_is_checked_once_and_no_notice_shows(make_app, fake_llm, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    async with serve(make_app(story_model="gpt-6-luna")) as client:
        await until(lambda: "event=model_checked" in caplog.text)
        assert "no longer offers" not in (await client.get("/")).text
    assert fake_llm.model_lookups == ["gpt-6-luna"]
    assert "event=model_deprecated" not in caplog.text


async def test_a_model_the_library_marks_deprecated_is_warned_of_with_its_shutdown_date(
    make_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    async with serve(make_app(story_model="gpt-4o-mini")) as client:
        await until(lambda: "event=model_checked" in caplog.text)
        assert "no longer offers" not in (await client.get("/")).text  # offered still
    [warning] = [r for r in caplog.records if "event=model_deprecated" in r.getMessage()]
    assert warning.levelno == logging.WARNING
    assert "setting=STORY_MODEL model=gpt-4o-mini shutdown=2027-01-14" in warning.getMessage()


async def test_an_image_model_the_library_marks_deprecated_is_warned_of_once_it_serves(
    make_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    async with serve(make_app(illustrator="openai", image_model="gpt-image-1")):
        await until(lambda: "event=model_checked setting=IMAGE_MODEL" in caplog.text)
    [warning] = [r for r in caplog.records if "setting=IMAGE_MODEL" in r.getMessage()
                 and r.levelno >= logging.WARNING]
    assert warning.levelno == logging.WARNING
    assert "event=model_deprecated" in warning.getMessage()
    assert "model=gpt-image-1 shutdown=2026-10-23" in warning.getMessage()


async def test_the_model_check_is_one_free_retrieve_with_a_short_timeout_and_no_retries(
    settings, fake_llm
):
    """Asked with the app's own check: GET /models/{model} (no create), bounded by 5 s,
    never retried."""
    from app.runtime import make_storyteller
    from app.storytelling.availability import MODEL_CHECK_TIMEOUT_S, check_model

    storyteller = make_storyteller(settings)
    try:
        await check_model(storyteller.client, storyteller.availability)
    finally:
        await storyteller.aclose()
    assert fake_llm.model_lookups == ["fake-model"] and fake_llm.total_calls == 0
    assert MODEL_CHECK_TIMEOUT_S <= 5
