"""Every setting that allows fractions is honoured exactly: a share link of SHARE_DAYS=1.5
lasts 36 hours, a backup every BACKUP_EVERY_H=0.5 comes half an hour apart, a job waits
SWEEPER_THRESHOLD_MIN=0.5 minutes; and no statement lets the server take a duration for
an integer (`:days * 86400` made SHARE_DAYS=1.5 last a day)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from app.config import load_settings
from app.queries import load_statements
from app.queue.store import JobStore
from app.shelf.schedule import Schedules
from app.shelf.shares import ShareStore
from app.stories import StoryRequest
from tests.helpers.jobs import add_job
from tests.helpers.shelving import shelve
from tests.helpers.sql import execute

pytestmark = pytest.mark.anyio

# A parameter named for a length of time or a count of days, hours, minutes or seconds.
DURATION = re.compile(r"(_s|_h|_min|_mins|_hours|_days|^days|^every_s)$")
EXACT_TYPES = {"float8", "numeric", "interval"}


async def test_no_statement_takes_a_duration_as_a_whole_number(db):
    """The server infers each parameter's type from where it stands; beside an integer
    (`:days * 86400`) it is an integer, and a fraction sent there is cut off."""
    checked = 0
    async with db.acquire() as connection:
        for name, statement in load_statements().items():
            prepared = await connection.prepare(statement.sql)
            for parameter, kind in zip(statement.names, prepared.get_parameters(), strict=True):
                if DURATION.search(parameter):
                    checked += 1
                    assert kind.name in EXACT_TYPES, (
                        f"{name}: :{parameter} is sent as {kind.name}; cast it (::float8)")
    assert checked > 20  # the check saw the statements it is about


@pytest.mark.parametrize(("days", "lasts"), [
    (1.5, timedelta(hours=36)),
    (0.25, timedelta(hours=6)),
    (0.001, timedelta(seconds=86.4)),
])
async def test_a_share_link_lasts_its_fractional_days(db, days, lasts):
    days = load_settings({"SHARE_DAYS": str(days)}, env_file="/nonexistent").share_days
    story_id = await shelve(JobStore(db), "shared")
    made = await ShareStore(db).make(story_id, days=days)
    assert made is not None
    assert made.share.expires_at - made.share.created_at == lasts


async def test_a_backup_every_half_hour_is_due_half_an_hour_after_its_turn(db):
    every_s = load_settings({"BACKUP_EVERY_H": "0.5"}, env_file="/nonexistent").backup_every_h
    schedules = Schedules(db)
    await schedules.ensure("backup", every_s=every_s * 3600)
    due_at = await db.fetchval("SELECT next_at FROM schedules WHERE name = 'backup'")
    assert await schedules.claim("backup") is not None
    next_at = await db.fetchval("SELECT next_at FROM schedules WHERE name = 'backup'")
    assert next_at - due_at == timedelta(minutes=30)


async def test_a_pending_job_expires_after_fractional_minutes_not_before(db):
    threshold_min = load_settings({"SWEEPER_THRESHOLD_MIN": "0.5"},
                                  env_file="/nonexistent").sweeper_threshold_min
    store = JobStore(db)
    young = await add_job(store, "young", StoryRequest(prompt="a fox"))
    old = await add_job(store, "old", StoryRequest(prompt="a fox"))
    assert young is not None and old is not None
    await execute(db, "UPDATE story_jobs SET created_at = now() - make_interval(secs => :age)"
                      " WHERE id = :id", {"id": young.id, "age": 20.0})
    await execute(db, "UPDATE story_jobs SET created_at = now() - make_interval(secs => :age)"
                      " WHERE id = :id", {"id": old.id, "age": 40.0})
    assert await store.sweep_expired_pending(threshold_min * 60) == [old.id]
