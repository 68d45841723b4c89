"""The intake statement (`intake_job`, migrations 009 and 012), raced deterministically: one intake
holds the lock in an open transaction, the other is fired and seen waiting, then the first
commits (or rolls back). The waiter must see what the first wrote, not the table as it
was when it began."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from app.queries import load_statements
from app.queue.intake_params import intake_params
from app.queue.jobs import IntakeResult
from app.queue.store import JobStore
from app.requests import request_hash
from app.stories import StoryRequest
from tests.helpers.locks import wait_until_blocked
from tests.helpers.sql import execute, fetch_val

pytestmark = pytest.mark.anyio

SINCE = datetime.now(UTC) - timedelta(hours=1)
HELD = StoryRequest(prompt="a held intake", length="short")
OTHER = StoryRequest(prompt="the second")


def intake_args(key: str, *, daily_limit: int = 10, queue_max: int = 10) -> list[object]:
    statement = load_statements()["intake_job"]
    return statement.args(intake_params(key, request_hash(HELD), HELD, since=SINCE,
                                         queue_max=queue_max, daily_limit=daily_limit))


async def race(db, database_url: str, *, first_key: str, second_key: str,
               request: StoryRequest, end: str,
               **limits: int) -> tuple[asyncpg.Record, IntakeResult]:
    """The app's intake statement holds the lock in an open transaction on one connection;
    the second intake is fired through the job store and seen waiting for it (from a third
    connection: one inside a transaction sees pg_stat_activity as it was when that began);
    then the first ends (`commit` or `rollback`). Both intakes' rows."""
    limits = {"queue_max": 10, "daily_limit": 10, **limits}
    holder = await asyncpg.connect(database_url)
    watcher = await asyncpg.connect(database_url)
    try:
        transaction = holder.transaction()
        await transaction.start()
        first = await holder.fetchrow(load_statements()["intake_job"].sql,
                                      *intake_args(first_key, **limits))
        second = asyncio.create_task(JobStore(db).intake(
            second_key, request_hash(request), request, since=SINCE, **limits))
        await wait_until_blocked(watcher, "intake_job")
        assert not second.done()
        await getattr(transaction, end)()
        return first, await second
    finally:
        await watcher.close()
        await holder.close()


async def test_an_intake_that_waited_counts_the_job_made_before_it(db, database_url):
    first, result = await race(db, database_url, first_key="first", second_key="second",
                               request=OTHER, end="commit", daily_limit=1)
    assert first["id"] is not None and not first["replayed"]
    # The limit of one is spent by the job it waited for: refused, nothing written.
    assert result.job is None and result.used_today == 1 and result.pending == 1
    assert await fetch_val(db, "SELECT array_agg(idempotency_key) FROM story_jobs") == ["first"]


async def test_an_intake_that_waited_replays_the_job_its_key_made_meanwhile(db, database_url):
    first, result = await race(db, database_url, first_key="same-key", second_key="same-key",
                               request=HELD, end="commit")
    assert result.replayed and result.job is not None and result.job.id == first["id"]
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


async def test_an_intake_waits_for_the_queue_bound_the_same_way(db, database_url):
    _, result = await race(db, database_url, first_key="first", second_key="second",
                           request=OTHER, end="commit", queue_max=1)
    assert result.job is None and result.pending == 1


async def test_a_rolled_back_intake_leaves_room_for_the_one_that_waited(db, database_url):
    _, result = await race(db, database_url, first_key="first", second_key="second",
                           request=OTHER, end="rollback", daily_limit=1)
    assert result.job is not None and result.job.idempotency_key == "second"
    assert result.job.position == 1  # first in line: its place comes with it


async def test_a_key_taken_without_the_lock_meanwhile_asks_for_a_retry_not_a_500(db):
    """A writer that skips the intake lock (a backup's import) takes the key between the
    replay check and the insert: no job, no error; the caller says try again."""
    await execute(db,
        "CREATE FUNCTION take_key() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " IF NEW.idempotency_key = 'taken-meanwhile' AND NEW.prompt <> 'the taker' THEN"
        "   INSERT INTO story_jobs (idempotency_key, request_hash, prompt, length)"
        "   VALUES (NEW.idempotency_key, 'other', 'the taker', 'short'); END IF;"
        " RETURN NEW; END $$")
    await execute(db, "CREATE TRIGGER take_key BEFORE INSERT ON story_jobs"
                     " FOR EACH ROW EXECUTE FUNCTION take_key()")
    result = await JobStore(db).intake("taken-meanwhile", request_hash(OTHER), OTHER, since=SINCE,
                                       queue_max=10, daily_limit=10)
    assert result.job is None and not result.replayed
    assert await fetch_val(db, "SELECT prompt FROM story_jobs") == "the taker"
