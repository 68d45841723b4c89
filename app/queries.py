"""Named SQL statements, loaded from `sql/queries/*.sql` (jobs, shelf, sessions).

    -- name: claim_next_job
    -- pending -> running: an idle worker takes the oldest waiting job.
    UPDATE story_jobs SET ...

Each statement sits under its `-- name:` header; the comment lines after it describe it.
A name is defined once across the files. Parameters are `:name`; `positional()` turns each
statement into asyncpg's `$1` form once, so running one compiles nothing. Each is sent as
`/* claim_next_job */ UPDATE ...`, so pg_stat_activity (and a lock-race test) names it:

    row = await fetch_one(db, "get_job", {"job_id": 17})   # fetch_all, fetch_val alike

Each runs on the pool (a connection for that statement alone) or on the connection it is
given, such as a transaction's:

    async with db.transaction() as connection:
        await fetch_val(connection, "import_job", {...})
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import asyncpg

from app.db import Pool

QUERIES_DIR = Path(__file__).resolve().parent.parent / "sql" / "queries"
_HEADER = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)
# `:name`, but not the second colon of a `::type` cast.
_PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def parse_queries(text: str) -> dict[str, str]:
    """Split a file of named statements into {name: sql}."""
    chunks = _HEADER.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(chunks[1::2], chunks[2::2], strict=True):
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        sql = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("--"))
        queries[name] = sql.strip().rstrip(";")
    return queries


@cache
def load_queries() -> dict[str, str]:
    queries: dict[str, str] = {}
    for path in sorted(QUERIES_DIR.glob("*.sql")):
        for name, sql in parse_queries(path.read_text()).items():
            if name in queries:
                raise ValueError(f"query {name!r} is defined twice ({path.name})")
            queries[name] = sql
    return queries


@dataclass(frozen=True)
class Statement:
    """A named statement in asyncpg's form: `$n` placeholders, and the names they stand for."""

    sql: str
    names: tuple[str, ...]

    def args(self, params: Mapping[str, object]) -> list[object]:
        return [params[name] for name in self.names]


def positional(sql: str) -> Statement:
    """`:name` -> `$n`, the same `n` each time a name comes back."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    return Statement(_PARAMETER.sub(number, sql), tuple(names))


def named(name: str, sql: str) -> str:
    """The statement as sent: its name first, as a comment the server keeps in view."""
    return f"/* {name} */ {sql}"


@cache
def load_statements() -> dict[str, Statement]:
    return {name: positional(named(name, sql)) for name, sql in load_queries().items()}


class Queryable(Protocol):
    """Where a statement runs: the pool, or one connection (a transaction's), in asyncpg's
    terms (asyncpg ships no types: its rows are Any here)."""

    async def fetchrow(self, sql: str, /, *args: object) -> Any: ...

    async def fetch(self, sql: str, /, *args: object) -> list[Any]: ...

    async def fetchval(self, sql: str, /, *args: object) -> Any: ...

    async def execute(self, sql: str, /, *args: object) -> str: ...

    def transaction(self) -> contextlib.AbstractAsyncContextManager[Any]: ...


@contextlib.asynccontextmanager
async def transaction_on(on: Queryable) -> AsyncIterator[asyncpg.Connection]:
    """A transaction to run statements in: a new one on a pooled connection, or, on one
    connection, within the transaction open there (a savepoint) or a new one."""
    if isinstance(on, Pool):
        async with on.transaction() as connection:
            yield connection
    else:
        async with on.transaction():
            yield on


async def fetch_one(on: Queryable, query: str, params: Mapping[str, object] | None = None) -> Any:
    """The first row of a named statement (an asyncpg Record), or None."""
    statement = load_statements()[query]
    return await on.fetchrow(statement.sql, *statement.args(params or {}))


async def fetch_all(on: Queryable, query: str,
                    params: Mapping[str, object] | None = None) -> list[Any]:
    statement = load_statements()[query]
    return await on.fetch(statement.sql, *statement.args(params or {}))


async def fetch_val(on: Queryable, query: str, params: Mapping[str, object] | None = None) -> Any:
    """The first column of the first row, or None."""
    statement = load_statements()[query]
    return await on.fetchval(statement.sql, *statement.args(params or {}))


class Statements:
    """What the stores share: named statements run on the pool, or on one connection whose
    open transaction every statement then joins (`on=`, or the store made on it)."""

    def __init__(self, db: Queryable) -> None:
        self.db = db

    async def _one(self, query: str, params: Mapping[str, object] | None = None, *,
                   on: Queryable | None = None) -> Any:
        return await fetch_one(on or self.db, query, params)

    async def _all(self, query: str, params: Mapping[str, object] | None = None) -> list[Any]:
        return await fetch_all(self.db, query, params)

    async def _val(self, query: str, params: Mapping[str, object] | None = None, *,
                   on: Queryable | None = None) -> Any:
        return await fetch_val(on or self.db, query, params)
