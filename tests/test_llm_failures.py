"""When the storyteller fails, the job fails with a short reason after exactly one call."""

from __future__ import annotations

import logging

import pytest

from tests.conftest import post_story, serve, wait_for_job
from tests.fake_llm import free_port

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("500", "the storyteller failed (HTTP 500)"),
        ("429", "the storyteller is busy (rate limited)"),
        ("malformed", "the storyteller sent an unreadable answer"),
        ("empty", "the storyteller sent an empty story"),
        ("refusal", "the storyteller declined to write this story"),
        ("no_choices", "the storyteller sent no story"),
    ],
)
async def test_a_failing_storyteller_fails_the_job_after_one_call(
    client, fake_llm, mode, error, caplog
):
    fake_llm.mode = mode
    caplog.set_level(logging.WARNING, logger="bedtime")
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    assert (job["status"], job["error"], job["story_id"]) == ("failed", error, None)
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.total_calls == 1
    assert f"event=job_failed job_id={job_id}" in caplog.text  # the full error is logged


async def test_a_storyteller_past_the_timeout_fails_the_job_after_one_call(make_app, fake_llm):
    fake_llm.delay_s = 3
    async with serve(make_app(llm_timeout_s=1)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert (job["status"], job["error"]) == ("failed", "the storyteller took too long")
    assert fake_llm.calls_for(job_id) == 1


async def test_a_refused_connection_fails_the_job(make_app, fake_llm):
    closed = f"http://127.0.0.1:{free_port()}/v1"
    async with serve(make_app(openai_base_url=closed)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert (job["status"], job["error"]) == ("failed", "could not reach the storyteller")
    assert fake_llm.total_calls == 0


async def test_the_worker_carries_on_after_a_failure(client, fake_llm):
    fake_llm.mode = "500"
    failed = (await post_story(client, {"prompt": "one"})).json()["job_id"]
    assert (await wait_for_job(client, failed))["status"] == "failed"
    fake_llm.mode = "ok"
    fine = (await post_story(client, {"prompt": "two"})).json()["job_id"]
    assert (await wait_for_job(client, fine))["status"] == "completed"
