"""Following a background story (LLM_API=responses) when its stream lets the app down: a
response too old to be streamed, a stream gone quiet, a malformed final event, and an
unexpected error while following, which stops the story at the provider.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import replace as dataclass_replace

import pytest

from app.queue.store import JobStore
from app.storytelling.provider import ProviderClient
from app.storytelling.responses import BackgroundStoryteller
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.jobs import started_at_the_provider
from tests.helpers.sql import execute, fetch_one

pytestmark = pytest.mark.anyio


@pytest.fixture
def background(settings):
    return dataclass_replace(settings, llm_api="responses")


@pytest.fixture
def make_background_app(make_app):
    def build(**overrides: object):
        return make_app(llm_api="responses", **overrides)
    return build


async def started_by_a_dead_process(settings, db) -> tuple[int, str]:
    """A job whose process died after starting its story at the provider and saving the
    response id; its heartbeat long stale."""
    job_id, response_id = await started_at_the_provider(settings, JobStore(db), uuid.uuid4(),
                                                         prompt="an old owl")
    await execute(db, "UPDATE story_jobs SET heartbeat_at = now() - interval '1 hour'"
                      " WHERE id = :id", {"id": job_id})
    return job_id, response_id


def written(fake_llm, response_id: str) -> str:
    return fake_llm.response(response_id)["output"][0]["content"][0]["text"]


async def stored_story(db, job_id: int) -> str:
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": job_id})
    return f"{story['title']}\n\n{story['body']}"


async def test_an_adopted_story_six_minutes_old_is_taken_whole_by_a_plain_retrieve(
    make_background_app, background, fake_llm, db, caplog
):
    # A kill -9, then a deploy gap past OpenAI's 5-minute stream window: the story was
    # finished at the provider long ago, and LLM_TIMEOUT_S after its create has passed.
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.stream_window_s = 300
    job_id, response_id = await started_by_a_dead_process(background, db)
    fake_llm.wait_for_status(response_id, "completed")
    fake_llm.backdate(response_id, 360)
    async with serve(make_background_app()) as client:
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    assert await stored_story(db, job_id) == written(fake_llm, response_id).strip()
    assert fake_llm.creates_for(job_id) == 1
    assert f"event=follow_by_retrieves job_id={job_id}" in caplog.text


@pytest.mark.slow
async def test_a_story_too_old_to_stream_is_followed_by_plain_retrieves_words_and_all(
    make_background_app, background, fake_llm, db
):
    fake_llm.hold_after_chunks = 3
    fake_llm.hold()
    job_id, response_id = await started_by_a_dead_process(background, db)
    for _ in range(500):  # the provider has written three chunks, and holds there
        if len(written(fake_llm, response_id).split()) >= 6:
            break
        await asyncio.sleep(0.01)
    so_far = written(fake_llm, response_id)
    fake_llm.stream_window_s = 0.0  # time passes: the story is now too old to stream
    async with serve(make_background_app()) as client:
        for _ in range(500):  # the card shows the words a plain retrieve brought
            page = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
            if page["text_so_far"]:
                break
            await asyncio.sleep(0.02)
        assert page["status"] == "running" and page["text_so_far"].strip() == so_far.strip()
        fake_llm.release()
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    assert await stored_story(db, job_id) == written(fake_llm, response_id).strip()
    assert fake_llm.creates_for(job_id) == 1


async def test_an_unfinished_story_past_its_time_gets_one_plain_retrieve_then_is_stopped(
    make_background_app, background, fake_llm, db
):
    fake_llm.stream_window_s = 300
    fake_llm.hold()
    job_id, response_id = await started_by_a_dead_process(background, db)
    fake_llm.backdate(response_id, 360)  # LLM_TIMEOUT_S (10 s here) passed long ago
    async with serve(make_background_app()) as client:
        job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"], job["error"]) == (
        "failed", "storyteller_timeout", "the storyteller took too long")
    assert fake_llm.retrieves_for(job_id) >= 2  # the refused stream, then a plain retrieve
    assert fake_llm.cancels_for(job_id) == 1
    assert fake_llm.response(response_id)["status"] == "cancelled"
    assert fake_llm.creates_for(job_id) == 1


def quick_to_notice_silence(settings) -> BackgroundStoryteller:
    client = ProviderClient(api_key=settings.openai_api_key, base_url=settings.openai_base_url,
                            max_retries=0, timeout_s=settings.llm_timeout_s)
    return BackgroundStoryteller(client, model=settings.story_model, silence_s=0.5)


@pytest.mark.slow
async def test_a_silent_stream_is_checked_with_a_plain_retrieve_and_the_story_taken(
    background, fake_llm, db, caplog
):
    from app.main import create_app

    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.silent_stream_after_events = 3  # then nothing, while the response completes
    app = create_app(background, storyteller=quick_to_notice_silence(background))
    async with serve(app) as client:
        started = time.monotonic()
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    assert time.monotonic() - started < 5  # not LLM_TIMEOUT_S (10 s here)
    [response_id] = fake_llm.response_ids_for(job_id)
    assert await stored_story(db, job_id) == written(fake_llm, response_id).strip()
    assert fake_llm.creates_for(job_id) == 1
    assert f"event=follow_silent job_id={job_id}" in caplog.text


async def test_a_malformed_final_event_keeps_the_whole_streamed_story_and_says_why(
    make_background_app, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.malformed_final_event = True  # content: null in the final message
    async with serve(make_background_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job  # no "Finish this story", no second call
    [response_id] = fake_llm.response_ids_for(job_id)
    assert await stored_story(db, job_id) == written(fake_llm, response_id).strip()
    assert fake_llm.calls_for(job_id) == 1
    [logged] = [r for r in caplog.records if "event=final_text_unreadable" in r.getMessage()]
    assert logged.exc_info is not None and logged.exc_info[0] is TypeError


async def test_an_unexpected_error_while_following_stops_the_story_at_the_provider(
    make_background_app, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.null_deltas = True  # "delta": null: following it raises TypeError
    fake_llm.chunk_delay_s = 0.05  # still being written when the error comes
    async with serve(make_background_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        [response_id] = fake_llm.response_ids_for(job_id)
        # waited for in a thread: the app's cancel is sent from this test's own loop
        status = (await asyncio.to_thread(
            fake_llm.wait_for_status, response_id, "cancelled"))["status"]
    assert (job["status"], job["error_code"]) == ("failed", "internal")
    assert status == "cancelled" and fake_llm.cancels_for(job_id) == 1  # billing stops
    assert fake_llm.creates_for(job_id) == 1
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and f"job_id={job_id}" in errors[0].getMessage(), caplog.text
    assert errors[0].exc_info is not None and errors[0].exc_info[0] is TypeError
