"""Restarts: waiting jobs survive and run, oldest first; a job whose process died while
running ends 'interrupted', never re-run."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from app.queue.jobs import Status
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import one_running_then_waiting, post_story, serve, wait_for_job
from tests.helpers.jobs import add_job
from tests.helpers.sql import execute, fetch_val
from tests.helpers.waits import until

pytestmark = pytest.mark.anyio

DEAD_BOOT = uuid.uuid4()


async def running_job_of_a_dead_process(db, *, heartbeat_age_s: float) -> int:
    store = JobStore(db)
    job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="lost"), "h")
    assert (await store.claim_next(DEAD_BOOT)).id == job.id
    await execute(db,
        "UPDATE story_jobs SET heartbeat_at = now() - make_interval(secs => :s) WHERE id = :id",
        {"s": float(heartbeat_age_s), "id": job.id},
    )
    return job.id


async def test_waiting_jobs_survive_a_restart_and_run_in_order(make_app, fake_llm, db):
    async with serve(make_app(shutdown_grace_s=0.5)) as client:
        running, waiting = await one_running_then_waiting(
            client, fake_llm, "one", "two", "three")
    # Shut down past the grace period: the running job is failed, the waiting ones kept.
    job = await JobStore(db).get(running)
    assert (job.status, job.error_text) == (Status.FAILED, "interrupted")
    assert [(await JobStore(db).get(j)).status for j in waiting] == [Status.PENDING] * 2

    fake_llm.release()
    async with serve(make_app()) as client:
        for job_id in waiting:
            assert (await wait_for_job(client, job_id))["status"] == "completed"
    assert [int(r["job_id"]) for r in fake_llm.requests] == [running, *waiting]
    assert fake_llm.calls_for(running) == 1  # never re-run


async def test_shutdown_lets_the_running_job_finish_within_the_grace_period(
    make_app, fake_llm, db
):
    fake_llm.delay_s = 0.5
    async with serve(make_app(shutdown_grace_s=10)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, job_id)
    assert (await JobStore(db).get(job_id)).status == Status.COMPLETED


async def test_a_dead_process_running_job_is_interrupted_at_start_up(make_app, fake_llm, db):
    job_id = await running_job_of_a_dead_process(db, heartbeat_age_s=600)
    async with serve(make_app()) as client:
        job = (await client.get(f"/stories/jobs/{job_id}",
                                headers={"Accept": "application/json"})).json()
    assert (job["status"], job["error"]) == ("failed", "interrupted")
    assert fake_llm.total_calls == 0


async def test_a_recently_dead_job_is_interrupted_as_soon_as_its_heartbeat_goes_stale(
    make_app, fake_llm, db
):
    # Its heartbeat is fresh at start-up (stale after 2 s); the sweeper interval is an hour,
    # so only the boot-id re-check can end it quickly.
    job_id = await running_job_of_a_dead_process(db, heartbeat_age_s=0)
    started = time.monotonic()
    async with serve(make_app(heartbeat_stale_s=2, sweeper_interval_s=3600)) as client:
        assert (await JobStore(db).get(job_id)).status == Status.RUNNING
        job = await wait_for_job(client, job_id, timeout_s=10)
    assert (job["status"], job["error"]) == ("failed", "interrupted")
    assert 1.5 < time.monotonic() - started < 8
    assert fake_llm.total_calls == 0


async def test_an_old_pending_job_nobody_holds_expires_at_start_up(make_app, fake_llm, db):
    store = JobStore(db)
    old = await add_job(store, "old", StoryRequest(prompt="old"), "h")
    young = await add_job(store, "young", StoryRequest(prompt="young"), "h")
    await execute(db,
        "UPDATE story_jobs SET created_at = now() - interval '1 hour' WHERE id = :id",
        {"id": old.id},
    )
    async with serve(make_app(sweeper_threshold_min=8)) as client:
        assert (await wait_for_job(client, young.id))["status"] == "completed"
        expired = await wait_for_job(client, old.id)
    assert (expired["status"], expired["error"]) == ("failed", "expired")
    assert fake_llm.calls_for(old.id) == 0 and fake_llm.calls_for(young.id) == 1


async def test_a_live_worker_job_is_never_swept_however_long_it_waited(make_app, fake_llm, db):
    # Jobs wait in the queue longer than the threshold; sweeps run all the while.
    async with serve(make_app(sweeper_threshold_min=0.02, sweeper_interval_s=1,
                              queue_max=3)) as client:
        first, waiting = await one_running_then_waiting(client, fake_llm, "one", "two", "three")
        app_sweeper = client._transport.app.state.services.sweeper
        await until(lambda: fetch_val(db, "SELECT bool_and(created_at < now() - interval"
                                          " '1.2 seconds') FROM story_jobs"),
                    "every job waiting past the 1.2 s threshold")
        result = await app_sweeper.sweep()
        assert result.expired == [] and result.interrupted == []
        fake_llm.release()
        for job_id in [first, *waiting]:
            assert (await wait_for_job(client, job_id))["status"] == "completed"
