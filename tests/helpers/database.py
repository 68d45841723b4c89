"""The test PostgreSQL: URLs per database, admin statements, the migrated template,
an embedded server's folder, and an outage on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from app.db import connect_pool, migrate

# One template per pytest-xdist worker, so workers sharing a server (TEST_DATABASE_URL)
# never drop each other's; with the embedded server each worker has a server of its own.
TEMPLATE_DB = "bedtime_template_" + os.environ.get("PYTEST_XDIST_WORKER", "main")

# The embedded test server's data is thrown away after the session: no need to wait for
# the disk. Each setting is one a reload applies (no restart).
FAST_AND_UNSAFE = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


async def run_admin(url: str, *statements: str) -> None:
    conn = await asyncpg.connect(with_database(url, "postgres"))
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


def in_a_thread(work: Callable[[], Awaitable[object]]) -> None:
    """Run `work()` (a coroutine function) to its end from a thread of its own: callable
    where an event loop runs in the caller's thread already (Playwright's sync API keeps
    one in a browser test's). What it raises is raised again here."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(work())  # type: ignore[arg-type]
        except BaseException as error:
            failed.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]


def admin(url: str, statement: str) -> None:
    """Run one admin statement from a thread of its own (see in_a_thread)."""
    in_a_thread(lambda: run_admin(url, statement))


async def skip_durability(url: str) -> None:
    """A throwaway server commits without flushing to disk (tests only, never the app)."""
    await run_admin(
        url,
        *(f"ALTER SYSTEM SET {name} = {value}" for name, value in FAST_AND_UNSAFE.items()),
        "SELECT pg_reload_conf()",
    )


async def _migrate_template(url: str) -> None:
    await run_admin(
        url, f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}"', f'CREATE DATABASE "{TEMPLATE_DB}"'
    )
    db = connect_pool(with_database(url, TEMPLATE_DB))
    await db.connect()
    try:
        await migrate(db)
    finally:
        await db.close()


# Where a throwaway server's files go: memory (tmpfs) when the machine has room there.
# Every test creates a database (some 300 files) and drops it; on a disk's file system,
# creating and deleting that many files cost a fifth of the suite's CPU, in the kernel.
SHARED_MEMORY = Path("/dev/shm")
SHARED_MEMORY_ROOM = 2 * 1024**3  # bytes free there, at least, or the disk it is


def postgres_dir() -> Path:
    """A directory for an embedded server's data, outside pytest's own temporary tree:
    the embedded server runs PostgreSQL as an unprivileged user when we are root, and
    pytest resets its tree to mode 0700 whenever a session starts."""
    base = None
    with contextlib.suppress(OSError):
        if shutil.disk_usage(SHARED_MEMORY).free >= SHARED_MEMORY_ROOM:
            base = str(SHARED_MEMORY)
    return Path(tempfile.mkdtemp(prefix="bedtime-pg-", dir=base)) / "data"


@contextlib.asynccontextmanager
async def database_outage(url: str) -> AsyncIterator[None]:
    """The test's database refuses connections and drops the open ones, until the block ends."""
    name = urlsplit(url).path.lstrip("/")
    admin = await asyncpg.connect(with_database(url, "postgres"))
    try:
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
        )
        yield
    finally:
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        await admin.close()
