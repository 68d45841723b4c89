"""Restored is not requested: an imported story's job has a key no client can send, counts
toward no day's limit, and is no "latest request" on the home page; only the library
shows its story. Migration 013 moves the imports made before it apart too."""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.db import connect_pool, migrate, migration_files
from app.queue.store import JobStore
from app.shelf.imports import IMPORTER, import_backup
from tests.helpers.app import post_story, serve
from tests.helpers.backups import backup_zip, entry
from tests.helpers.database import run_admin, with_database
from tests.helpers.sql import execute, fetch_one, fetch_val

pytestmark = pytest.mark.anyio

JOB_CARD = 'class="card job-card'


async def test_a_client_key_shaped_like_an_import_key_takes_no_story_from_the_import(
    make_app, db
):
    story = entry(1)
    async with serve(make_app()) as client:
        mine = await post_story(client, key=f"import-{story['uid']}")
        assert mine.status_code == 202
        result = await import_backup(db, backup_zip([story]))
        assert (result.restored, result.already_here) == (1, 0)
        replay = await post_story(client, key=f"import-{story['uid']}")
        assert replay.json()["job_id"] == mine.json()["job_id"]  # the client's job, as before
    title = await fetch_val(db, "SELECT title FROM stories WHERE uid = :uid",
                            {"uid": uuid.UUID(story["uid"])})
    assert title == "Night 1"


async def test_an_imported_job_cannot_be_replayed_by_a_client(make_app, db):
    story = entry(1)
    await import_backup(db, backup_zip([story]))
    async with serve(make_app()) as client:
        for key in (f"import-{story['uid']}", f"import{story['uid']}", f"import {story['uid']}"):
            response = await post_story(client, key=key)
            assert response.status_code == 202, response.text
            assert "Idempotent-Replayed" not in response.headers
    key = await fetch_val(db, "SELECT idempotency_key FROM story_jobs WHERE imported")
    assert key == f"import\x1f{story['uid']}"


async def test_restored_stories_count_toward_no_days_limit_and_are_no_requests(make_app, db):
    # 25 stories made in the last minute, somewhere else: more than a day's limit.
    now = datetime.now(UTC)
    await import_backup(db, backup_zip([
        entry(n, created_at=(now - timedelta(seconds=n)).isoformat()) for n in range(25, 0, -1)
    ]))
    store = JobStore(db)
    assert await store.count_since(datetime.now(UTC).replace(hour=0, minute=0)) == 0
    assert await store.last_request() is None
    assert await store.recent() == []
    async with serve(make_app(daily_story_limit=20)) as client:
        home = (await client.get("/")).text
        assert JOB_CARD not in home  # no "latest requests" but the household's own
        assert "Night 1" in home  # the newest stories are the newest stories, wherever made
        response = await post_story(client, {"prompt": "a kind moon", "child_name": "Ada"})
        assert response.status_code == 202, response.text
        home = (await client.get("/")).text
        assert home.count(JOB_CARD) == 1
        # A script's request is no device's choice: the form starts afresh (each device
        # remembers its own form, tests/web/test_device_choices.py).
        assert 'value="Ada"' not in home
        library = (await client.get("/stories")).text
        assert all(f"Night {n}<" in library for n in (1, 12, 25))


@pytest.fixture
async def database_at_012(pg_url: str):
    """A database migrated up to 012, as an installation was before this change."""
    name = f"at_012_{os.getpid()}"
    await run_admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
                    f'CREATE DATABASE "{name}"')
    async with connect_pool(with_database(pg_url, name)) as db:
        await execute(db, "CREATE TABLE schema_migrations (version text PRIMARY KEY,"
                          " applied_at timestamptz NOT NULL DEFAULT now())")
        for version, path in migration_files():
            if version <= "012":
                async with db.acquire() as raw:
                    await raw.execute(path.read_text())
                await execute(db, "INSERT INTO schema_migrations (version) VALUES (:v)",
                              {"v": version})
        yield db
    await run_admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def old_import(db, uid: uuid.UUID) -> int:
    """A story restored before 013: its job under the key `import-<uid>`."""
    job_id = await fetch_val(db,
        "INSERT INTO story_jobs (idempotency_key, request_hash, prompt, length, status,"
        "                        created_at, started_at, heartbeat_at, claimed_by)"
        " VALUES ('import-' || :uid, 'h', 'an owl', 'short', 'running', now(), now(), now(),"
        "         :importer) RETURNING id", {"uid": str(uid), "importer": IMPORTER})
    story_id = await fetch_val(db,
        "INSERT INTO stories (uid, job_id, title, body, model) VALUES (:uid, :job, 'T', 'B', 'm')"
        " RETURNING id", {"uid": uid, "job": job_id})
    await execute(db, "UPDATE story_jobs SET status = 'completed', story_id = :story,"
                      " completed_at = now() WHERE id = :job", {"story": story_id, "job": job_id})
    return job_id


async def test_migration_013_moves_the_imports_made_before_it_apart(database_at_012):
    db = database_at_012
    restored, clients = uuid.uuid4(), uuid.uuid4()
    imported_job = await old_import(db, restored)
    client_job = await fetch_val(db,  # a client that happened to send an import-shaped key
        "INSERT INTO story_jobs (idempotency_key, request_hash, prompt, length)"
        " VALUES ('import-' || :uid, 'h', 'a fox', 'short') RETURNING id", {"uid": str(clients)})

    assert "013_imports_apart.sql" in await migrate(db)
    moved = await fetch_one(db, "SELECT idempotency_key, imported FROM story_jobs WHERE id = :id",
                            {"id": imported_job})
    assert (moved["idempotency_key"], moved["imported"]) == (f"import\x1f{restored}", True)
    kept = await fetch_one(db, "SELECT idempotency_key, imported FROM story_jobs WHERE id = :id",
                           {"id": client_job})
    assert (kept["idempotency_key"], kept["imported"]) == (f"import-{clients}", False)
    assert await JobStore(db).count_since(datetime.now(UTC).replace(hour=0, minute=0)) == 1
    assert await JobStore(db).last_request() is not None  # the client's, not the import's
