"""Picture jobs in the story queue: made with their story, claimed after stories, one at a
time, completed by storing their picture, swept like any job. Against a real PostgreSQL,
with the app's own statements; races made deterministic with a held row lock."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import pytest

from app import kinds
from app.config import Settings
from app.errors import Conflict
from app.queue.check import Invariants, check_invariants
from app.queue.jobs import PictureStatus, Status
from app.queue.pictures import PictureStore, picture_key
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.jobs import BEFORE_ANY_JOB, add_job
from tests.helpers.locks import holding, wait_until_blocked
from tests.helpers.pictures import BOOT, DRAWN, STORY, stored_story
from tests.helpers.sql import execute, fetch_val

pytestmark = pytest.mark.anyio

# The release before pictures claimed any waiting job as a story, with this statement.
PREVIOUS_CLAIM = """
UPDATE story_jobs
   SET status = 'running', started_at = now(), heartbeat_at = now(), claimed_by = $1
 WHERE id = (SELECT id FROM story_jobs WHERE status = 'pending'
              ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
   AND status = 'pending'
RETURNING id
"""


@pytest.fixture
async def store(db):
    return JobStore(db)


@pytest.fixture
async def pictures(db):
    return PictureStore(db)


async def picture_jobs(db, story_id: int) -> list[dict]:
    rows = await db.fetch("SELECT * FROM story_jobs WHERE picture_of = $1 ORDER BY id",
                          story_id)
    return [dict(row) for row in rows]


async def test_a_stored_story_has_its_one_picture_job_made_with_it(store, pictures, db):
    job_id, story_id = await stored_story(store, pictures)
    [picture] = await picture_jobs(db, story_id)
    assert (picture["kind"], picture["status"], picture["story_id"]) == ("picture", "pending",
                                                                         None)
    # Its request is the story's (the demo draws from the likes); its key names the story.
    assert (picture["child_name"], picture["likes"]) == ("Mia", "boats, the colour blue")
    assert picture["idempotency_key"] == picture_key(story_id)
    # Stored again (a retry after a lost answer): the same story, no second picture job.
    assert (await store.get(job_id)).story_id == story_id
    assert await pictures.make_job(story_id, picture_key(story_id), budget=None,
                                   set_aside=0) is None
    assert len(await picture_jobs(db, story_id)) == 1
    state = await pictures.state(story_id)
    assert state is not None and state.status == PictureStatus.PENDING and state.etag is None


async def test_without_an_illustrator_a_story_gets_no_picture_job(store, db):
    _, story_id = await stored_story(store, None)
    assert await picture_jobs(db, story_id) == []
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE kind = 'picture'") == 0


async def test_a_waiting_story_is_claimed_before_an_older_waiting_picture(store, pictures, db):
    _, story_id = await stored_story(store, pictures)  # its picture now waits
    newer = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="a later story"))
    assert newer is not None
    first = await store.claim_next(BOOT)
    assert first is not None and (first.id, first.kind) == (newer.id, kinds.STORY)
    second = await store.claim_next(BOOT)
    assert second is not None and (second.kind, second.picture_of) == (kinds.PICTURE, story_id)


async def test_a_worker_that_does_not_draw_leaves_pictures_waiting(store, pictures, db):
    _, story_id = await stored_story(store, pictures)
    assert await store.claim_next(BOOT, kinds=kinds.claimable({kinds.Maker.STORYTELLER})) is None
    [picture] = await picture_jobs(db, story_id)
    assert picture["status"] == "pending"


async def test_the_release_before_pictures_cannot_claim_a_picture_as_a_story(
        store, pictures, db):
    """In a deploy's overlap the old release claims with its own statement: a picture job
    is refused to it (migration 039's CHECK, 024's before it), so it never writes a story
    for one."""
    _, story_id = await stored_story(store, pictures)
    with pytest.raises(asyncpg.CheckViolationError):
        await db.fetchval(PREVIOUS_CLAIM, uuid.uuid4())
    [picture] = await picture_jobs(db, story_id)
    assert picture["status"] == "pending"
    # A story is still the old release's to take.
    story = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="old release"))
    await execute(db, "UPDATE story_jobs SET created_at = now() - interval '1 hour'"
                      " WHERE id = :id", {"id": story.id})
    assert await db.fetchval(PREVIOUS_CLAIM, uuid.uuid4()) == story.id


async def test_one_picture_at_a_time_for_a_story(store, pictures, db):
    _, story_id = await stored_story(store, pictures)
    with pytest.raises(Conflict) as refused:
        await pictures.make_job(story_id, picture_key(story_id, "another-key"), budget=None,
                                set_aside=0)
    assert refused.value.code == "picture_in_progress"
    assert len(await picture_jobs(db, story_id)) == 1


async def test_a_picture_is_stored_with_its_completion_once(store, pictures, db):
    _, story_id = await stored_story(store, pictures)
    claimed = await store.claim_next(BOOT)
    assert claimed is not None and claimed.kind is kinds.PICTURE
    assert await pictures.complete(claimed.id, BOOT, DRAWN)
    assert not await pictures.complete(claimed.id, BOOT, DRAWN)  # done: not ours any more
    assert not await pictures.complete(claimed.id, uuid.uuid4(), DRAWN)
    job = await store.get(claimed.id)
    assert job is not None and job.status == Status.COMPLETED and job.story_id is None
    content_type, data, etag = await pictures.image(story_id, small=False)
    assert (content_type, data) == ("image/webp", DRAWN.image) and etag
    state = await pictures.state(story_id)
    assert state is not None and state.status == PictureStatus.READY and state.etag == etag
    # A redraw: a new job, the old picture shown until the new one is stored.
    redraw = await pictures.make_job(story_id, picture_key(story_id, "redraw"), budget=None,
                                     set_aside=0)
    assert redraw is not None and redraw.status == Status.PENDING
    state = await pictures.state(story_id)
    assert state.status == PictureStatus.PENDING and state.etag == etag


async def test_a_picture_job_whose_process_died_fails_interrupted_and_is_not_drawn_again(
        store, pictures, db):
    _, story_id = await stored_story(store, pictures)
    claimed = await store.claim_next(BOOT)
    assert claimed is not None and claimed.kind is kinds.PICTURE
    await execute(db, "UPDATE story_jobs SET heartbeat_at = now() - interval '5 minutes'"
                      " WHERE id = :id", {"id": claimed.id})
    assert await store.sweep_dead_running(60) == ([], [claimed.id], [])
    job = await store.get(claimed.id)
    assert job is not None and (job.status, job.error_text) == (Status.FAILED, "interrupted")
    assert await store.claim_next(BOOT) is None  # nothing draws it again by itself
    state = await pictures.state(story_id)
    assert state.status == PictureStatus.FAILED
    # The story is untouched.
    assert await fetch_val(db, "SELECT title FROM stories WHERE id = :id",
                           {"id": story_id}) == STORY.title


async def test_the_sweeper_loses_to_a_picture_being_stored(store, pictures, db, database_url):
    _, story_id = await stored_story(store, pictures)
    claimed = await store.claim_next(BOOT)
    assert claimed is not None
    await execute(db, "UPDATE story_jobs SET heartbeat_at = now() - interval '5 minutes'"
                      " WHERE id = :id", {"id": claimed.id})
    async with holding(database_url) as worker_side:
        assert await PictureStore(worker_side.db).complete(claimed.id, BOOT, DRAWN)
        sweep = asyncio.create_task(store.sweep_dead_running(60))
        await wait_until_blocked(db, "sweep_dead_running")
    assert await sweep == ([], [], [])  # the picture job was completed first
    job = await store.get(claimed.id)
    assert job is not None and job.status == Status.COMPLETED
    assert (await pictures.state(story_id)).status == PictureStatus.READY


async def test_pictures_count_toward_neither_the_queue_bound_nor_the_day(store, pictures):
    for _ in range(3):
        await stored_story(store, pictures)  # three stories, three pictures waiting
    assert await store.count_pending() == 0
    result = await store.intake("one-more", "h", StoryRequest(prompt="one more"),
                                since=BEFORE_ANY_JOB, queue_max=1, daily_limit=4)
    assert result.job is not None  # 3 stories today, no story waiting: within both



async def test_the_invariant_check_knows_picture_jobs_from_story_jobs(store, pictures, db):
    """A completed picture job has no story of its own (its story is the one it draws), so
    the story check passes it; the picture checks find a picture lost or misplaced."""
    _, story_id = await stored_story(store, pictures)
    claimed = await store.claim_next(BOOT)
    assert claimed is not None and await pictures.complete(claimed.id, BOOT, DRAWN)
    invariants = Invariants(db)
    for check in ("check_completed_without_story", "check_completed_without_picture",
                  "check_unreachable_pictures"):
        assert await invariants.ids(check) == [], check
    report = await check_invariants(db, Settings())
    assert not report.broken, report.format()
    # Made broken by hand: the picture's job not completed, then the picture gone.
    await execute(db, "UPDATE story_jobs SET status = 'failed', error_text = 'interrupted'"
                      " WHERE id = :id", {"id": claimed.id})
    assert await invariants.ids("check_unreachable_pictures") == [story_id]
    await execute(db, "UPDATE story_jobs SET status = 'completed', error_text = NULL"
                      " WHERE id = :id", {"id": claimed.id})
    await execute(db, "DELETE FROM story_pictures WHERE story_id = :id", {"id": story_id})
    assert await invariants.ids("check_completed_without_picture") == [claimed.id]
