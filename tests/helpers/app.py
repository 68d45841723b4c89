"""The app in-process, as the household's devices and scripts reach it: `serve` (a loopback
client, or `serve_as` any address), the JSON API's calls, and signing in.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.waits import WAIT_S

OWN_ORIGIN = "http://testserver"


@contextlib.asynccontextmanager
async def serve(
    app: Starlette, *, from_own_pages: bool = False
) -> AsyncIterator[httpx.AsyncClient]:
    """Run the app's lifespan and talk to it in-process, as a loopback client.

    `from_own_pages`: every request carries the app's own `Origin`, as a browser does on
    the app's pages; otherwise requests carry no provenance at all, as curl does.
    """
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        headers = {"Origin": OWN_ORIGIN} if from_own_pages else {}
        async with httpx.AsyncClient(
            transport=transport, base_url=OWN_ORIGIN, headers=headers
        ) as client:
            yield client


JSON = {"Content-Type": "application/json"}


ACCEPT_JSON = {"Accept": "application/json"}


def new_key() -> str:
    return uuid.uuid4().hex


async def post_story(
    client: httpx.AsyncClient, body: dict | None = None, *, key: str | None = None
) -> httpx.Response:
    return await client.post(
        "/stories/generate",
        json=body if body is not None else {"prompt": "a dragon who is afraid of the dark"},
        headers={**JSON, "Idempotency-Key": key or new_key()},
    )


async def one_running_then_waiting(
    client: httpx.AsyncClient, fake_llm: FakeLLM, *prompts: str
) -> tuple[int, list[int]]:
    """Hold the fake LLM, post the first prompt and wait until its call is in flight (the
    worker is busy), then post the rest, which wait in the queue. Their job ids."""
    fake_llm.hold()
    first, *rest = prompts
    running = (await post_story(client, {"prompt": first})).json()["job_id"]
    await asyncio.to_thread(fake_llm.wait_for_call, running)
    waiting = [(await post_story(client, {"prompt": p})).json()["job_id"] for p in rest]
    return running, waiting


async def wait_for_job(
    client: httpx.AsyncClient, job_id: int, statuses: tuple[str, ...] = ("completed", "failed"),
    timeout_s: float = WAIT_S,
) -> dict:
    """Poll the job (as a client would) until it reaches one of `statuses`."""
    deadline = time.monotonic() + timeout_s
    while True:
        job = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
        if job["status"] in statuses:
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} still {job['status']} after {timeout_s}s")
        await asyncio.sleep(0.05)


PASSWORD = "correct horse battery staple"


SAME_ORIGIN = {"Origin": "http://testserver"}


@contextlib.asynccontextmanager
async def serve_as(
    app: Starlette, client: tuple[str, int], base_url: str = "http://testserver"
) -> AsyncIterator[httpx.AsyncClient]:
    """Like tests.helpers.app.serve, from any client address (a stranger's, say)."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url=base_url) as http:
            yield http


async def sign_in(
    http: httpx.AsyncClient, password: str = PASSWORD, **extra: str
) -> httpx.Response:
    return await http.post("/login", data={"password": password, **extra}, headers=SAME_ORIGIN)
