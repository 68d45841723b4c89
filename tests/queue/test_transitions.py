"""Every transition of the job state machine, its guard, and the wrong-state case of each.

Races are made deterministic: one connection holds the row lock inside an open
transaction, the other statement is fired and seen waiting on that lock in
pg_stat_activity, then the first commits. No sleeps decide an outcome.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import asyncpg
import pytest

from app.db import connect_pool
from app.failures import INTERNAL, INTERRUPTED, STORYTELLER_TIMEOUT
from app.queue.check import Invariants
from app.queue.jobs import Status
from app.queue.processes import ProcessRegistry
from app.queue.store import JobStore
from app.queue.wakeup import Wakeup
from app.queue.worker import Worker
from app.queue.writing import Writing
from app.stories import Story, StoryRequest
from tests.helpers.jobs import add_job
from tests.helpers.locks import holding, wait_until_blocked
from tests.helpers.sql import execute, fetch_one, fetch_val

pytestmark = pytest.mark.anyio

BOOT = uuid.uuid4()
OTHER_BOOT = uuid.uuid4()
STORY = Story(title="The Sleepy Moon", body="Once upon a time.", model="fake")
REQUEST = StoryRequest(prompt="the moon", child_name="Mia", age=5, length="short")


@pytest.fixture
async def store(db):
    return JobStore(db)


async def make_job(store: JobStore, status: Status = Status.PENDING) -> int:
    job = await add_job(store, uuid.uuid4().hex, REQUEST, "hash")
    assert job is not None and job.status == Status.PENDING
    if status in (Status.RUNNING, Status.COMPLETED, Status.FAILED):
        claimed = await store.claim_next(BOOT)
        assert claimed is not None and claimed.id == job.id, "an older job was still pending"
    if status == Status.COMPLETED:
        assert await store.complete(job.id, BOOT, await store.insert_story(job.id, BOOT, STORY))
    if status == Status.FAILED:
        assert await store.fail(job.id, BOOT, INTERNAL)
    return job.id


async def status_of(store: JobStore, job_id: int) -> Status:
    job = await store.get(job_id)
    assert job is not None
    return job.status


async def age(db, job_id: int, *, heartbeat_s: float = 0, created_s: float = 0) -> None:
    await execute(db,
        "UPDATE story_jobs SET heartbeat_at = heartbeat_at - make_interval(secs => :h),"
        " created_at = created_at - make_interval(secs => :c) WHERE id = :id",
        {"h": float(heartbeat_s), "c": float(created_s), "id": job_id},
    )


# -- intake -----------------------------------------------------------------------------


async def test_intake_inserts_a_pending_job(store):
    job = await add_job(store, "key-1", REQUEST, "hash")
    assert job is not None
    assert (job.status, job.request, job.story_id, job.error_text) == (
        Status.PENDING, REQUEST, None, None)


async def test_intake_with_an_existing_key_writes_nothing(store, db):
    first = await add_job(store, "key-1", REQUEST, "hash")
    assert await add_job(store, "key-1", REQUEST, "other-hash") is None
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1
    assert (await store.get_by_key("key-1")).id == first.id


# -- claim: pending -> running ----------------------------------------------------------


async def test_claim_moves_the_oldest_pending_job_to_running_and_stamps_the_boot_id(store, db):
    older, newer = await make_job(store), await make_job(store)
    claimed = await store.claim_next(BOOT)
    assert claimed is not None and claimed.id == older and claimed.status == Status.RUNNING
    row = await fetch_one(db, "SELECT * FROM story_jobs WHERE id = :id", {"id": older})
    assert row["claimed_by"] == BOOT and row["started_at"] and row["heartbeat_at"]
    assert (await store.claim_next(OTHER_BOOT)).id == newer
    assert await store.claim_next(BOOT) is None  # nothing left to claim


@pytest.mark.parametrize("status", [Status.RUNNING, Status.COMPLETED, Status.FAILED])
async def test_claim_never_takes_a_job_that_left_pending(store, status):
    job_id = await make_job(store, status)
    assert await store.claim_next(OTHER_BOOT) is None
    assert await status_of(store, job_id) == status


async def test_claims_race_on_one_job_and_exactly_one_wins(store, db, database_url):
    job_id = await make_job(store)
    async with holding(database_url) as first:
        won = await first.claim_next(OTHER_BOOT)  # claimed, not yet committed: row locked
        assert won is not None and won.id == job_id
        # Three more workers look while the row is locked: each skips it, none waits.
        losers = await asyncio.gather(*(store.claim_next(BOOT) for _ in range(3)))
        assert losers == [None, None, None]
    assert await store.claim_next(BOOT) is None  # committed: it is running, not pending
    row = await fetch_one(db, "SELECT status, claimed_by FROM story_jobs WHERE id = :id",
                             {"id": job_id})
    assert (row["status"], row["claimed_by"]) == ("running", OTHER_BOOT)


async def test_a_claim_skips_a_locked_job_and_takes_the_next(store, database_url):
    locked, free = await make_job(store), await make_job(store)
    async with holding(database_url) as other:
        assert (await other.claim_next(OTHER_BOOT)).id == locked
        assert (await store.claim_next(BOOT)).id == free


async def test_a_claim_rolled_back_leaves_the_job_for_the_next_worker(store, database_url):
    job_id = await make_job(store)
    with pytest.raises(RuntimeError):
        async with holding(database_url) as other:
            assert (await other.claim_next(OTHER_BOOT)).id == job_id
            raise RuntimeError("the process died before its claim committed")
    assert (await store.claim_next(BOOT)).id == job_id


async def test_many_workers_claiming_at_once_run_each_job_once(store, database_url):
    job_ids = [await make_job(store) for _ in range(5)]
    pools = [connect_pool(database_url) for _ in range(8)]
    for pool in pools:
        await pool.connect()
    try:
        claimed = await asyncio.gather(*(JobStore(pool).claim_next(uuid.uuid4())
                                         for pool in pools))
    finally:
        for pool in pools:
            await pool.close()
    won = sorted(job.id for job in claimed if job is not None)
    assert won == job_ids  # five claims won, three found nothing; no job twice


# -- heartbeat --------------------------------------------------------------------------


async def test_heartbeat_refreshes_only_our_own_running_job(store, db):
    job_id = await make_job(store, Status.RUNNING)
    await age(db, job_id, heartbeat_s=100)
    assert await store.beat(job_id, BOOT)
    assert not await store.beat(job_id, OTHER_BOOT)
    fresh = await fetch_val(db,
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
    first = await store.insert_story(job_id, BOOT, STORY)
    again = await store.insert_story(job_id, BOOT, Story(title="Other", body="x", model="m"))
    assert first == again
    assert await fetch_val(db, "SELECT count(*) FROM stories") == 1


async def test_complete_moves_running_to_completed_with_its_story(store):
    job_id = await make_job(store, Status.RUNNING)
    story_id = await store.insert_story(job_id, BOOT, STORY)
    assert await store.complete(job_id, BOOT, story_id)
    job = await store.get(job_id)
    assert (job.status, job.story_id) == (Status.COMPLETED, story_id)
    assert job.completed_at is not None


@pytest.mark.parametrize("status", [Status.PENDING, Status.COMPLETED, Status.FAILED])
async def test_complete_of_a_job_not_running_changes_nothing(store, db, status, caplog):
    other = await make_job(store, Status.RUNNING)
    job_id = await make_job(store, status)
    story_id = await store.insert_story(other, BOOT, STORY)
    caplog.set_level(logging.WARNING, logger="bedtime")
    assert not await store.complete(job_id, BOOT, story_id)
    assert await status_of(store, job_id) == status
    assert f"event=guard_lost job_id={job_id} transition=complete" in caplog.text


# -- fail: running -> failed ------------------------------------------------------------


async def test_fail_moves_running_to_failed_with_its_failure_code(store):
    job_id = await make_job(store, Status.RUNNING)
    assert await store.fail(job_id, BOOT, STORYTELLER_TIMEOUT)
    job = await store.get(job_id)
    assert (job.status, job.error_text) == (Status.FAILED, "storyteller_timeout")
    assert job.failure is STORYTELLER_TIMEOUT


@pytest.mark.parametrize("status", [Status.PENDING, Status.COMPLETED, Status.FAILED])
async def test_fail_of_a_job_not_running_changes_nothing(store, status, caplog):
    job_id = await make_job(store, status)
    caplog.set_level(logging.WARNING, logger="bedtime")
    assert not await store.fail(job_id, BOOT, STORYTELLER_TIMEOUT)
    job = await store.get(job_id)
    assert job.status == status and job.error_text in (None, "internal")
    assert f"event=guard_lost job_id={job_id} transition=fail" in caplog.text


async def test_fail_is_refused_once_the_story_is_stored(store, caplog):
    job_id = await make_job(store, Status.RUNNING)
    await store.insert_story(job_id, BOOT, STORY)
    caplog.set_level(logging.WARNING, logger="bedtime")
    assert not await store.fail(job_id, BOOT, INTERRUPTED)
    assert await status_of(store, job_id) == Status.RUNNING  # for its worker or recovery


# -- the sweeper's transitions ----------------------------------------------------------


async def test_sweeper_fails_running_jobs_whose_heartbeat_stopped(store, db):
    dead = await make_job(store, Status.RUNNING)
    alive = await make_job(store, Status.RUNNING)
    await age(db, dead, heartbeat_s=120)
    assert await store.sweep_dead_running(60) == ([], [dead], [])
    job = await store.get(dead)
    assert (job.status, job.error_text) == (Status.FAILED, "interrupted")
    assert await status_of(store, alive) == Status.RUNNING


async def test_sweeper_completes_a_dead_job_whose_story_was_stored(store, db):
    dead = await make_job(store, Status.RUNNING)
    story_id = await store.insert_story(dead, BOOT, STORY)  # then the process died
    await age(db, dead, heartbeat_s=120)
    assert await store.sweep_dead_running(60) == ([dead], [], [])
    job = await store.get(dead)
    assert (job.status, job.story_id, job.error_text) == (Status.COMPLETED, story_id, None)


@pytest.mark.parametrize("status", [Status.PENDING, Status.COMPLETED, Status.FAILED])
async def test_sweeper_leaves_jobs_that_are_not_running_alone(store, db, status):
    job_id = await make_job(store, status)
    await age(db, job_id, heartbeat_s=3600, created_s=3600)
    assert await store.sweep_dead_running(60) == ([], [], [])
    assert await status_of(store, job_id) == status


async def worker_row(store: JobStore, db, *, concurrency: int = 1, silent_s: float = 0,
                     stopped: bool = False) -> uuid.UUID:
    """A process in the workers table whose last sign of life was `silent_s` ago."""
    boot_id = uuid.uuid4()
    await ProcessRegistry(store.db).register(boot_id, host="h", pid=1, concurrency=concurrency)
    if stopped:
        await ProcessRegistry(store.db).stop(boot_id)
    await execute(db,
        "UPDATE workers SET heartbeat_at = now() - make_interval(secs => :s),"
        " started_at = now() - interval '1 day' WHERE boot_id = :b",
        {"s": float(silent_s), "b": boot_id},
    )
    return boot_id


async def test_sweeper_expires_old_pending_jobs_when_no_worker_was_alive(store, db):
    old, young = await make_job(store), await make_job(store)
    await age(db, old, created_s=600)
    await worker_row(store, db, silent_s=3600)  # died an hour ago
    await worker_row(store, db, concurrency=0)  # serves only: runs no jobs
    assert await store.sweep_expired_pending(480) == [old]
    job = await store.get(old)
    assert (job.status, job.error_text) == (Status.FAILED, "expired")
    assert await status_of(store, young) == Status.PENDING


@pytest.mark.parametrize("worker", ["alive", "died_5_min_ago", "stopped_5_min_ago"])
async def test_a_worker_alive_within_the_threshold_keeps_every_pending_job(store, db, worker):
    job_ids = [await make_job(store) for _ in range(3)]
    for job_id in job_ids:
        await age(db, job_id, created_s=3600)  # waited an hour: a deep queue
    await worker_row(store, db, silent_s=0 if worker == "alive" else 300,
                     stopped=worker == "stopped_5_min_ago")
    assert await store.sweep_expired_pending(480) == []
    assert [await status_of(store, j) for j in job_ids] == [Status.PENDING] * 3


@pytest.mark.parametrize("status", [Status.RUNNING, Status.COMPLETED, Status.FAILED])
async def test_expiry_leaves_jobs_that_left_pending_alone(store, db, status):
    job_id = await make_job(store, status)
    await age(db, job_id, created_s=3600)
    assert await store.sweep_expired_pending(480) == []
    assert await status_of(store, job_id) == status


async def test_the_database_refuses_a_row_that_lies_about_its_state(store, db):
    job_id = await make_job(store)
    with pytest.raises(asyncpg.CheckViolationError):
        await execute(db,
            "UPDATE story_jobs SET status = 'completed' WHERE id = :id", {"id": job_id}
        )
    with pytest.raises(asyncpg.CheckViolationError):
        await execute(db,
            "UPDATE story_jobs SET status = 'failed', completed_at = now() WHERE id = :id",
            {"id": job_id},
        )


# -- the orderings of sweeper against worker ---------------------------------------------


async def test_sweeper_loses_to_completing_worker(store, db, database_url):
    job_id = await make_job(store, Status.RUNNING)
    story_id = await store.insert_story(job_id, BOOT, STORY)
    await age(db, job_id, heartbeat_s=120)  # the sweeper would take it, were it first
    async with holding(database_url) as worker_side:
        assert await worker_side.complete(job_id, BOOT, story_id)  # holds the row until commit
        sweep = asyncio.create_task(store.sweep_dead_running(60))
        await wait_until_blocked(db, "sweep_dead_running")
    assert await sweep == ([], [], [])  # the loser updated zero rows
    job = await store.get(job_id)
    assert (job.status, job.story_id, job.error_text) == (Status.COMPLETED, story_id, None)


async def test_sweeper_loses_to_a_story_being_stored(store, db, database_url):
    job_id = await make_job(store, Status.RUNNING)
    await age(db, job_id, heartbeat_s=120)  # looks dead: the story arrives just in time
    async with holding(database_url) as worker_side:
        story_id = await worker_side.insert_story(job_id, BOOT, STORY)  # beats, holds the row
        sweep = asyncio.create_task(store.sweep_dead_running(60))
        await wait_until_blocked(db, "sweep_dead_running")
    assert await sweep == ([], [], [])  # the heartbeat it re-read is fresh: not dead
    assert await store.complete(job_id, BOOT, story_id)
    job = await store.get(job_id)
    assert (job.status, job.story_id) == (Status.COMPLETED, story_id)


async def test_a_worker_cut_off_past_the_stale_limit_still_delivers_its_story(
    store, db, database_url, caplog
):
    # The worker's heartbeats could not reach the database for longer than the stale
    # limit, so the sweeper judged it dead before any story was stored. The worker was
    # alive all along and still owns the job: its story completes it (chat mode).
    job_id = await make_job(store, Status.RUNNING)
    await age(db, job_id, heartbeat_s=120)
    caplog.set_level(logging.INFO, logger="bedtime")
    worker = Worker(store, Wakeup(None, recheck_s=1), storyteller=None, boot_id=BOOT,
                    llm_timeout_s=5)
    writing = Writing(await store.get(job_id))
    async with holding(database_url) as sweeper_side:
        assert await sweeper_side.sweep_dead_running(60) == ([], [job_id], [])  # holds the row
        storing = asyncio.create_task(worker.storing.store(writing, STORY))
        await wait_until_blocked(db, "insert_story")
    assert await storing is not None
    job = await store.get(job_id)
    assert (job.status, job.error_text) == (Status.COMPLETED, None)
    kept = await fetch_one(db, "SELECT id, title FROM stories WHERE job_id = :id", {"id": job_id})
    assert job.story_id == kept["id"] and kept["title"] == STORY.title
    assert "story_orphaned" not in caplog.text
    assert await Invariants(store.db).ids("check_unreachable_stories") == []


async def test_a_story_is_not_stored_for_a_job_another_worker_owns(store, db):
    job_id = await make_job(store, Status.RUNNING)  # claimed by BOOT
    assert await store.insert_story(job_id, OTHER_BOOT, STORY) is None
    assert not await store.complete(job_id, OTHER_BOOT, 1)
    assert await fetch_val(db, "SELECT count(*) FROM stories") == 0
    assert await status_of(store, job_id) == Status.RUNNING


async def test_an_interrupted_job_is_completed_only_by_the_worker_that_owned_it(store, db):
    job_id = await make_job(store, Status.RUNNING)
    await age(db, job_id, heartbeat_s=120)
    assert await store.sweep_dead_running(60) == ([], [job_id], [])
    assert await store.insert_story(job_id, OTHER_BOOT, STORY) is None
    story_id = await store.insert_story(job_id, BOOT, STORY)
    assert story_id is not None
    assert not await store.complete(job_id, OTHER_BOOT, story_id)
    assert await store.complete(job_id, BOOT, story_id)
    job = await store.get(job_id)
    assert (job.status, job.story_id, job.error_text) == (Status.COMPLETED, story_id, None)