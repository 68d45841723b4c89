"""insert_job (sql/functions/insert_job.sql) gives every column the table's own default:
it names the defaults itself, to be a statement planned once, so a migration that adds a
column with a default must teach it that default too. This is where that is found."""

from __future__ import annotations

import json

import asyncpg
import pytest

pytestmark = pytest.mark.anyio

GIVEN = {"idempotency_key": "k-plain", "request_hash": "h", "prompt": "a sleepy owl",
         "length": "short"}


async def test_a_job_made_by_insert_job_is_the_row_a_plain_insert_makes(database_url):
    conn = await asyncpg.connect(database_url)
    try:
        async with conn.transaction():  # one transaction: one now() for both
            plain = await conn.fetchrow(
                "INSERT INTO story_jobs (idempotency_key, request_hash, prompt, length)"
                " VALUES ($1, $2, $3, $4) RETURNING *", *GIVEN.values())
            made = await conn.fetchrow(
                "SELECT * FROM insert_job($1::jsonb)",
                json.dumps({**GIVEN, "idempotency_key": "k-made"}))
            defaults = await conn.fetch(
                "SELECT column_name FROM information_schema.columns WHERE table_name ="
                " 'story_jobs' AND column_default IS NOT NULL")
    finally:
        await conn.close()
    differ = {name: (plain[name], made[name]) for name in plain.keys()
              if name not in ("id", "idempotency_key") and plain[name] != made[name]}
    assert differ == {}
    assert made["id"] == plain["id"] + 1  # the sequence's next, as the table's default
    # Something to compare: the table has defaults beyond the id's (status, created_at, ...).
    assert len(defaults) >= 5 and made["status"] == "pending"


async def test_insert_job_makes_nothing_for_a_key_taken_already(database_url):
    conn = await asyncpg.connect(database_url)
    try:
        body = json.dumps(GIVEN)
        first = await conn.fetchval("SELECT (insert_job($1::jsonb)).id", body)
        again = await conn.fetchval("SELECT (insert_job($1::jsonb)).id", body)
        count = await conn.fetchval("SELECT count(*) FROM story_jobs")
    finally:
        await conn.close()
    assert first is not None and again is None and count == 1
