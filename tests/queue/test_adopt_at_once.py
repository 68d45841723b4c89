"""A paid story whose process died on this host is adopted the moment a process starts
here, before any waiting job, with the default heartbeats (its own heartbeat would look
stale only after a minute, and adoptable after 7.5 s): one create at the provider, no
other. A stop asked of it is carried out at the provider by its adopter. A stop not yet
heard at a shutdown still ends the job 'stopped'.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from app.queue.jobs import Status
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.jobs import add_job, started_at_the_provider
from tests.helpers.registry import register_dead_process
from tests.helpers.sql import execute, fetch_val

pytestmark = pytest.mark.anyio

# The defaults: a job beats every 1.5 s, is adopted after 5 missed beats (7.5 s), swept
# after a minute.
DEFAULT_HEARTBEATS = {"heartbeat_interval_s": 5, "heartbeat_stale_s": 60}
AT_ONCE_S = 3.0  # well before 7.5 s


async def started_by_a_dead_process(settings, store: JobStore) -> int:
    """A job claimed by a process of this host that has since died (its registry row says
    so only by its pid), its story started at the provider with the app's own storyteller
    and the id saved: its heartbeat is fresh, as a moment after a kill -9."""
    owner = await register_dead_process(store)
    job_id, _ = await started_at_the_provider(settings, store, owner)
    return job_id


async def owned_by(db, job_id: int, boot_id: uuid.UUID, timeout_s: float) -> float:
    """Seconds until the job is claimed by `boot_id`; fails past `timeout_s`."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while await fetch_val(db, "SELECT claimed_by FROM story_jobs WHERE id = :id",
                          {"id": job_id}) != boot_id:
        assert loop.time() - started < timeout_s, "not adopted in time"
        await asyncio.sleep(0.02)
    return loop.time() - started


async def test_a_dead_process_s_paid_story_is_adopted_at_once_before_a_waiting_job(
    make_app, settings, fake_llm, db
):
    store = JobStore(db)
    fake_llm.hold()  # the adopted story goes on only when the test says
    paid = await started_by_a_dead_process(settings, store)
    waiting = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="waiting"), "h2")
    app = make_app(llm_api="responses", worker_concurrency=1, **DEFAULT_HEARTBEATS)
    async with serve(app) as client:
        boot_id = client._transport.app.state.services.boot_id
        await owned_by(db, paid, boot_id, timeout_s=AT_ONCE_S)
        # The one slot took the paid story: the waiting job was not sent first.
        assert (await store.get(waiting.id)).status == Status.PENDING
        assert fake_llm.creates_for(waiting.id) == 0
        fake_llm.release()
        assert (await wait_for_job(client, paid))["status"] == "completed"
        assert (await wait_for_job(client, waiting.id))["status"] == "completed"
    assert fake_llm.creates_for(paid) == 1 and fake_llm.calls_for(paid) == 1
    assert fake_llm.creates_for(waiting.id) == 1


async def test_a_stop_asked_of_a_dead_process_s_story_is_cancelled_at_the_provider(
    make_app, settings, fake_llm, db
):
    store = JobStore(db)
    fake_llm.hold()
    job_id = await started_by_a_dead_process(settings, store)
    await execute(db, "UPDATE story_jobs SET text_so_far = 'The Owl' WHERE id = :id",
                  {"id": job_id})
    assert await store.request_cancel(job_id)  # nobody is left to hear it
    async with serve(make_app(llm_api="responses", **DEFAULT_HEARTBEATS)) as client:
        job = await wait_for_job(client, job_id, timeout_s=AT_ONCE_S)
        page = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
    assert (job["status"], job["error"]) == ("failed", "cancelled")
    assert page["text_so_far"] == "The Owl"
    assert fake_llm.cancels_for(job_id) == 1  # the provider stopped writing (and billing)
    assert fake_llm.creates_for(job_id) == 1
    [response_id] = fake_llm.response_ids_for(job_id)
    assert fake_llm.response(response_id)["status"] == "cancelled"


async def test_a_stop_not_yet_heard_at_shutdown_ends_the_job_cancelled(make_app, fake_llm, db):
    # Chat mode, shut down past the grace period while the story is being written; the
    # family asked to stop it a moment before, and the worker has not heard (its next
    # beat is 1.5 s away; the flag is set as a stop from a process without LISTEN would).
    fake_llm.hold()
    app = make_app(shutdown_grace_s=0.1, **DEFAULT_HEARTBEATS)
    async with serve(app) as client:
        job_id = (await post_story(client)).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, job_id)
        await execute(db, "UPDATE story_jobs SET cancel_requested_at = now() WHERE id = :id",
                      {"id": job_id})
    job = await JobStore(db).get(job_id)
    assert (job.status, job.error_text) == (Status.FAILED, "stopped")
    assert fake_llm.calls_for(job_id) == 1
