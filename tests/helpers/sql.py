"""Ad-hoc SQL for tests that look at (or arrange) rows directly, with `:name` parameters:

    await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE id = :id", {"id": 17})

`db` is the app's own `Pool` (or one asyncpg connection); the statement is turned into
asyncpg's `$n` form by the app's own loader, so tests and app bind parameters alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.queries import Queryable, positional


async def fetch_one(db: Queryable, sql: str, values: Mapping[str, object] | None = None) -> Any:
    statement = positional(sql)
    return await db.fetchrow(statement.sql, *statement.args(values or {}))


async def fetch_all(db: Queryable, sql: str,
                    values: Mapping[str, object] | None = None) -> list[Any]:
    statement = positional(sql)
    return await db.fetch(statement.sql, *statement.args(values or {}))


async def fetch_val(db: Queryable, sql: str, values: Mapping[str, object] | None = None) -> Any:
    statement = positional(sql)
    return await db.fetchval(statement.sql, *statement.args(values or {}))


async def execute(db: Queryable, sql: str, values: Mapping[str, object] | None = None) -> None:
    statement = positional(sql)
    await db.execute(statement.sql, *statement.args(values or {}))
