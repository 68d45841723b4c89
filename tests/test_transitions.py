"""Every transition of the job state machine, its guard, and the wrong-state case of each.

Races are made deterministic: one connection holds the row lock inside an open
transaction, the other statement is fired and seen waiting on that lock in
pg_stat_activity, then the first commits. No sleeps decide an outcome.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

import asyncpg
import pytest

from app.jobs import JobStore, Status
from app.queue import JobQueue
from app.storytellers import Story, StoryRequest
from app.worker import Worker

pytestmark = pytest.mark.anyio

BOOT = uuid.uuid4()
OTHER_BOOT = uuid.uuid4()
STORY = Story(title="The Sleepy Moon", body="Once upon a time.", model="fake")
REQUEST = StoryRequest(prompt="the moon", child_name="Mia", age=5, length="short")


@pytest.fixture
async def store(db):
    return JobStore(db)


async def make_job(store: JobStore, status: Status = Status.PENDING) -> int:
    job = await store.create(uuid.uuid4().hex, "hash", REQUEST)
    assert job is not None and job.status == Status.PENDING
    if status in (Status.RUNNING, Status.COMPLETED, Status.FAILED):
        assert await store.claim(job.id, BOOT)
    if status == Status.COMPLETED:
        assert await store.complete(job.id, await store.insert_story(job.id, STORY))
    if status == Status.FAILED:
        assert await store.fail(job.id, "broken")
    return job.id


async def status_of(store: JobStore, job_id: int) -> Status:
    job = await store.get(job_id)
    assert job is not None
    return job.status


async def age(db, job_id: int, *, heartbeat_s: float = 0, created_s: float = 0) -> None:
    await db.execute(
        "UPDATE story_jobs SET heartbeat_at = heartbeat_at - make_interval(secs => :h),"
        " created_at = created_at - make_interval(secs => :c) WHERE id = :id",
        {"h": float(heartbeat_s), "c": float(created_s), "id": job_id},
    )


async def wait_until_blocked(db, fragment: str, timeout_s: float = 10) -> None:
    """Until a statement containing `fragment` waits on a lock (seen in pg_stat_activity)."""
    deadline = time.monotonic() + timeout_s
    while True:
        waiting = await db.fetch_val(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND datname = current_database() AND query LIKE :pattern",
            {"pattern": f"%{fragment}%"},
        )
        if waiting:
            return
        assert time.monotonic() < deadline, f"no statement like {fragment!r} waited on a lock"
        await asyncio.sleep(0.01)


async def hold_and_run(database_url: str, sql: str, *args: object):
    """Open a transaction on its own connection, run `sql` (taking the row lock) and
    return (connection, rows); the caller commits to let the waiting statement through."""
    conn = await asyncpg.connect(database_url)
    transaction = conn.transaction()
    await transaction.start()
    rows = await conn.fetch(sql, *args)
    return conn, transaction, rows


# -- create -----------------------------------------------------------------------------


async def test_create_inserts_a_pending_job(store):
    job = await store.create("key-1", "hash", REQUEST)
    assert job is not None
    assert (job.status, job.request, job.story_id, job.error_text) == (
        Status.PENDING, REQUEST, None, None)


async def test_create_with_an_existing_key_writes_nothing(store, db):
    first = await store.create("key-1", "hash", REQUEST)
    assert await store.create("key-1", "other-hash", REQUEST) is None
    assert await db.fetch_val("SELECT count(*) FROM story_jobs") == 1
    assert (await store.get_by_key("key-1")).id == first.id


# -- claim: pending -> running ----------------------------------------------------------


async def test_claim_moves_pending_to_running_and_stamps_the_boot_id(store, db):
    job_id = await make_job(store)
    claimed = await store.claim(job_id, BOOT)
    assert claimed is not None and claimed.status == Status.RUNNING
    row = await db.fetch_one("SELECT * FROM story_jobs WHERE id = :id", {"id": job_id})
    assert row["claimed_by"] == BOOT and row["started_at"] and row["heartbeat_at"]


@pytest.mark.parametrize("status", [Status.RUNNING, Status.COMPLETED, Status.FAILED])
async def test_claim_of_a_job_that_left_pending_changes_nothing(store, status, caplog):
    job_id = await make_job(store, status)
    caplog.set_level(logging.WARNING, logger="bedtime")
    assert await store.claim(job_id, OTHER_BOOT) is None
    assert await status_of(store, job_id) == status
    assert f"event=guard_lost job_id={job_id} transition=claim" in caplog.text


async def test_two_claims_race_and_exactly_one_wins(store, db, database_url):
    job_id = await make_job(store)
    conn, transaction, rows = await hold_and_run(
        database_url,
        "UPDATE story_jobs SET status = 'running', started_at = now(), heartbeat_at = now(),"
        " claimed_by = $2 WHERE id = $1 AND status = 'pending' RETURNING id",
        job_id, OTHER_BOOT,
    )
    assert len(rows) == 1
    loser = asyncio.create_task(store.claim(job_id, BOOT))
    await wait_until_blocked(db, "claimed_by = $")
    await transaction.commit()
    await conn.close()
    assert await loser is None


# -- heartbeat --------------------------------------------------------------------------


async def test_heartbeat_refreshes_only_our_own_running_job(store, db):
    job_id = await make_job(store, Status.RUNNING)
    await age(db, job_id, heartbeat_s=100)
    assert await store.beat(job_id, BOOT)
    assert not await store.beat(job_id, OTHER_BOOT)
    fresh = await db.fetch_val(
        "SELECT heartbeat_at > now() - interval '5 seconds' FROM story_jobs WHERE id = :id",
        {"id": job_id},
    )
    assert fresh


@pytest.mark.parametrize("status", [Status.PENDING, Status.COMPLETED, Status.FAILED])
async def test_heartbeat_of_a_job_not_running_changes_nothing(store, status):
    job_id = await make_job(store, status)
    assert not await store.beat(job_id, BOOT)


# -- store the story, complete: running -> completed ------------------------------------


async def test_insert_story_is_idempotent(store, db):
    job_id = await make_job(store, Status.RUNNING)
    first = await store.insert_story(job_id, STORY)
    again = await store.insert_story(job_id, Story(title="Other", body="x", model="m"))
    assert first == again
    assert await db.fetch_val("SELECT count(*) FROM stories") == 1


async def test_complete_moves_running_to_completed_with_its_story(store):
    job_id = await make_job(store, Status.RUNNING)
    story_id = await store.insert_story(job_id, STORY)
    assert await store.complete(job_id, story_id)
    job = await store.get(job_id)
    assert (job.status, job.story_id) == (Status.COMPLETED, story_id)
    assert job.completed_at is not None


@pytest.mark.parametrize("status", [Status.PENDING, Status.COMPLETED, Status.FAILED])
async def test_complete_of_a_job_not_running_changes_nothing(store, db, status, caplog):
    job_id = await make_job(store, status)
    other = await make_job(store, Status.RUNNING)
    story_id = await store.insert_story(other, STORY)
    caplog.set_level(logging.WARNING, logger="bedtime")
    assert not await store.complete(job_id, story_id)
    assert await status_of(store, job_id) == status
    assert f"event=guard_lost job_id={job_id} transition=complete" in caplog.text


# -- fail: running -> failed ------------------------------------------------------------


async def test_fail_moves_running_to_failed_with_a_reason(store):
    job_id = await make_job(store, Status.RUNNING)
    assert await store.fail(job_id, "the storyteller took too long")
    job = await store.get(job_id)
    assert (job.status, job.error_text) == (Status.FAILED, "the storyteller took too long")


@pytest.mark.parametrize("status", [Status.PENDING, Status.COMPLETED, Status.FAILED])
async def test_fail_of_a_job_not_running_changes_nothing(store, status, caplog):
    job_id = await make_job(store, status)
    caplog.set_level(logging.WARNING, logger="bedtime")
    assert not await store.fail(job_id, "late")
    job = await store.get(job_id)
    assert job.status == status and job.error_text in (None, "broken")
    assert f"event=guard_lost job_id={job_id} transition=fail" in caplog.text


# -- the sweeper's transitions ----------------------------------------------------------


async def test_sweeper_fails_running_jobs_whose_heartbeat_stopped(store, db):
    dead = await make_job(store, Status.RUNNING)
    alive = await make_job(store, Status.RUNNING)
    await age(db, dead, heartbeat_s=120)
    assert await store.sweep_dead_running(60) == [dead]
    job = await store.get(dead)
    assert (job.status, job.error_text) == (Status.FAILED, "interrupted")
    assert await status_of(store, alive) == Status.RUNNING


@pytest.mark.parametrize("status", [Status.PENDING, Status.COMPLETED, Status.FAILED])
async def test_sweeper_leaves_jobs_that_are_not_running_alone(store, db, status):
    job_id = await make_job(store, status)
    await age(db, job_id, heartbeat_s=3600, created_s=3600)
    assert await store.sweep_dead_running(60) == []
    assert await status_of(store, job_id) == status


async def test_sweeper_expires_old_pending_jobs_no_queue_holds(store, db):
    orphan = await make_job(store)
    held = await make_job(store)
    young = await make_job(store)
    for job_id in (orphan, held):
        await age(db, job_id, created_s=600)
    assert await store.sweep_expired_pending(480, held_ids=[held]) == [orphan]
    job = await store.get(orphan)
    assert (job.status, job.error_text) == (Status.FAILED, "expired")
    assert await status_of(store, held) == Status.PENDING
    assert await status_of(store, young) == Status.PENDING


@pytest.mark.parametrize("status", [Status.RUNNING, Status.COMPLETED, Status.FAILED])
async def test_expiry_leaves_jobs_that_left_pending_alone(store, db, status):
    job_id = await make_job(store, status)
    await age(db, job_id, created_s=3600)
    assert await store.sweep_expired_pending(480, held_ids=[]) == []
    assert await status_of(store, job_id) == status


async def test_the_database_refuses_a_row_that_lies_about_its_state(store, db):
    job_id = await make_job(store)
    with pytest.raises(asyncpg.CheckViolationError):
        await db.execute(
            "UPDATE story_jobs SET status = 'completed' WHERE id = :id", {"id": job_id}
        )
    with pytest.raises(asyncpg.CheckViolationError):
        await db.execute(
            "UPDATE story_jobs SET status = 'failed', completed_at = now() WHERE id = :id",
            {"id": job_id},
        )


# -- the two orderings of sweeper against worker -----------------------------------------


async def test_sweeper_loses_to_completing_worker(store, db, database_url):
    job_id = await make_job(store, Status.RUNNING)
    story_id = await store.insert_story(job_id, STORY)
    await age(db, job_id, heartbeat_s=120)  # the sweeper would take it, were it first
    conn, transaction, rows = await hold_and_run(
        database_url,
        "UPDATE story_jobs SET status = 'completed', story_id = $2, completed_at = now()"
        " WHERE id = $1 AND status = 'running' RETURNING id",
        job_id, story_id,
    )
    assert len(rows) == 1  # the worker's completion holds the row
    sweep = asyncio.create_task(store.sweep_dead_running(60))
    await wait_until_blocked(db, "error_text = 'interrupted'")
    await transaction.commit()
    await conn.close()
    assert await sweep == []  # the loser updated zero rows
    job = await store.get(job_id)
    assert (job.status, job.story_id, job.error_text) == (Status.COMPLETED, story_id, None)


async def test_completing_worker_loses_to_sweeper_and_keeps_the_story(
    store, db, database_url, caplog
):
    job_id = await make_job(store, Status.RUNNING)
    await age(db, job_id, heartbeat_s=120)
    conn, transaction, rows = await hold_and_run(
        database_url,
        "UPDATE story_jobs SET status = 'failed', error_text = 'interrupted',"
        " completed_at = now() WHERE status = 'running'"
        " AND heartbeat_at < now() - interval '60 seconds' RETURNING id",
    )
    assert [row["id"] for row in rows] == [job_id]  # the sweeper holds the row
    caplog.set_level(logging.INFO, logger="bedtime")
    worker = Worker(store, JobQueue(1), storyteller=None, boot_id=BOOT, llm_timeout_s=5)
    storing = asyncio.create_task(worker._store(job_id, STORY))
    await wait_until_blocked(db, "status = 'completed'")
    await transaction.commit()
    await conn.close()
    await storing
    job = await store.get(job_id)
    assert (job.status, job.error_text, job.story_id) == (Status.FAILED, "interrupted", None)
    kept = await db.fetch_one("SELECT id, title FROM stories WHERE job_id = :id", {"id": job_id})
    assert kept["title"] == STORY.title  # paid for, so kept
    assert f"event=guard_lost job_id={job_id} transition=complete" in caplog.text
    assert f"event=story_orphaned job_id={job_id} story_id={kept['id']}" in caplog.text
