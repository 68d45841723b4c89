"""A running job's card tells the truth once the process writing it went away, at the
first poll, without waiting for the sweeper's threshold: restarted on this host, the job
is interrupted already; stopped, or silent on another machine, the card says the
storyteller stopped (or, when the provider still writes the story, that it is being
picked up again), and its bar does not move by the clock meanwhile (`data-still`)."""

from __future__ import annotations

import uuid

import pytest

from app.queue.processes import ProcessRegistry
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import serve
from tests.helpers.forms import HX
from tests.helpers.jobs import add_job
from tests.helpers.registry import register_dead_process, register_process
from tests.helpers.sql import execute

pytestmark = pytest.mark.anyio

# The threshold the card waits on is far off (60 s) and the owner's last beat 40 s ago:
# past the card's own (half that), so only the card can tell.
SLOW_HEARTBEAT = {"heartbeat_interval_s": 5, "heartbeat_stale_s": 60}
WORDS = "The Sleepy Owl\n\nOnce upon a time an owl could not sleep."
STOPPED = "The storyteller stopped writing this story"


@pytest.fixture
async def store(db):
    return JobStore(db)


async def writing(store: JobStore, owner: uuid.UUID, *, response_id: str | None = None) -> int:
    """A job `owner` claimed and wrote a few words of; its heartbeat fresh."""
    job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="an owl"))
    assert job is not None and (await store.claim_next(owner)).id == job.id
    assert await store.save_text_so_far(job.id, owner, WORDS)
    if response_id is not None:
        assert await store.save_response_id(job.id, owner, response_id)
    return job.id


async def silent(db, owner: uuid.UUID, seconds: float = 40) -> None:
    await execute(db, "UPDATE workers SET heartbeat_at = now() - make_interval(secs => :s)"
                  " WHERE boot_id = :b", {"s": seconds, "b": owner})


async def card_of(make_app, job_id: int) -> str:
    async with serve(make_app(**SLOW_HEARTBEAT)) as client:
        answer = await client.get(f"/stories/jobs/{job_id}", headers=HX)
    assert answer.status_code == 200
    return answer.text


@pytest.mark.slow
async def test_after_a_restart_here_the_first_poll_says_interrupted(make_app, store):
    job_id = await writing(store, await register_dead_process(store))  # killed, this host
    card = await card_of(make_app, job_id)
    assert "status-failed" in card and "interrupted" in card
    assert "Finish this story" in card  # its words are kept


@pytest.mark.slow
async def test_a_silent_owner_elsewhere_is_told_at_the_first_poll(make_app, store, db):
    owner = await register_process(store, 4242, host="another-machine")
    job_id = await writing(store, owner)
    await silent(db, owner)
    card = await card_of(make_app, job_id)
    assert "status-running" in card  # not swept yet: its own heartbeat is fresh
    assert STOPPED in card and "time to get cosy" not in card
    assert "data-still" in card


async def test_a_stopped_owner_is_told_at_once(make_app, store):
    owner = await register_process(store, 4242, host="another-machine")
    job_id = await writing(store, owner)
    await ProcessRegistry(store.db).stop(owner)
    card = await card_of(make_app, job_id)
    assert STOPPED in card and "data-still" in card


@pytest.mark.slow
async def test_a_story_the_provider_still_writes_is_being_picked_up_again(make_app, store, db):
    owner = await register_process(store, 4242, host="another-machine")
    job_id = await writing(store, owner, response_id="resp_owl")
    await silent(db, owner)
    card = await card_of(make_app, job_id)
    assert "Picking the story up again…" in card and STOPPED not in card


@pytest.mark.slow
async def test_an_owner_that_beats_is_writing_it(make_app, store):
    owner = await register_process(store, 4242, host="another-machine")  # it just beat
    job_id = await writing(store, owner)
    card = await card_of(make_app, job_id)
    assert "The story so far… time to get cosy." in card
    assert STOPPED not in card and "data-still" not in card
