"""The JSON API of CONTRACT.md: every status and error code, over the real app."""

from __future__ import annotations

import asyncio
import contextlib
import re

import pytest

from app.version import version
from tests.helpers.app import ACCEPT_JSON, JSON, new_key, post_story, serve, wait_for_job
from tests.helpers.database import database_outage
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def error_code(response) -> str:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["message"]
    return body["error"]["code"]


async def job_count(db) -> int:
    return await fetch_val(db, "SELECT count(*) FROM story_jobs")


async def test_a_story_is_requested_written_polled_and_read(client, fake_llm):
    response = await post_story(
        client, {"prompt": "  a dragon who is afraid of the dark ", "child_name": "Mia",
                 "age": 5, "length": "short"})
    assert response.status_code == 202
    body = response.json()
    job_id = body["job_id"]
    assert body == {"job_id": job_id, "status": "pending", "poll_url": f"/stories/jobs/{job_id}"}
    assert response.headers["location"] == f"/stories/jobs/{job_id}"
    assert "idempotent-replayed" not in response.headers

    job = await wait_for_job(client, job_id)
    assert set(job) == {"job_id", "status", "story_id", "error", "error_code", "created_at",
                        "started_at", "completed_at"}
    assert job["status"] == "completed" and job["error"] is None
    assert all(ISO_UTC.match(job[k]) for k in ("created_at", "started_at", "completed_at"))

    story = (await client.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()
    assert story["story_id"] == job["story_id"] and story["job_id"] == job_id
    assert story["title"] == f"The Story of Job {job_id}"
    assert story["body"].startswith("Once upon a time")
    assert (story["prompt"], story["child_name"], story["age"], story["length"]) == (
        "a dragon who is afraid of the dark", "Mia", 5, "short")
    assert ISO_UTC.match(story["created_at"])

    call = fake_llm.requests[0]
    assert fake_llm.calls_for(job_id) == 1
    assert call["headers"]["x-story-job-id"] == str(job_id)
    assert call["body"]["model"] == "fake-model"
    prompt_sent = call["body"]["messages"][-1]["content"]
    assert "<idea>a dragon who is afraid of the dark</idea>" in prompt_sent


async def test_the_library_lists_stories_newest_first(client):
    ids = []
    for prompt in ("first", "second"):
        job_id = (await post_story(client, {"prompt": prompt})).json()["job_id"]
        ids.append((await wait_for_job(client, job_id))["story_id"])
    listing = (await client.get("/stories", headers=ACCEPT_JSON)).json()
    assert [s["story_id"] for s in listing["stories"]] == ids[::-1]
    assert set(listing["stories"][0]) == {"story_id", "title", "created_at"}


async def test_a_failed_job_reports_its_error_and_no_story(client, fake_llm):
    fake_llm.mode = "500"
    job = await wait_for_job(client, (await post_story(client)).json()["job_id"])
    assert job["status"] == "failed" and job["story_id"] is None
    assert (job["error_code"], job["error"]) == ("storyteller_failed", "the storyteller failed")


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, "idempotency_key_missing"),
        ({"Idempotency-Key": ""}, "idempotency_key_invalid"),
        ({"Idempotency-Key": '""'}, "idempotency_key_invalid"),
        ({"Idempotency-Key": "k" * 256}, "idempotency_key_invalid"),
        ({"Idempotency-Key": "café".encode()}, "idempotency_key_invalid"),
        ({"Idempotency-Key": "tab\there"}, "idempotency_key_invalid"),
    ],
)
async def test_a_missing_or_malformed_key_is_refused(client, db, headers, code):
    response = await client.post(
        "/stories/generate", json={"prompt": "a moon"}, headers={**JSON, **headers}
    )
    assert response.status_code == 400
    assert error_code(response) == code
    assert await job_count(db) == 0


async def test_a_key_of_255_printable_characters_is_accepted(client):
    assert (await post_story(client, key="k" * 254 + "~")).status_code == 202


async def test_malformed_json_is_refused(client, db):
    for body in (b"{not json", b"", b"\xff\xfe"):
        response = await client.post(
            "/stories/generate", content=body, headers={**JSON, "Idempotency-Key": new_key()}
        )
        assert response.status_code == 400
        assert error_code(response) == "malformed_json"
    assert await job_count(db) == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "prompt"),
        ({"prompt": "   "}, "prompt"),
        ({"prompt": "x" * 501}, "prompt"),
        ({"prompt": 7}, "prompt"),
        ({"prompt": "ok", "child_name": "n" * 41}, "child_name"),
        ({"prompt": "ok", "child_name": 3}, "child_name"),
        ({"prompt": "ok", "age": 0}, "age"),
        ({"prompt": "ok", "age": 13}, "age"),
        ({"prompt": "ok", "age": "5"}, "age"),
        ({"prompt": "ok", "age": 5.5}, "age"),
        ({"prompt": "ok", "age": True}, "age"),
        ({"prompt": "ok", "length": "epic"}, "length"),
        ({"prompt": "ok", "colour": "blue"}, "colour"),
    ],
)
async def test_an_invalid_field_is_named(client, db, body, field):
    response = await post_story(client, body)
    assert response.status_code == 422
    assert error_code(response) == "invalid_request"
    assert field in response.json()["error"]["message"]
    assert await job_count(db) == 0


async def test_a_body_that_is_not_an_object_is_invalid(client):
    response = await post_story(client, ["a", "list"])
    assert response.status_code == 422 and error_code(response) == "invalid_request"


async def test_the_prompt_limit_counts_characters_after_trimming(client):
    assert (await post_story(client, {"prompt": " " + "é" * 500 + " "})).status_code == 202


async def test_a_body_over_16_kib_is_refused_before_parsing(client, db):
    big = b'{"prompt": "' + b"x" * (16 * 1024) + b'"}'
    response = await client.post(
        "/stories/generate", content=big, headers={**JSON, "Idempotency-Key": new_key()}
    )
    assert response.status_code == 413 and error_code(response) == "body_too_large"

    async def chunks():  # no Content-Length: the limit holds while reading
        for _ in range(20):
            yield b"x" * 1024

    response = await client.post(
        "/stories/generate", content=chunks(), headers={**JSON, "Idempotency-Key": new_key()}
    )
    assert response.status_code == 413 and error_code(response) == "body_too_large"
    assert await job_count(db) == 0


async def test_new_jobs_are_refused_while_shutting_down_but_replays_answer(make_app, db):
    app = make_app()
    async with serve(app) as client:
        replayed_key = new_key()
        first = await post_story(client, key=replayed_key)
        app.state.services.intake.closed = True
        response = await post_story(client)
        assert response.status_code == 503
        assert error_code(response) == "shutting_down" and int(response.headers["retry-after"]) > 0
        again = await post_story(client, key=replayed_key)
        assert again.status_code == 202 and again.json()["job_id"] == first.json()["job_id"]
    assert await job_count(db) == 1


@pytest.mark.parametrize("job_id", ["999", "abc", "0", "-1", "99999999999999999999", "1.5", "１"])
async def test_an_unknown_job_is_not_found(client, job_id):
    response = await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)
    assert response.status_code == 404 and error_code(response) == "not_found"


@pytest.mark.parametrize("story_id", ["999", "abc", "99999999999999999999"])
async def test_an_unknown_story_is_not_found(client, story_id):
    response = await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)
    assert response.status_code == 404 and error_code(response) == "not_found"


@pytest.mark.slow
async def test_health_reports_database_worker_and_queue(client, fake_llm):
    fake_llm.hold()
    for _ in range(3):
        await post_story(client)
    health = (await client.get("/healthz")).json()
    assert health["status"] == "ok" and health["database"] == "ok"
    assert health["worker"] == "running"
    assert health["queue_depth"] in (2, 3)  # the first may already be running
    assert health["version"] == version()  # which release answers


async def test_health_is_503_when_this_process_worker_has_stopped(client):
    services = client._transport.app.state.services
    worker_task = next(task for task in services.tasks if task.get_name() == "worker")
    worker_task.cancel()  # as if it had crashed
    with contextlib.suppress(asyncio.CancelledError):
        await worker_task
    response = await client.get("/healthz")
    assert response.status_code == 503
    assert response.json() | {"queue_depth": 0} == {
        "status": "unavailable", "database": "ok", "worker": "stopped", "queue_depth": 0,
        "version": version()}


async def test_a_database_outage_answers_503_not_a_traceback(client, database_url):
    job_id = (await post_story(client)).json()["job_id"]
    await wait_for_job(client, job_id)
    async with database_outage(database_url):
        health = await asyncio.wait_for(client.get("/healthz"), 10)
        assert health.status_code == 503
        assert health.json()["status"] == "unavailable" and health.json()["database"] == "down"
        response = await asyncio.wait_for(
            client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON), 10)
        assert response.status_code == 503 and error_code(response) == "unavailable"
        page = await asyncio.wait_for(client.get(f"/stories/jobs/{job_id}"), 10)
        assert page.status_code == 503 and "Traceback" not in page.text
    # The pool recovers by itself once the database is back.
    response = await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)
    assert response.status_code == 200 and response.json()["status"] == "completed"
