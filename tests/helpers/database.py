"""The test PostgreSQL: URLs per database, admin statements, the migrated template and a
database cloned from it for each test, an embedded server's folder, and an outage on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
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


class Clones:
    """Fresh databases cloned from this worker's migrated template, for one test each.

        clones = Clones(pg_url)
        url = clones.take()       # a database no one has used
        clones.give_back(url)     # dropped behind the test, while the next one runs
        clones.close()            # the session's end: every clone dropped

    One thread of its own, on one admin connection, makes the next test's database while
    this one runs and drops the last one's after it: a test's setup waits only for what is
    not made yet, and its teardown for nothing (a new connection and thread per statement,
    and the copy itself, were 60 to 80 ms of every database test's setup and teardown)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._names = (f"test_{os.getpid()}_{n}" for n in itertools.count())
        self._admin = ThreadPoolExecutor(1, thread_name_prefix="clones")
        self._connection = self._admin.submit(self._connect)
        self._next = self._admin.submit(self._clone)

    def take(self) -> str:
        name = self._next.result()
        self._next = self._admin.submit(self._clone)
        return with_database(self.url, name)

    def give_back(self, url: str) -> None:
        self._admin.submit(self._drop, urlsplit(url).path.lstrip("/"))

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the one made ahead, unless making it failed
            self._admin.submit(self._drop, self._next.result())
        self._admin.submit(self._disconnect).result()  # after every drop: one at a time
        self._admin.shutdown()

    # In the admin thread alone, one statement at a time, on its own event loop.
    def _connect(self) -> tuple[asyncio.AbstractEventLoop, asyncpg.Connection]:
        loop = asyncio.new_event_loop()
        connection = loop.run_until_complete(asyncpg.connect(with_database(self.url, "postgres")))
        return loop, connection

    def _execute(self, statement: str) -> None:
        loop, connection = self._connection.result()
        loop.run_until_complete(connection.execute(statement))

    def _clone(self) -> str:
        name = next(self._names)
        loop, connection = self._connection.result()
        # A copy of the files (PostgreSQL 15 on) beats writing the template through the WAL
        # for a database this small: 18 ms against 28 to 45 here.
        strategy = " STRATEGY FILE_COPY" if connection.get_server_version().major >= 15 else ""
        self._execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"{strategy}')
        return name

    def _drop(self, name: str) -> None:
        self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _disconnect(self) -> None:
        loop, connection = self._connection.result()
        loop.run_until_complete(connection.close())
        loop.close()


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
