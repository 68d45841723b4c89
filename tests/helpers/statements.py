"""The statements the app sends PostgreSQL while a block runs, as asyncpg sends them:

    with statements_run() as statements:
        await client.post("/stories/generate", ...)
    assert len(statements) == 4

Only statements run in the block's own context count: an in-process request runs in it,
while the app's worker and sweeper, started before the block, run in theirs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import asyncpg
import pytest

_COUNTING: ContextVar[list[str] | None] = ContextVar("statements_run", default=None)
# Every asyncpg method that sends a statement (a pool's methods call these on a connection).
SENDING = ("execute", "executemany", "fetch", "fetchrow", "fetchval")


@contextlib.contextmanager
def statements_run() -> Iterator[list[str]]:
    statements: list[str] = []
    token = _COUNTING.set(statements)
    try:
        with pytest.MonkeyPatch.context() as patch:
            for name in SENDING:
                patch.setattr(asyncpg.Connection, name, _counted(getattr(asyncpg.Connection, name)))
            yield statements
    finally:
        _COUNTING.reset(token)


def _counted(send: Callable[..., Any]) -> Callable[..., Any]:
    async def counted(self: asyncpg.Connection, query: str, *args: Any, **kwargs: Any) -> Any:
        seen = _COUNTING.get()
        if seen is not None:
            seen.append(query)
        return await send(self, query, *args, **kwargs)

    return counted
