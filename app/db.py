"""The database: where it is, the connection pool, and the migrations.

    url = database_url(configured, data_dir)  # DATABASE_URL, or the embedded server's
    db = connect_pool(url)              # a `Pool`, not yet connected
    await db.connect()
    row = await db.fetchrow("SELECT ... $1", 17)     # fetch, fetchval, execute alike
    async with db.transaction() as connection: ...   # an asyncpg connection, in one
    listener = await connect_one(connect_options(url))  # a connection of its own (LISTEN)
    await migrate(db)                   # applies sql/migrations/NNN_*.sql once each, then
                                        # sql/functions/*.sql whenever one changes

This is the only module that knows the pool is `databases`' (archived upstream), used
through its public API alone: the rest of the app sees `Pool`, whose methods are asyncpg's
own, so moving to `asyncpg.create_pool` is a change to this file alone. The URL's options
(app/dsn.py) reach the pool's connections and the lone one alike.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
from databases import Database

from app.dsn import ConnectOptions, connect_options
from app.embedded import embedded_postgres_url
from app.logs import log

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "sql" / "migrations"
FUNCTIONS_DIR = MIGRATIONS_DIR.parent / "functions"
MIGRATION_FILE = re.compile(r"^(\d{3})_\w+\.sql$")
# Any constant unique to this app: holders of it run migrations one at a time.
MIGRATION_LOCK_KEY = 0x5707_1E5
CONNECT_TIMEOUT_S = 5.0
STATEMENT_TIMEOUT_S = 10.0
POOL_MAX_SIZE = 10  # tests and tools; a process sizes its pool with DATABASE_POOL_MAX

# What "the database cannot serve this right now" looks like from asyncpg: answered with
# 503 by the web layer, retried by the worker, never shown to a user as a traceback.
DATABASE_UNAVAILABLE: tuple[type[Exception], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,  # includes ConnectionDoesNotExist
    asyncpg.InterfaceError,
    asyncpg.OperatorInterventionError,  # admin shutdown, cannot connect now
    asyncpg.TooManyConnectionsError,
    asyncpg.ObjectNotInPrerequisiteStateError,  # the database is not accepting connections
    # A pooled connection the server has just terminated, before its socket is seen closed.
    asyncpg.InternalClientError,
)


def database_url(configured: str | None, data_dir: Path) -> str:
    """DATABASE_URL when set (`configured`), else an embedded PostgreSQL kept under
    data_dir/postgres, stopped when the last process using it exits."""
    if configured:
        return configured
    return embedded_postgres_url(data_dir / "postgres", stop_at_exit=True)


class Pool:
    """A process's pooled connections, in asyncpg's terms (`fetchrow`, `fetch`, `fetchval`,
    `execute`, each on a pooled connection for the one statement).

    Underneath is `databases`, used through its public API alone: `connection()` (the
    calling task's pooled connection, shared by that task's nested blocks) and its
    `raw_connection`, asyncpg's own, on which every statement runs.
    """

    def __init__(self, url: str, **options: Any) -> None:
        self._database = Database(url, **options)

    async def connect(self) -> None:
        await self._database.connect()

    async def close(self) -> None:
        if self._database.is_connected:
            await self._database.disconnect()

    async def __aenter__(self) -> Pool:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection for a few statements; back to the pool after the block."""
        if not self._database.is_connected:
            raise asyncpg.InterfaceError("the pool is not connected")
        async with self._database.connection() as connection:
            yield connection.raw_connection

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection inside one transaction: committed when the block ends,
        rolled back when it raises. Statements meant for it must run on it."""
        async with self.acquire() as connection, connection.transaction():
            yield connection

    async def fetchrow(self, sql: str, *args: object) -> Any:
        async with self.acquire() as connection:
            return await connection.fetchrow(sql, *args)

    async def fetch(self, sql: str, *args: object) -> list[Any]:
        async with self.acquire() as connection:
            rows: list[Any] = await connection.fetch(sql, *args)
            return rows

    async def fetchval(self, sql: str, *args: object) -> Any:
        async with self.acquire() as connection:
            return await connection.fetchval(sql, *args)

    async def execute(self, sql: str, *args: object) -> str:
        async with self.acquire() as connection:
            status: str = await connection.execute(sql, *args)
            return status


def connect_pool(url: str, *, max_size: int = POOL_MAX_SIZE, pgbouncer: bool = False) -> Pool:
    """`pgbouncer`: behind PgBouncer in transaction mode, where a prepared statement may
    meet another server connection, so asyncpg's statement cache is off.

    `databases` reads only `ssl`, `min_size` and `max_size` from a URL's options: it is given
    the URL without them, and the options as asyncpg's own arguments, which it forwards to
    `asyncpg.create_pool` (its documented way to pass the driver's options)."""
    target = connect_options(url)
    return Pool(
        target.address,
        min_size=0,  # no background reconnect loop logging tracebacks through an outage
        max_size=max_size,
        **_connect_kwargs(target),
        reset=_keep_session,
        **({"statement_cache_size": 0} if pgbouncer else {}),
    )


def _connect_kwargs(target: ConnectOptions) -> dict[str, object]:
    """How each connection is opened, pooled or not: the URL's options, and this app's
    limits where the URL sets none. `timeout` bounds each new connection (the URL's
    connect_timeout, if any), so an outage answers 503 instead of hanging."""
    return {"timeout": CONNECT_TIMEOUT_S, "command_timeout": STATEMENT_TIMEOUT_S,
            **target.asyncpg_kwargs()}


async def _keep_session(connection: asyncpg.Connection) -> None:
    """What the pool does to a connection it gets back, beyond rolling back a transaction
    left open (asyncpg always does that): nothing. asyncpg's default reset query (unlock
    advisory locks, CLOSE ALL, UNLISTEN *, RESET ALL) is one more round trip on every
    statement, to undo what no pooled connection here does: advisory locks are all
    transaction-scoped, LISTEN has a connection of its own, nothing sets a session setting
    or keeps a cursor past its transaction."""


async def connect_one(target: ConnectOptions) -> asyncpg.Connection:
    """A plain asyncpg connection outside the pool (for LISTEN), opened as the pool's are."""
    return await asyncpg.connect(**_connect_kwargs(target))


async def _all_applied(raw: asyncpg.Connection) -> bool:
    """Whether every migration file is recorded already (files are only ever added)."""
    try:
        rows = await raw.fetch("SELECT version FROM schema_migrations")
    except asyncpg.UndefinedTableError:  # a new database
        return False
    return {version for version, _ in schema_files()} <= {row["version"] for row in rows}


def migration_files() -> list[tuple[str, Path]]:
    files = []
    for path in sorted(MIGRATIONS_DIR.iterdir()):
        match = MIGRATION_FILE.match(path.name)
        if match:
            files.append((match.group(1), path))
    return files


def function_files() -> list[tuple[str, Path]]:
    """The functions defined once each (sql/functions/NAME.sql), applied after the
    migrations whenever a file's content changes: its version names the content's hash."""
    return [(f"function:{path.stem}:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}", path)
            for path in sorted(FUNCTIONS_DIR.glob("*.sql"))]


def schema_files() -> list[tuple[str, Path]]:
    """Everything migrate applies, in order: the migrations, then the functions."""
    return [*migration_files(), *function_files()]


async def migrate(db: Pool) -> list[str]:
    """Apply pending migrations in order; safe to run twice or from two processes at once.

    All of it is one transaction under a transaction-scoped advisory lock, which also holds
    behind PgBouncer in transaction mode (a session lock could be taken on one server
    connection and released on another)."""
    applied_now: list[str] = []
    async with db.acquire() as raw:  # asyncpg runs multi-statement files as they are
        if await _all_applied(raw):  # every start but the first after a deploy: one read
            return applied_now
        async with raw.transaction():
            await raw.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK_KEY)
            await raw.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            rows = await raw.fetch("SELECT version FROM schema_migrations")
            done = {row["version"] for row in rows}
            for version, path in schema_files():
                if version in done:
                    continue
                await raw.execute(path.read_text())
                await raw.execute("INSERT INTO schema_migrations (version) VALUES ($1)", version)
                applied_now.append(path.name)
    for name in applied_now:  # once committed
        log("migration_applied", file=name)
    return applied_now
