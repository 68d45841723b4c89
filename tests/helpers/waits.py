"""How long the tests wait for something that should happen.

A deadline is reached only when something is wrong (a wait ends as soon as its condition
holds), so it costs nothing when the tests pass: these are generous, so a loaded machine
(four workers on two cores, other work beside them) never fails a test that would pass.
A test that checks how soon something happens says so with its own, shorter, limit.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

WAIT_S = 30.0  # for a condition: a call to arrive, a row to change, a job to finish
HTTP_TIMEOUT_S = 30.0  # for one request to a served app (httpx's own default is 5 s)


async def until(condition: Callable[[], bool | Awaitable[bool]], what: str,
                timeout_s: float = WAIT_S) -> None:
    """Wait until `condition()` (plain or async) holds: a wait on what the test is waiting
    for, never a fixed sleep. Fails, saying `what` never came, past `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        held = condition()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        assert time.monotonic() < deadline, f"{what}: never came in {timeout_s} s"
        await asyncio.sleep(0.02)
