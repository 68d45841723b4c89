"""Deterministic races: hold a row lock in one transaction (`holding`, `lock_row`), see
the app's named statement wait on it (`wait_until_blocked`), then let it go.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import asyncpg

from app.db import connect_pool
from app.queries import Queryable
from app.queue.store import JobStore
from tests.helpers.waits import WAIT_S


async def wait_until_blocked(on: Queryable, statement: str, timeout_s: float = WAIT_S) -> None:
    """Until the app's named statement (`sweep_dead_running`: app/queries.py sends each as
    `/* name */ ...`) is seen waiting on a lock in pg_stat_activity."""
    pattern = "/* " + statement.replace("_", "\\_") + " */%"
    deadline = time.monotonic() + timeout_s
    while not await on.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND datname = current_database() AND query LIKE $1", pattern
    ):
        assert time.monotonic() < deadline, f"{statement} never waited on a lock"
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def holding(database_url: str) -> AsyncIterator[JobStore]:
    """A job store on a connection of its own whose statements run in one open
    transaction, so the row locks they take are held until the block ends (commit)."""
    async with connect_pool(database_url) as holder, holder.transaction() as connection:
        yield JobStore(connection)  # rolled back if the block raises


async def wait_until_waiting(conn: asyncpg.Connection, pid: int, timeout_s: float = WAIT_S) -> None:
    """Until the backend `pid` waits on a lock."""
    deadline = time.monotonic() + timeout_s
    while await conn.fetchval(
        "SELECT wait_event_type IS DISTINCT FROM 'Lock' FROM pg_stat_activity WHERE pid = $1",
        pid,
    ):
        if time.monotonic() > deadline:
            raise TimeoutError(f"backend {pid} did not wait on a lock")
        await asyncio.sleep(0.01)


async def lock_row(database_url: str, job_id: int) -> tuple[asyncpg.Connection, object]:
    conn = await asyncpg.connect(database_url)
    transaction = conn.transaction()
    await transaction.start()
    await conn.execute("SELECT id FROM story_jobs WHERE id = $1 FOR NO KEY UPDATE", job_id)
    return conn, transaction
