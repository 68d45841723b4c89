"""Starting a process's services: a start that fails leaves nothing running."""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg
import pytest

from app.db import DATABASE_UNAVAILABLE
from app.services import Services
from app.storytelling.demo import DemoStoryteller
from tests.helpers.locks import wait_until_blocked

pytestmark = pytest.mark.anyio

SERVICE_TASKS = {"liveness", "sweeper", "rescreen", "listen", "worker"}


async def test_a_database_outage_late_in_start_up_leaves_no_task_running(
    settings, db, database_url
):
    services = Services.build(settings, db, DemoStoryteller(delay_s=0.1),
                              database_url=database_url)
    registering = await asyncpg.connect(database_url)
    locking = await asyncpg.connect(database_url)
    watching = await asyncpg.connect(database_url)
    try:
        # This process's own row, not yet committed: its registration waits for it.
        held = registering.transaction()
        await held.start()
        await registering.execute(
            "INSERT INTO workers (boot_id, host, pid, concurrency) VALUES ($1, 'h', 1, 1)",
            services.boot_id)
        start = asyncio.create_task(services.start())
        await wait_until_blocked(watching, "register_process")
        # Swept and about to count the waiting jobs: the count waits on the table, and
        # the database drops its connection there.
        table_lock = locking.transaction()
        await table_lock.start()
        await locking.execute("LOCK TABLE story_jobs IN ACCESS EXCLUSIVE MODE")
        await held.rollback()
        await wait_until_blocked(watching, "count_pending")
        await watching.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            " AND query LIKE '/* count\\_pending */%'")
        await table_lock.rollback()
        with pytest.raises(DATABASE_UNAVAILABLE):
            await start
        running = {task.get_name() for task in asyncio.all_tasks() if not task.done()}
        assert not running & SERVICE_TASKS, running
    finally:
        for task in services.tasks:  # whatever start left behind, so the test ends
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        for connection in (registering, locking, watching):
            await connection.close()
