"""Migrations: applied in order to an empty database, recorded, idempotent, and safe
when two processes start at once."""

from __future__ import annotations

import asyncio
import difflib
import itertools
import re
import uuid

import asyncpg
import pytest

from app import db as database
from app.db import FUNCTIONS_DIR, connect_pool, migrate, schema_files
from app.queries import load_queries, parse_queries
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.database import run_admin, with_database
from tests.helpers.jobs import add_job
from tests.helpers.shelving import shelve
from tests.helpers.sql import execute, fetch_all, fetch_one, fetch_val
from tools.schema import SCHEMA_FILE, dump_schema

pytestmark = pytest.mark.anyio


@pytest.fixture
async def empty_db(pg_url):
    name = "empty_for_migrations"
    await run_admin(pg_url, f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}"')
    yield with_database(pg_url, name)
    await run_admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def test_all_migrations_apply_to_an_empty_database(empty_db):
    async with connect_pool(empty_db) as db:
        applied = await migrate(db)
        assert applied == [path.name for _, path in schema_files()]
        functions = sorted(path.name for path in FUNCTIONS_DIR.glob("*.sql"))
        assert applied[-len(functions):] == functions  # the functions after every migration
        tables = {r["tablename"] for r in await fetch_all(db,
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert {"story_jobs", "stories", "schema_migrations", "spend"} <= tables
        checks = {r["conname"] for r in await fetch_all(db,
            "SELECT conname FROM pg_constraint WHERE conrelid = 'story_jobs'::regclass")}
        assert {"completed_has_story", "failed_has_error", "finished_has_time"} <= checks
        unique = await fetch_val(db,
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'stories'"
            " AND indexdef LIKE '%UNIQUE%(job_id)%'")
        assert unique == 1
        assert await migrate(db) == []  # a second run changes nothing


async def test_the_schema_file_is_what_the_migrations_make(database_url):
    """sql/schema.sql, the tables to read without reading every migration, is regenerated
    from this test's database (migrated by the app's own `migrate`) and must match."""
    made = await dump_schema(database_url)
    committed = SCHEMA_FILE.read_text() if SCHEMA_FILE.exists() else ""
    if made != committed:
        diff = difflib.unified_diff(committed.splitlines(), made.splitlines(),
                                    "sql/schema.sql", "migrated", lineterm="", n=1)
        pytest.fail("sql/schema.sql is not what the migrations make: run make schema\n"
                    + "\n".join(itertools.islice(diff, 40)), pytrace=False)


async def test_two_processes_migrating_at_once_apply_each_file_once(empty_db):
    async def one_process() -> list[str]:
        async with connect_pool(empty_db) as db:
            return await migrate(db)

    first, second = await asyncio.gather(one_process(), one_process())
    assert sorted(first + second) == sorted(path.name for _, path in schema_files())
    async with connect_pool(empty_db) as db:
        versions = await fetch_all(db, "SELECT version FROM schema_migrations ORDER BY version")
    assert [r["version"] for r in versions] == [v for v, _ in schema_files()]


async def test_a_function_file_is_applied_again_whenever_it_changes(
    empty_db, tmp_path, monkeypatch
):
    async with connect_pool(empty_db) as db:
        await migrate(db)
        monkeypatch.setattr(database, "FUNCTIONS_DIR", tmp_path)
        answer = tmp_path / "answer.sql"
        for value in (1, 2):
            answer.write_text("CREATE OR REPLACE FUNCTION answer() RETURNS integer"
                              f" LANGUAGE sql AS 'SELECT {value}'")
            assert await migrate(db) == ["answer.sql"]
            assert await migrate(db) == []  # once for each content
            assert await fetch_val(db, "SELECT answer()") == value


def test_named_queries_are_parsed_with_their_comments_dropped():
    queries = parse_queries(
        "-- name: one\n-- pending -> running\nSELECT 1;\n\n-- name: two\nSELECT 2\n")
    assert queries == {"one": "SELECT 1", "two": "SELECT 2"}
    with pytest.raises(ValueError, match="twice"):
        parse_queries("-- name: one\nSELECT 1\n-- name: one\nSELECT 2\n")


_UPDATE_JOBS = re.compile(r"\bUPDATE story_jobs\b(?P<body>.*?)(?=;|\bRETURNING\b|$)", re.S)
_INSERT_JOB = re.compile(r"\bINSERT INTO story_jobs\b(?P<body>.*?)(?=;|$)", re.S)
_DELETE_JOBS = re.compile(r"\bDELETE FROM story_jobs\b(?P<body>.*?)(?=;|$)", re.S)


def unguarded_status_writes(sql: str) -> list[str]:
    """What writes a job's state without the guard that makes a lost race a no-op: an
    UPDATE (bare or inside a CTE) without `status =` in its WHERE or without RETURNING, an
    INSERT without ON CONFLICT DO NOTHING and RETURNING, a DELETE not limited to a status."""
    found = []
    for match in _UPDATE_JOBS.finditer(sql):
        body, rest = match.group("body"), sql[match.end():]
        where = body.split("WHERE", 1)[1] if "WHERE" in body else ""
        if not re.search(r"\bstatus\s*=", where) or not rest.lstrip().startswith("RETURNING"):
            found.append(match.group(0)[:60])
    for match in _INSERT_JOB.finditer(sql):
        body = match.group("body")
        if "ON CONFLICT (idempotency_key) DO NOTHING" not in body or "RETURNING" not in body:
            found.append(match.group(0)[:60])
    for match in _DELETE_JOBS.finditer(sql):
        if not re.search(r"\bstatus\s*=", match.group("body")):
            found.append(match.group(0)[:60])
    return found


def status_writes() -> dict[str, str]:
    """Every statement that can write a job's status: the named queries that touch
    story_jobs, and each migration or function file that defines a function doing so (the
    intake)."""
    writes = {name: sql for name, sql in load_queries().items()
              if re.search(r"\b(UPDATE|INSERT INTO|DELETE FROM) story_jobs\b", sql)}
    for version, path in schema_files():
        text = path.read_text()
        if re.search(r"CREATE (OR REPLACE )?FUNCTION", text) and "story_jobs" in text:
            writes[f"migration {version}"] = text
    return writes


def test_every_status_write_is_guarded_and_returns_its_id():
    writes = status_writes()
    # The state machine's writers, all seen: intake, claim, complete, fail, both sweeps, the
    # import's two, the purge, the worker's saves.
    assert {"claim_next_job", "complete_job", "fail_job", "sweep_dead_running",
            "sweep_expired_pending", "complete_imported_job",
            "purge_deleted_stories", "migration 009"} <= set(writes)
    # A job's one INSERT (the intake's and the import's) is insert_job's.
    assert [name for name in writes if name.startswith("migration function:insert_job:")]
    assert "insert_job(" in load_queries()["import_job"]
    for name, sql in writes.items():
        assert unguarded_status_writes(sql) == [], name


@pytest.mark.parametrize(("name", "guard"), [
    ("fail_job", "AND status = 'running'"),
    ("sweep_dead_running", "AND story_jobs.status = 'running'"),  # inside a CTE
    ("purge_deleted_stories", "AND status = 'completed'"),
])
def test_the_guard_check_fails_when_a_guard_is_removed(name, guard):
    sql = load_queries()[name]
    assert guard in sql
    assert unguarded_status_writes(sql.replace(guard, "")) != []


def test_the_guard_check_sees_the_intake_function_lose_its_conflict_clause():
    text = status_writes()["migration 009"]
    assert unguarded_status_writes(text.replace("ON CONFLICT (idempotency_key) DO NOTHING", ""))


def test_the_guard_check_sees_the_job_insert_lose_its_conflict_clause():
    [text] = [sql for name, sql in status_writes().items()
              if name.startswith("migration function:insert_job:")]
    assert "ON CONFLICT (idempotency_key) DO NOTHING" in text
    assert unguarded_status_writes(text.replace("ON CONFLICT (idempotency_key) DO NOTHING", ""))


async def test_the_previous_release_s_intake_still_takes_stories_after_a_migration(db):
    """During a deploy the old release serves on while the new one has migrated: its intake
    call (migration 016's signature, written out here as that release sent it) still makes
    a job, and the new columns are simply unset."""
    row = await fetch_one(db, """
        SELECT (i.job).id, (i.job).status, (i.job).sibling_name, i.replayed
          FROM intake_job(:key, 'hash', 'a sleepy owl', 'Mia', 5, 'short', NULL, NULL,
                          NULL, NULL, 'es', NULL, now() - interval '1 day', 10, 10, 42)
               AS i""", {"key": "old-release"})
    assert row is not None and row["id"] is not None
    assert (row["status"], row["sibling_name"], row["replayed"]) == ("pending", None, False)


async def test_the_release_before_the_json_request_still_takes_stories(db):
    """The release before the intake took its request as JSON calls the 18 parameters of
    sql/functions/intake_job.sql's previous signature, written out here as it sent them:
    it still makes a job (through the same intake), a sibling story's fields and all."""
    row = await fetch_one(db, """
        SELECT (i.job).id, (i.job).status, (i.job).sibling_name, (i.job).language, i.replayed
          FROM intake_job(:key, 'hash', 'a sleepy owl', 'Mia', 5, 'short', NULL, NULL,
                          NULL, NULL, 'es', NULL, 'Leo', 7,
                          now() - interval '1 day', 10, 10, 42) AS i""", {"key": "18-args"})
    assert row is not None and row["id"] is not None
    assert (row["status"], row["sibling_name"], row["language"], row["replayed"]) == (
        "pending", "Leo", "es", False)


async def test_scheduled_work_has_a_row_per_schedule_with_its_last_outcome(db):
    columns = {r["column_name"] for r in await fetch_all(db,
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'schedules'")}
    assert {"name", "every_s", "next_at", "claimed_at", "last_ok_at", "last_error",
            "last_error_at"} <= columns
    primary = await fetch_val(db, "SELECT count(*) FROM pg_indexes WHERE tablename = 'schedules'"
                                  " AND indexdef LIKE '%UNIQUE%(name)%'")
    assert primary == 1


async def test_a_story_finished_many_times_before_018_keeps_every_story_and_one_link(empty_db):
    """Migration 018 makes finish_of unique. A database that finished one story three
    times over (three keys) keeps all three stories; the first with a story stays the
    finishing job, the others only lose that link; after it, a second one cannot be made."""
    async with connect_pool(empty_db) as db:
        async with db.acquire() as raw:  # the schema as it stood before 018
            await raw.execute("CREATE TABLE schema_migrations (version text PRIMARY KEY,"
                              " applied_at timestamptz NOT NULL DEFAULT now())")
            for version, path in schema_files():
                if version != "018":
                    await raw.execute(path.read_text())
                    await raw.execute("INSERT INTO schema_migrations (version) VALUES ($1)",
                                      version)
        store = JobStore(db)
        cut = await add_job(store, "cut", StoryRequest(prompt="a lost owl"))
        pending = await add_job(store, "third", StoryRequest(prompt="a lost owl"))
        stories = [await shelve(store, key, title="The Owl") for key in ("first", "second")]
        await execute(db, "UPDATE story_jobs SET finish_of = :cut WHERE id <> :cut",
                      {"cut": cut.id})
        assert await migrate(db) == ["018_finish_once.sql"]
        links = await fetch_all(db, "SELECT idempotency_key, finish_of, story_id FROM story_jobs"
                                    " WHERE id <> :cut ORDER BY id", {"cut": cut.id})
        assert [(row["idempotency_key"], row["finish_of"]) for row in links] == [
            ("third", None), ("first", cut.id), ("second", None)]
        assert [row["story_id"] for row in links][1:] == stories
        assert await fetch_val(db, "SELECT count(*) FROM stories") == 2
        with pytest.raises(asyncpg.UniqueViolationError):
            await execute(db, "UPDATE story_jobs SET finish_of = :cut WHERE id = :id",
                          {"cut": cut.id, "id": pending.id})


# Every sentence a version of the app stored as a failed job's error_text, and its code.
SENTENCES_037 = {
    "cancelled": "stopped", "interrupted": "interrupted", "expired": "expired",
    "the storyteller failed (HTTP 500)": "storyteller_failed",
    "the storyteller failed (HTTP 400)": "storyteller_failed",
    "the storyteller failed (HTTP 401)": "key_refused",
    "the storyteller failed (HTTP 403)": "key_refused",
    "the storyteller failed (HTTP 429)": "storyteller_busy",
    "the storyteller failed (server_error)": "storyteller_failed",
    "the storyteller failed (model_not_found)": "model_unavailable",
    "the storyteller failed while writing": "storyteller_failed",
    "the storyteller is busy (rate limited)": "storyteller_busy",
    "the storyteller took too long": "storyteller_timeout",
    "could not reach the storyteller": "storyteller_unreachable",
    "the storyteller sent an unreadable answer": "storyteller_unreadable",
    "the storyteller sent an answer too large to read": "storyteller_unreadable",
    "the storyteller sent nothing": "storyteller_empty",
    "the storyteller sent no story": "storyteller_empty",
    "the storyteller sent an empty story": "storyteller_empty",
    "the storyteller ran out of room before the story began": "storyteller_empty",
    "the storyteller declined to write this story": "declined",
    "the story did not pass the safety check, so it was not shown": "declined",
    "the storyteller stopped mid-story": "cut_short",
    "the storyteller stopped before the story began": "cut_short",
    "the story was stopped at the storyteller": "cut_short",
    "the storyteller no longer has this story": "interrupted",
    "the storyteller no longer offers the model gpt-4o-mini (set STORY_MODEL)":
        "model_unavailable",
    "this storyteller has no /responses (set LLM_API=chat)": "storyteller_failed",
    "the storyteller has no background mode (set LLM_API=chat)": "storyteller_failed",
    "the story could not be saved": "not_saved",
    "something went wrong while writing": "internal",
    "the safety check could not be reached, so the story was not shown": "storyteller_failed",
}
PICTURE_SENTENCES_037 = {
    "the illustrator would not draw this story: it is kept as it is, and you can try another"
    " picture": "picture_declined",
    "the illustrator refused the request (HTTP 400)": "illustrator_failed",
    "the illustrator failed (HTTP 500)": "illustrator_failed",
    "the illustrator is busy (rate limited)": "illustrator_busy",
    "the illustrator took too long": "illustrator_timeout",
    "could not reach the illustrator": "illustrator_unreachable",
    "the illustrator sent an unreadable answer": "illustrator_unreadable",
    "the illustrator sent an answer too large to be a picture": "illustrator_unreadable",
    "the illustrator sent no picture": "illustrator_empty",
    "the illustrator sent a picture that cannot be shown": "picture_unshowable",
    "the illustrator does not offer this model (set IMAGE_MODEL)": "picture_model_unavailable",
    "this storyteller has no /images/generations (set ILLUSTRATOR=off)": "pictures_unsupported",
    "pictures are off here": "pictures_off", "the story is gone": "story_gone",
    "over_budget": "over_budget", "interrupted": "interrupted",
    "something went wrong while writing": "internal",
}


# The migrations that set the codes a failed job may store (037, and 040 adding a narration's).
CODE_CHECKS = ("037", "040")


async def test_037_turns_every_stored_sentence_into_its_code_and_allows_only_codes(empty_db):
    """A database from before 037 holds its failed jobs' reasons as English sentences: each
    becomes its failure's code (one no version wrote, its kind's generic code), the
    migration can run again to no effect, and from then on only a code can be stored."""
    async with connect_pool(empty_db) as db:
        async with db.acquire() as raw:  # the schema as it stood before 037
            await raw.execute("CREATE TABLE schema_migrations (version text PRIMARY KEY,"
                              " applied_at timestamptz NOT NULL DEFAULT now())")
            for version, path in schema_files():
                if version not in CODE_CHECKS:
                    await raw.execute(path.read_text())
                    await raw.execute("INSERT INTO schema_migrations (version) VALUES ($1)",
                                      version)
        store = JobStore(db)
        story_id = await shelve(store, "drawn", title="The Owl")
        expected = {}
        stories = [*SENTENCES_037.items(), ("a sentence no version wrote", "storyteller_failed")]
        pictures = [*PICTURE_SENTENCES_037.items(), ("an unknown picture", "illustrator_failed")]
        for kind, pairs in (("story", stories), ("picture", pictures)):
            for sentence, code in pairs:
                job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="a lost owl"))
                await execute(db, "UPDATE story_jobs SET status = 'failed', error_text = :text,"
                                  " completed_at = now(), kind = :kind,"
                                  " picture_of = CASE WHEN :kind = 'picture' THEN"
                                  " CAST(:story AS bigint) END WHERE id = :id",
                              {"text": sentence, "kind": kind, "story": story_id, "id": job.id})
                expected[job.id] = code
        assert await migrate(db) == ["037_failure_codes.sql", "040_narrations.sql"]
        rows = await fetch_all(db, "SELECT id, error_text FROM story_jobs WHERE id = ANY(:ids)",
                               {"ids": list(expected)})
        assert {row["id"]: row["error_text"] for row in rows} == expected
        async with db.acquire() as raw:  # again: nothing changes, nothing fails
            await raw.execute(dict(database.migration_files())["037"].read_text())
        rows = await fetch_all(db, "SELECT id, error_text FROM story_jobs WHERE id = ANY(:ids)",
                               {"ids": list(expected)})
        assert {row["id"]: row["error_text"] for row in rows} == expected
        with pytest.raises(asyncpg.CheckViolationError):
            await execute(db, "UPDATE story_jobs SET error_text = 'the storyteller took too"
                              " long' WHERE id = :id", {"id": next(iter(expected))})
