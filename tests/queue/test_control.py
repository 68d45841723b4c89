"""Stopping a job and finishing a story cut short, as app/queue/control.py decides them:
each state's answer, through the job store's own statements."""

from __future__ import annotations

import uuid

import pytest

from app.errors import Conflict, NotFound
from app.finishing import carried_words
from app.queue.control import finishing_request, stop_job
from app.queue.jobs import Status
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.jobs import add_job
from tests.helpers.sql import execute

pytestmark = pytest.mark.anyio

BOOT = uuid.uuid4()
REQUEST = StoryRequest(prompt="the moon", child_name="Mia", age=5, length="short")


class Listener:
    def __init__(self) -> None:
        self.asked: list[int] = []

    def stop_requested(self, job_id: int) -> None:
        self.asked.append(job_id)


@pytest.fixture
async def store(db):
    return JobStore(db)


async def test_a_waiting_job_is_stopped_before_any_worker_takes_it(store):
    job = await add_job(store, "k1", REQUEST)
    listener = Listener()
    stopped = await stop_job(store, listener, job.id)
    assert (stopped.status, stopped.error_text) == (Status.FAILED, "stopped")
    assert listener.asked == []  # nobody was writing it


async def test_a_running_job_is_asked_to_stop_and_this_process_s_worker_hears_at_once(store):
    job = await add_job(store, "k2", REQUEST)
    await store.claim_next(BOOT)
    listener = Listener()
    still = await stop_job(store, listener, job.id, wait_s=0)
    assert still.status == Status.RUNNING  # its owner has not stopped it yet: 202
    assert listener.asked == [job.id]


async def test_a_finished_job_has_nothing_to_stop(store, db):
    job = await add_job(store, "k3", REQUEST)
    await execute(db, "UPDATE story_jobs SET status = 'failed', error_text = 'expired', "
                      "completed_at = now() "
                      "WHERE id = :id", {"id": job.id})
    with pytest.raises(Conflict) as refused:
        await stop_job(store, Listener(), job.id)
    assert refused.value.code == "job_finished"


async def test_no_such_job_is_not_found(store):
    with pytest.raises(NotFound):
        await stop_job(store, Listener(), 999_999)
    with pytest.raises(NotFound):
        await finishing_request(store, 999_999)


async def test_a_story_cut_short_with_words_kept_carries_them_to_its_finish(store, db):
    job = await add_job(store, "k4", REQUEST)
    await execute(db, "UPDATE story_jobs SET status = 'failed', error_text = 'interrupted', "
                      "completed_at = now(), "
                      "text_so_far = 'Mia walked. She saw the moon and' WHERE id = :id",
                  {"id": job.id})
    found, finishing = await finishing_request(store, job.id)
    assert found.id == job.id
    assert finishing.finish_of == job.id
    # No line ended yet: the words are the story's beginning, under the idea's title.
    assert finishing.carried_text == "Mia and the Moon\n\nMia walked."
    assert carried_words("The Moon\n\nMia walked. She saw", "Mia and the Moon") == (
        "The Moon\n\nMia walked.")
    assert finishing.prompt == REQUEST.prompt


async def test_a_job_that_did_not_fail_or_kept_no_words_has_nothing_to_finish(store, db):
    waiting = await add_job(store, "k5", REQUEST)
    empty = await add_job(store, "k6", REQUEST)
    await execute(db, "UPDATE story_jobs SET status = 'failed', error_text = 'expired', "
                      "completed_at = now() "
                      "WHERE id = :id", {"id": empty.id})
    for job in (waiting, empty):
        with pytest.raises(Conflict) as refused:
            await finishing_request(store, job.id)
        assert refused.value.code == "nothing_to_finish"
