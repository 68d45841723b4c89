"""Processes found gone: a process starting on a host marks as gone every process of that
host whose pid is no longer alive, and the guards of adoption, claiming and sweeping take
a job whose owner is gone as dead at once, without waiting for its heartbeat to go stale.
A stop asked of a dead process's job ends it 'stopped', never 'interrupted'.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import uuid

import pytest

from app.failures import INTERNAL, INTERRUPTED, STOPPED, STORYTELLER_TIMEOUT
from app.queue.jobs import Status
from app.queue.liveness import ProcessLiveness, pid_alive
from app.queue.processes import ProcessRegistry
from app.queue.store import JobStore
from app.stories import Story, StoryRequest
from tests.helpers.app import serve
from tests.helpers.jobs import add_job
from tests.helpers.locks import holding, wait_until_blocked
from tests.helpers.registry import dead_pid, register_dead_process, register_process
from tests.helpers.sql import execute, fetch_one, fetch_val
from tests.helpers.waits import WAIT_S

pytestmark = pytest.mark.anyio

HOST = socket.gethostname()
STORY = Story(title="The Sleepy Moon", body="Once upon a time.", model="fake")


@pytest.fixture
async def store(db):
    return JobStore(db)


@pytest.fixture
def live_pid():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process.pid
    process.kill()
    process.wait(timeout=30)


async def gone_at(db, boot_id: uuid.UUID):
    return await fetch_val(db, "SELECT gone_at FROM workers WHERE boot_id = :b", {"b": boot_id})


async def running_job(store: JobStore, owner: uuid.UUID, *, response_id: str | None = None,
                      text: str | None = None) -> int:
    """A job claimed by `owner`, with its words so far and its response id if given; its
    heartbeat fresh (the owner beat a moment ago)."""
    job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="an owl"), "h")
    assert (await store.claim_next(owner)).id == job.id
    if text is not None:
        assert await store.save_text_so_far(job.id, owner, text)
    if response_id is not None:
        assert await store.save_response_id(job.id, owner, response_id)
    return job.id


async def status_and_error(store: JobStore, job_id: int) -> tuple[Status, str | None]:
    job = await store.get(job_id)
    return job.status, job.error_text


# -- the probe and the registry --------------------------------------------------------


def test_a_pid_is_alive_while_its_process_runs_and_not_once_it_exited(live_pid):
    assert pid_alive(os.getpid()) and pid_alive(live_pid)
    assert not pid_alive(dead_pid())


async def test_start_up_marks_this_host_s_dead_processes_gone_and_no_other(
    make_app, store, db, live_pid
):
    dead = await register_dead_process(store)
    alive = await register_process(store, live_pid)
    this_test = await register_process(store, os.getpid())
    elsewhere = await register_dead_process(store, host="another-machine")
    stopped = await register_dead_process(store)
    await ProcessRegistry(store.db).stop(stopped)  # shut down cleanly: nothing to find
    async with serve(make_app()) as client:
        own = client._transport.app.state.services.boot_id
        assert await gone_at(db, dead) is not None
        for boot_id in (alive, this_test, elsewhere, stopped, own):
            assert await gone_at(db, boot_id) is None, boot_id
        # A gone (or stopped) process offers no job slots: the live one, this test's, the
        # other machine's (judged by its heartbeat there) and the app's own do.
        assert await store.queue_capacity(60) == (0, 4)


async def test_a_process_never_marks_itself(store, db):
    boot_id = uuid.uuid4()
    liveness = ProcessLiveness(ProcessRegistry(store.db), boot_id, concurrency=1, interval_s=5)
    await liveness.register()
    await execute(db, "UPDATE workers SET pid = :pid WHERE boot_id = :b",
                  {"pid": dead_pid(), "b": boot_id})  # as if its pid looked dead
    assert await liveness.find_gone_on_this_host() == []
    assert await gone_at(db, boot_id) is None


async def test_marking_leaves_a_stopped_or_already_gone_process_as_it_is(store, db):
    stopped = await register_dead_process(store)
    await ProcessRegistry(store.db).stop(stopped)
    gone = await register_dead_process(store)
    assert await ProcessRegistry(store.db).mark_gone(gone, host=HOST)
    first = await gone_at(db, gone)
    assert not await ProcessRegistry(store.db).mark_gone(stopped, host=HOST)
    assert not await ProcessRegistry(store.db).mark_gone(gone, host=HOST)
    assert await gone_at(db, stopped) is None and await gone_at(db, gone) == first
    assert not await ProcessRegistry(store.db).mark_gone(uuid.uuid4(), host=HOST)


async def test_a_process_wrongly_found_gone_registers_again_at_its_next_beat(store, db):
    boot_id = uuid.uuid4()
    liveness = ProcessLiveness(ProcessRegistry(store.db), boot_id, concurrency=1, interval_s=0.05)
    await liveness.register()
    assert await ProcessRegistry(store.db).mark_gone(boot_id, host=liveness.host)
    beating = asyncio.create_task(liveness.run())
    try:
        for _ in range(200):
            if await gone_at(db, boot_id) is None:
                break
            await asyncio.sleep(0.02)
    finally:
        beating.cancel()
    assert await gone_at(db, boot_id) is None  # its jobs are its own again


# -- adopt ---------------------------------------------------------------------------------


async def test_a_story_whose_owner_was_found_gone_is_adopted_at_once(store, live_pid):
    owner = await register_process(store, live_pid)  # alive, its job's heartbeat fresh
    job_id = await running_job(store, owner, response_id="resp_owl")
    assert await store.adopt(uuid.uuid4(), 60) is None  # a live, fresh owner keeps it
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    adopter = uuid.uuid4()
    adopted = await store.adopt(adopter, 60)  # well before any heartbeat is stale
    assert adopted is not None and adopted.id == job_id
    assert await store.save_text_so_far(job_id, owner, "late", sequence=3) is None


@pytest.mark.parametrize("status", [Status.COMPLETED, Status.FAILED])
async def test_adopt_never_takes_a_gone_owner_s_job_that_is_not_running(store, status):
    owner = await register_dead_process(store)
    job_id = await running_job(store, owner, response_id="resp_owl")
    if status == Status.COMPLETED:
        assert await store.complete(job_id, owner, await store.insert_story(job_id, owner, STORY))
    else:
        assert await store.fail(job_id, owner, INTERNAL)
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    assert await store.adopt(uuid.uuid4(), 60) is None
    assert (await store.get(job_id)).status == status


async def test_adopt_leaves_a_gone_owner_s_job_without_a_response_id_to_the_sweeper(store):
    owner = await register_dead_process(store)
    job_id = await running_job(store, owner)
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    assert await store.adopt(uuid.uuid4(), 60) is None
    assert (await store.get(job_id)).status == Status.RUNNING


async def test_an_adopter_skips_a_gone_owner_s_job_whose_row_is_held(store, database_url):
    owner = await register_dead_process(store)
    job_id = await running_job(store, owner, response_id="resp_owl")
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    async with holding(database_url) as other:
        assert (await other.adopt(uuid.uuid4(), 60)).id == job_id  # not committed yet
        assert await store.adopt(uuid.uuid4(), 60) is None  # skipped, not waited for


# -- claim: new jobs wait while a gone owner's story is there to adopt -------------------


async def test_new_jobs_wait_while_a_gone_owner_s_story_waits_to_be_adopted(store):
    owner = await register_dead_process(store)
    job_id = await running_job(store, owner, response_id="resp_owl")
    waiting = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="waiting"), "h2")
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    worker = uuid.uuid4()
    assert await store.claim_next(worker, defer_s=4.5) is None  # its heartbeat is fresh
    assert (await store.adopt(worker, 7.5)).id == job_id
    assert (await store.claim_next(worker, defer_s=4.5)).id == waiting.id


# -- sweep: a gone owner's job without a response id ends at once -----------------------


async def test_the_sweeper_ends_a_gone_owner_s_jobs_at_once_and_no_live_one_s(
    store, live_pid
):
    owner = await register_dead_process(store)
    alive = await register_process(store, live_pid)
    lost = await running_job(store, owner, text="The Owl\n\nOnce upon")
    stored = await running_job(store, owner)
    story_id = await store.insert_story(stored, owner, STORY)  # then the process died
    kept = await running_job(store, alive)
    assert await store.sweep_dead_running(60) == ([], [], [])  # every heartbeat is fresh
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    assert await store.sweep_dead_running(60) == ([stored], [lost], [])
    job = await store.get(lost)
    assert (job.status, job.error_text) == (Status.FAILED, INTERRUPTED.code)
    assert job.text_so_far == "The Owl\n\nOnce upon"
    assert (await store.get(stored)).story_id == story_id
    assert (await store.get(kept)).status == Status.RUNNING


@pytest.mark.parametrize("status", [Status.COMPLETED, Status.FAILED])
async def test_the_sweeper_leaves_a_gone_owner_s_job_that_is_not_running(store, status):
    owner = await register_dead_process(store)
    job_id = await running_job(store, owner)
    if status == Status.COMPLETED:
        assert await store.complete(job_id, owner, await store.insert_story(job_id, owner, STORY))
    else:
        assert await store.fail(job_id, owner, INTERNAL)
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    assert await store.sweep_dead_running(60) == ([], [], [])
    assert (await store.get(job_id)).status == status


async def test_the_sweeper_loses_to_an_owner_wrongly_found_gone_completing_its_job(
    store, db, database_url
):
    owner = await register_dead_process(store)  # alive in truth, cut off from its host's view
    job_id = await running_job(store, owner)
    story_id = await store.insert_story(job_id, owner, STORY)
    assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    async with holding(database_url) as owner_side:
        assert await owner_side.complete(job_id, owner, story_id)  # holds the row
        sweep = asyncio.create_task(store.sweep_dead_running(60))
        await wait_until_blocked(db, "sweep_dead_running")
    assert await sweep == ([], [], [])  # it re-read the row: completed, not running
    job = await store.get(job_id)
    assert (job.status, job.story_id) == (Status.COMPLETED, story_id)


# -- a stop asked of a dead process's job ---------------------------------------------------


@pytest.mark.parametrize("judged_by", ["stale heartbeat", "owner found gone"])
async def test_a_stop_asked_of_a_dead_process_job_ends_it_cancelled_with_its_words(
    store, db, judged_by
):
    owner = await register_dead_process(store)
    job_id = await running_job(store, owner, text="The Owl\n\nOnce upon a time")
    assert await store.request_cancel(job_id)  # nobody is left to hear it
    if judged_by == "stale heartbeat":
        await execute(db, "UPDATE story_jobs SET heartbeat_at = now() - interval '1 hour'"
                          " WHERE id = :id", {"id": job_id})
    else:
        assert await ProcessRegistry(store.db).mark_gone(owner, host=HOST)
    assert await store.sweep_dead_running(60) == ([], [], [job_id])
    job = await store.get(job_id)
    assert (job.status, job.error_text) == (Status.FAILED, STOPPED.code)
    assert job.text_so_far == "The Owl\n\nOnce upon a time"


async def test_a_job_asked_to_stop_that_its_owner_fails_as_interrupted_ends_stopped(store):
    # A shutdown (or a lost response) before the owner heard the stop: what the family
    # asked for is what they see. Any other reason stays as the owner gave it.
    owner = uuid.uuid4()
    asked = await running_job(store, owner, text="The Owl")
    assert await store.request_cancel(asked)
    assert await store.fail(asked, owner, INTERRUPTED)
    assert await status_and_error(store, asked) == (Status.FAILED, STOPPED.code)
    timed_out = await running_job(store, owner)
    assert await store.request_cancel(timed_out)
    assert await store.fail(timed_out, owner, STORYTELLER_TIMEOUT)
    assert await status_and_error(store, timed_out) == (Status.FAILED, STORYTELLER_TIMEOUT.code)
    not_asked = await running_job(store, owner)
    assert await store.fail(not_asked, owner, INTERRUPTED)
    assert await status_and_error(store, not_asked) == (Status.FAILED, INTERRUPTED.code)


async def test_a_chat_job_of_a_dead_process_asked_to_stop_is_cancelled_at_start_up(
    make_app, store, db
):
    # Default timings: its heartbeat would look stale only after a minute.
    owner = await register_dead_process(store)
    job_id = await running_job(store, owner, text="The Owl\n\nOnce upon a time")
    assert await store.request_cancel(job_id)
    async with serve(make_app(heartbeat_interval_s=5, heartbeat_stale_s=60)) as client:
        job = (await client.get(f"/stories/jobs/{job_id}",
                                headers={"Accept": "application/json"})).json()
        card = (await client.get(f"/stories/jobs/{job_id}")).text
    assert (job["status"], job["error_code"], job["error"]) == ("failed", "stopped", "cancelled")
    assert job["text_so_far"] == "The Owl\n\nOnce upon a time"
    assert "You stopped this story." in card and "the app restarted" not in card
    row = await fetch_one(db, "SELECT completed_at FROM story_jobs WHERE id = :id",
                          {"id": job_id})
    assert row["completed_at"] is not None


async def test_a_sibling_killed_while_this_process_runs_has_its_job_ended_within_a_beat(
    make_app, store, db
):
    # A process beside this one (the same host) claims a chat job and is killed, and
    # nothing restarts it. Its job's heartbeat would look stale only after a minute: this
    # process finds its pid gone at its next beat and sweeps the job then.
    sibling = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        owner = await register_process(store, sibling.pid)
        job_id = await running_job(store, owner, text="The Owl\n\nOnce upon a time")
        async with serve(make_app(heartbeat_interval_s=0.5, heartbeat_stale_s=60)):
            assert (await store.get(job_id)).status == Status.RUNNING  # its owner lives
            sibling.kill()
            sibling.wait(timeout=30)
            deadline = asyncio.get_running_loop().time() + WAIT_S  # far below the minute
            while (await store.get(job_id)).status == Status.RUNNING:
                assert asyncio.get_running_loop().time() < deadline, "not swept"
                await asyncio.sleep(0.05)
    finally:
        sibling.kill()
        sibling.wait(timeout=30)
    assert await gone_at(db, owner) is not None
    job = await store.get(job_id)
    assert (job.status, job.error_text) == (Status.FAILED, INTERRUPTED.code)
    assert job.text_so_far == "The Owl\n\nOnce upon a time"  # the words are kept
