"""The test PostgreSQL: URLs per database, admin statements, the migrated template,
an embedded server's folder, and an outage on demand.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from app.db import connect_pool, migrate

TEMPLATE_DB = "bedtime_template"


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


def postgres_dir() -> Path:
    """A directory for an embedded server's data, outside pytest's own temporary tree:
    the embedded server runs PostgreSQL as an unprivileged user when we are root, and
    pytest resets its tree to mode 0700 whenever a session starts."""
    return Path(tempfile.mkdtemp(prefix="bedtime-pg-")) / "data"


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
