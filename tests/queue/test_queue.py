"""The queue is the table: QUEUE_MAX waiting jobs in the whole database (plus the running
ones), a 429 that writes nothing, one job at a time per slot, oldest first, and idle
workers woken by NOTIFY from whichever process accepted the job."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import pytest

from app import services as services_module
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import ACCEPT_JSON, one_running_then_waiting, post_story, serve, wait_for_job
from tests.helpers.jobs import add_job
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio


async def test_a_full_queue_refuses_and_writes_nothing_then_the_same_key_succeeds(
    make_app, fake_llm, db
):
    async with serve(make_app(queue_max=2)) as client:
        running, waiting = await one_running_then_waiting(
            client, fake_llm, "one", "two", "three")

        refused = await post_story(client, {"prompt": "four"}, key="fourth")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "queue_full"
        assert int(refused.headers["retry-after"]) > 0
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 3
        assert await fetch_val(db,
            "SELECT count(*) FROM story_jobs WHERE idempotency_key = 'fourth'") == 0
        assert (await client.get("/healthz")).json()["queue_depth"] == 2

        fake_llm.release()
        for job_id in [running, *waiting]:
            assert (await wait_for_job(client, job_id))["status"] == "completed"
        later = await post_story(client, {"prompt": "four"}, key="fourth")
        assert later.status_code == 202 and "idempotent-replayed" not in later.headers
        assert (await wait_for_job(client, later.json()["job_id"]))["status"] == "completed"

    order = [int(r["job_id"]) for r in fake_llm.requests]
    assert order == [running, *waiting, later.json()["job_id"]]
    assert fake_llm.max_in_flight == 1  # one at a time


async def test_a_replay_is_answered_even_when_the_queue_is_full(make_app, fake_llm):
    fake_llm.hold()
    async with serve(make_app(queue_max=1)) as client:
        running = (await post_story(client, {"prompt": "one"})).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, running)
        waiting = await post_story(client, {"prompt": "two"}, key="two")
        assert (await post_story(client, {"prompt": "three"})).status_code == 429
        again = await post_story(client, {"prompt": "two"}, key="two")
        assert again.status_code == 202 and again.json() == waiting.json()
        fake_llm.release()


async def test_pending_jobs_report_their_place_in_line(make_app, fake_llm):
    async with serve(make_app(queue_max=5)) as client:
        running, waiting = await one_running_then_waiting(
            client, fake_llm, "one", "two", "three")
        positions = [(await client.get(f"/stories/jobs/{j}", headers=ACCEPT_JSON)).json()
                     for j in [running, *waiting]]
        assert "position" not in positions[0]  # running
        assert [p["position"] for p in positions[1:]] == [1, 2]
        card = (await client.get(f"/stories/jobs/{waiting[1]}")).text
        assert "Number 2 in line" in card
        home = (await client.get("/")).text  # every card in progress, from one query
        assert "Number 1 in line" in home and "Number 2 in line" in home
        assert (await client.get("/healthz")).json()["queue_depth"] == 2
        fake_llm.release()


async def test_worker_concurrency_writes_that_many_at_once(make_app, fake_llm):
    fake_llm.hold()
    async with serve(make_app(worker_concurrency=3, queue_max=10)) as client:
        job_ids = [(await post_story(client, {"prompt": f"story {i}"})).json()["job_id"]
                   for i in range(5)]
        for job_id in job_ids[:3]:
            await asyncio.to_thread(fake_llm.wait_for_call, job_id)
        statuses = [(await client.get(f"/stories/jobs/{j}", headers=ACCEPT_JSON)).json()
                    ["status"] for j in job_ids]
        assert statuses == ["running"] * 3 + ["pending"] * 2
        fake_llm.release()
        for job_id in job_ids:
            assert (await wait_for_job(client, job_id))["status"] == "completed"
    assert fake_llm.max_in_flight == 3
    assert all(fake_llm.calls_for(j) == 1 for j in job_ids)


async def test_a_serve_only_process_runs_no_jobs(make_app, fake_llm, db):
    async with serve(make_app(worker_concurrency=0)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        health = (await client.get("/healthz")).json()
        await asyncio.sleep(0.5)
        job = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
    assert health["worker"] == "off" and health["queue_depth"] == 1
    assert job["status"] == "pending" and job["position"] == 1
    assert fake_llm.total_calls == 0


async def test_a_job_accepted_by_another_process_wakes_an_idle_worker_at_once(
    make_app, fake_llm, database_url, monkeypatch
):
    # The idle worker re-checks the queue once an hour: only the NOTIFY can wake it within
    # the wait for the call.
    monkeypatch.setattr(services_module, "IDLE_RECHECK_S", 3600.0)
    async with serve(make_app(worker_concurrency=0)) as web, serve(make_app()) as worker_app:
        services = worker_app._transport.app.state.services
        assert services.wakeup.recheck_s == 3600.0
        await wait_for(lambda: services.wakeup.listening)
        for attempt in range(3):
            job_id = (await post_story(web, {"prompt": f"story {attempt}"})).json()["job_id"]
            await asyncio.to_thread(fake_llm.wait_for_call, job_id)
            if attempt == 0:
                # The LISTEN connection drops: it is made again, and wake-ups go on.
                await terminate_listeners(database_url)
                await wait_for(lambda: not services.wakeup.listening)
                await wait_for(lambda: services.wakeup.listening)
        assert (await wait_for_job(web, job_id))["status"] == "completed"


async def test_a_job_whose_notification_was_lost_still_runs(make_app, fake_llm, db):
    async with serve(make_app()) as client:
        # Committed with no NOTIFY, as when the accepting process died right after commit.
        job = await add_job(JobStore(db), "lost-ack", StoryRequest(prompt="a lost ack"), "h")
        started = time.monotonic()
        assert (await wait_for_job(client, job.id))["status"] == "completed"
        assert time.monotonic() - started < 5  # the re-check timer found it
    assert fake_llm.calls_for(job.id) == 1


async def wait_for(condition, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def terminate_listeners(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND query LIKE 'LISTEN%'")
    finally:
        await conn.close()
