"""Narration parts in the story queue: made under the intake lock, claimed after stories and
pictures, completed by storing their audio, held to their guards and invariants. Against a
real PostgreSQL, with the app's own statements; the race made deterministic with the intake
lock held."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from app.config import Settings
from app.kinds import JOB_KINDS, STORY, claimable
from app.narrating import Narration
from app.queue.check import check_invariants
from app.queue.intake_params import INTAKE_LOCK_KEY
from app.queue.narrations import NarrationStore, narration_key
from app.queue.pictures import PictureStore
from app.queue.store import JobStore
from tests.helpers.fake_audio import silent_mp3
from tests.helpers.jobs import add_job
from tests.helpers.locks import holding, wait_until_blocked
from tests.helpers.pictures import BOOT, REQUEST, stored_story
from tests.helpers.sql import execute, fetch_all

pytestmark = pytest.mark.anyio

TEXTS = ["The Owl.\n\nOnce upon a time.", "The owl slept."]
READ = Narration(silent_mp3(1.0)[20:], "audio/mpeg", 1.0, "fake-voice", "sage")


@pytest.fixture
async def store(db):
    return JobStore(db)


@pytest.fixture
async def narrations(db):
    return NarrationStore(db)


async def made(narrations, story_id: int, key: str = "k", texts=TEXTS):
    return await narrations.make_parts(story_id, narration_key(story_id, key), texts,
                                       budget=None, set_aside=[5] * len(texts))


async def test_a_part_is_claimed_only_after_waiting_stories_and_pictures(store, narrations):
    _, story_id = await stored_story(store, PictureStore(store.db))  # its picture waits
    parts = await made(narrations, story_id)
    assert parts.outcome == "made" and len(parts.job_ids) == 2
    waiting_story = await add_job(store, uuid.uuid4().hex, REQUEST)  # asked for last
    assert waiting_story is not None
    every_kind = claimable({kind.maker for kind in JOB_KINDS})
    claimed = [await store.claim_next(BOOT, kinds=every_kind) for _ in range(4)]
    assert [job.kind.code for job in claimed if job] == ["story", "picture", "narration",
                                                         "narration"]
    assert claimed[0].id == waiting_story.id
    assert [job.narration_part for job in claimed[2:]] == [0, 1]
    assert claimed[2].narration_text == TEXTS[0] and claimed[2].set_aside_micros == 5


async def test_a_worker_without_a_narrator_claims_no_part(store, narrations):
    _, story_id = await stored_story(store, None)
    await made(narrations, story_id)
    assert await store.claim_next(BOOT, kinds=claimable({STORY.maker})) is None


async def test_the_key_replays_one_reading_waits_and_nothing_read_is_read_again(
        store, narrations, db):
    _, story_id = await stored_story(store, None)
    first = await made(narrations, story_id)
    assert (await made(narrations, story_id)).job_ids == first.job_ids  # replayed
    assert (await made(narrations, story_id)).outcome == "replayed"
    assert (await made(narrations, story_id, "other")).outcome == "in_progress"
    for _ in first.job_ids:
        job = await store.claim_next(BOOT, kinds=["narration"])
        assert job is not None and await narrations.complete(job.id, BOOT, READ)
    state = await narrations.state(story_id)
    assert state is not None and state.whole and state.stored == 2
    assert state.seconds == pytest.approx(2.0, abs=0.05)
    assert (await made(narrations, story_id, "again")).outcome == "complete"
    changed = await made(narrations, story_id, "changed", [TEXTS[0], "The owl woke."])
    assert changed.outcome == "made" and len(changed.job_ids) == 1  # only the new words
    assert (await made(narrations, 999_999, "none")).outcome == "gone"


async def test_completing_a_part_is_guarded_by_its_owner_and_its_state(store, narrations, db):
    _, story_id = await stored_story(store, None)
    [job_id, _] = (await made(narrations, story_id)).job_ids
    assert not await narrations.complete(job_id, BOOT, READ)  # pending: not claimed
    job = await store.claim_next(BOOT, kinds=["narration"])
    assert job is not None and job.id == job_id
    assert not await narrations.complete(job_id, uuid.uuid4(), READ)  # not ours
    assert await narrations.complete(job_id, BOOT, READ)
    assert not await narrations.complete(job_id, BOOT, READ)  # completed: once
    rows = await fetch_all(db, "SELECT part FROM story_narration_parts")
    assert [row["part"] for row in rows] == [0]


async def test_racing_requests_make_one_reading(store, narrations, db, database_url):
    _, story_id = await stored_story(store, None)
    async with holding(database_url) as holder:
        await holder.db.execute("SELECT pg_advisory_xact_lock($1)", INTAKE_LOCK_KEY)
        racing = [asyncio.create_task(made(narrations, story_id, key)) for key in "ab"]
        await wait_until_blocked(db, "insert_narration_jobs")
    outcomes = sorted([(await task).outcome for task in racing])
    assert outcomes == ["in_progress", "made"]
    assert len(await fetch_all(db, "SELECT id FROM story_jobs WHERE kind = 'narration'")) == 2


async def test_the_check_finds_a_completed_part_without_its_audio(store, narrations, db):
    settings = Settings()
    _, story_id = await stored_story(store, None)
    await made(narrations, story_id, texts=TEXTS[:1])
    job = await store.claim_next(BOOT, kinds=["narration"])
    assert job is not None and await narrations.complete(job.id, BOOT, READ)
    report = await check_invariants(db, settings)
    assert report.count("completed narration parts without audio") == 0
    assert report.count("narration parts not reachable from their job") == 0
    await execute(db, "DELETE FROM story_narration_parts")
    report = await check_invariants(db, settings)
    assert report.count("completed narration parts without audio") == 1
