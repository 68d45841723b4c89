"""Migrations: applied in order to an empty database, recorded, idempotent, and safe
when two processes start at once."""

from __future__ import annotations

import asyncio

import pytest

from app.db import connect_pool, migrate, migration_files
from app.queries import load_queries, parse_queries
from tests.conftest import _admin, with_database
from tests.sql import fetch_all, fetch_val

pytestmark = pytest.mark.anyio


@pytest.fixture
async def empty_db(pg_url):
    name = "empty_for_migrations"
    await _admin(pg_url, f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}"')
    yield with_database(pg_url, name)
    await _admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def test_all_migrations_apply_to_an_empty_database(empty_db):
    async with connect_pool(empty_db) as db:
        applied = await migrate(db)
        assert applied == [path.name for _, path in migration_files()]
        tables = {r["tablename"] for r in await fetch_all(db,
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert {"story_jobs", "stories", "schema_migrations"} <= tables
        checks = {r["conname"] for r in await fetch_all(db,
            "SELECT conname FROM pg_constraint WHERE conrelid = 'story_jobs'::regclass")}
        assert {"completed_has_story", "failed_has_error", "finished_has_time"} <= checks
        unique = await fetch_val(db,
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'stories'"
            " AND indexdef LIKE '%UNIQUE%(job_id)%'")
        assert unique == 1
        assert await migrate(db) == []  # a second run changes nothing


async def test_two_processes_migrating_at_once_apply_each_file_once(empty_db):
    async def one_process() -> list[str]:
        async with connect_pool(empty_db) as db:
            return await migrate(db)

    first, second = await asyncio.gather(one_process(), one_process())
    assert sorted(first + second) == [path.name for _, path in migration_files()]
    async with connect_pool(empty_db) as db:
        versions = await fetch_all(db, "SELECT version FROM schema_migrations ORDER BY version")
    assert [r["version"] for r in versions] == [v for v, _ in migration_files()]


def test_named_queries_are_parsed_with_their_comments_dropped():
    queries = parse_queries(
        "-- name: one\n-- pending -> running\nSELECT 1;\n\n-- name: two\nSELECT 2\n")
    assert queries == {"one": "SELECT 1", "two": "SELECT 2"}
    with pytest.raises(ValueError, match="twice"):
        parse_queries("-- name: one\nSELECT 1\n-- name: one\nSELECT 2\n")


def test_every_status_write_is_guarded_and_returns_its_id():
    for name, sql in load_queries().items():
        if sql.startswith("UPDATE story_jobs"):
            assert "WHERE" in sql and "status =" in sql.split("WHERE", 1)[1], name
            assert "RETURNING" in sql, name
