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
from typing import Any

import httpx

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


def json_when(url: str, done: Callable[[Any], bool], what: str,
              timeout_s: float = WAIT_S) -> Any:
    """GET `url`'s JSON, as a script polling the API would, until `done(it)` holds; it then.
    One client for the whole wait: a new one per poll would load the TLS certificates
    again each time (60 ms of CPU), for plain HTTP on loopback."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(headers={"Accept": "application/json"}, timeout=HTTP_TIMEOUT_S) as http:
        while True:
            answer = http.get(url).json()
            if done(answer):
                return answer
            assert time.monotonic() < deadline, f"{what}: never came in {timeout_s} s: {answer}"
            time.sleep(0.05)
