"""Named SQL statements, loaded from `sql/queries.sql`.

    -- name: claim_job
    -- pending -> running: the worker takes a job it was handed.
    UPDATE story_jobs SET ...

Each statement sits under its `-- name:` header; the comment lines after it describe it.
Parameters are `:name`; `positional()` turns each statement into asyncpg's `$1` form once,
so running one compiles nothing:

    row = await fetch_one(db, "get_job", {"job_id": 17})   # fetch_all, fetch_val alike

Each runs on the pool (a connection for that statement alone) or on the connection it is
given, such as a transaction's:

    async with db.transaction() as connection:
        await fetch_val(connection, "import_job", {...})
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import asyncpg

from app.db import Pool

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
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
    return parse_queries((SQL_DIR / "queries.sql").read_text())


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


@cache
def load_statements() -> dict[str, Statement]:
    return {name: positional(sql) for name, sql in load_queries().items()}


# Where a statement runs: the pool, or one connection (a transaction's).
Queryable = Pool | asyncpg.Connection


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
