"""The intake statement (`intake_job`, migration 009), raced deterministically: one intake
holds the lock in an open transaction, the other is fired and seen waiting, then the first
commits. The waiter must see what the first wrote, not the table as it was when it began."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from app.jobs import INTAKE_LOCK_KEY, JobStore
from app.queries import load_statements
from app.storytellers import StoryRequest
from tests.chaos import wait_until_blocked

pytestmark = pytest.mark.anyio

SINCE = datetime.now(UTC) - timedelta(hours=1)


def intake_args(key: str, *, daily_limit: int = 10, queue_max: int = 10) -> list[object]:
    statement = load_statements()["intake_job"]
    return statement.args({
        "idempotency_key": key, "request_hash": "same", "prompt": "a held intake",
        "child_name": None, "age": None, "length": "short", "sequel_of": None,
        "previously": None, "since": SINCE, "queue_max": queue_max,
        "daily_limit": daily_limit, "lock_key": INTAKE_LOCK_KEY,
    })


async def held_intake(database_url: str, key: str, **limits: int) -> tuple[
        asyncpg.Connection, asyncpg.transaction.Transaction, asyncpg.Record]:
    """The app's intake statement, run in a transaction left open: it holds the lock."""
    holder = await asyncpg.connect(database_url)
    transaction = holder.transaction()
    await transaction.start()
    row = await holder.fetchrow(load_statements()["intake_job"].sql, *intake_args(key, **limits))
    return holder, transaction, row


async def waiting(database_url: str) -> None:
    """Until the fired intake waits for the lock (seen from a connection of its own: one
    inside a transaction sees pg_stat_activity as it was when that began)."""
    watcher = await asyncpg.connect(database_url)
    try:
        await wait_until_blocked(watcher, "intake_job")
    finally:
        await watcher.close()


async def test_an_intake_that_waited_counts_the_job_made_before_it(db, database_url):
    holder, transaction, first = await held_intake(database_url, "first", daily_limit=1)
    assert first["id"] is not None and not first["replayed"]
    second = asyncio.create_task(JobStore(db).intake(
        "second", "other", StoryRequest(prompt="the second"), since=SINCE, queue_max=10,
        daily_limit=1))
    await waiting(database_url)
    assert not second.done()
    await transaction.commit()
    result = await second
    # The limit of one is spent by the job it waited for: refused, nothing written.
    assert result.job is None and result.used_today == 1 and result.pending == 1
    assert await db.fetch_val("SELECT array_agg(idempotency_key) FROM story_jobs") == ["first"]
    await holder.close()


async def test_an_intake_that_waited_replays_the_job_its_key_made_meanwhile(db, database_url):
    holder, transaction, first = await held_intake(database_url, "same-key")
    second = asyncio.create_task(JobStore(db).intake(
        "same-key", "same", StoryRequest(prompt="a held intake", length="short"), since=SINCE,
        queue_max=10, daily_limit=10))
    await waiting(database_url)
    await transaction.commit()
    result = await second
    assert result.replayed and result.job is not None and result.job.id == first["id"]
    assert await db.fetch_val("SELECT count(*) FROM story_jobs") == 1
    await holder.close()


async def test_an_intake_waits_for_the_queue_bound_the_same_way(db, database_url):
    holder, transaction, _ = await held_intake(database_url, "first", queue_max=1)
    second = asyncio.create_task(JobStore(db).intake(
        "second", "other", StoryRequest(prompt="the second"), since=SINCE, queue_max=1,
        daily_limit=10))
    await waiting(database_url)
    await transaction.commit()
    result = await second
    assert result.job is None and result.pending == 1
    await holder.close()


async def test_a_rolled_back_intake_leaves_room_for_the_one_that_waited(db, database_url):
    holder, transaction, _ = await held_intake(database_url, "first", daily_limit=1)
    second = asyncio.create_task(JobStore(db).intake(
        "second", "other", StoryRequest(prompt="the second"), since=SINCE, queue_max=10,
        daily_limit=1))
    await waiting(database_url)
    await transaction.rollback()
    result = await second
    assert result.job is not None and result.job.idempotency_key == "second"
    assert result.job.position == 1  # first in line: its place comes with it
    await holder.close()
