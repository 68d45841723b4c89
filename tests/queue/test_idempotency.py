"""Idempotency-Key: a retry returns the same job, and never makes a second LLM call."""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers.app import JSON, post_story, serve, wait_for_job
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio

BODY = {"prompt": "a dragon who is afraid of the dark", "child_name": "Mia", "age": 5}


async def test_a_replay_returns_the_same_job_with_its_current_status(client, fake_llm):
    first = await post_story(client, BODY, key="bedtime-1")
    job_id = first.json()["job_id"]
    await wait_for_job(client, job_id)
    again = await post_story(client, BODY, key="bedtime-1")
    assert again.status_code == 202
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["location"] == f"/stories/jobs/{job_id}"
    assert again.json() == {"job_id": job_id, "status": "completed",
                            "poll_url": f"/stories/jobs/{job_id}"}
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.total_calls == 1


async def test_the_same_request_normalised_is_a_replay(client):
    first = await post_story(client, {"prompt": "owls", "length": "medium", "age": 4}, key="k")
    for body in (
        {"age": 4, "prompt": "  owls  "},
        {"prompt": "owls", "age": 4, "child_name": None},
        {"prompt": "owls", "age": 4, "child_name": ""},
    ):
        again = await post_story(client, body, key="k")
        assert again.status_code == 202, body
        assert again.json()["job_id"] == first.json()["job_id"]


async def test_the_quoted_key_is_the_same_key(client):
    first = await post_story(client, BODY, key="abc")
    again = await post_story(client, BODY, key='"abc"')
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["job_id"] == first.json()["job_id"]


async def test_the_same_key_with_another_body_is_refused(client, db):
    await post_story(client, BODY, key="k1")
    for body in ({**BODY, "age": 6}, {**BODY, "length": "long"}, {"prompt": "a whale"}):
        response = await post_story(client, body, key="k1")
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


async def test_fifty_racing_copies_make_one_job_and_one_call(make_app, fake_llm, db):
    fake_llm.hold()  # keep the job running while the copies race
    async with serve(make_app(queue_max=1)) as client:
        responses = await asyncio.gather(
            *(client.post("/stories/generate", json=BODY,
                          headers={**JSON, "Idempotency-Key": "race"}) for _ in range(50))
        )
        assert [r.status_code for r in responses] == [202] * 50
        job_ids = {r.json()["job_id"] for r in responses}
        assert len(job_ids) == 1
        assert sum(r.headers.get("idempotent-replayed") == "true" for r in responses) == 49
        fake_llm.release()
        job = await wait_for_job(client, job_ids.pop())
    assert job["status"] == "completed"
    assert fake_llm.total_calls == 1
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1
