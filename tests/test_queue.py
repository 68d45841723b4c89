"""The queue: QUEUE_MAX waiting jobs (plus the running one), a 429 that writes nothing,
and one job at a time, oldest first."""

from __future__ import annotations

import asyncio

import pytest

from app.queue import JobQueue, QueueFull
from tests.conftest import one_running_then_waiting, post_story, serve, wait_for_job

pytestmark = pytest.mark.anyio


async def test_a_full_queue_refuses_and_writes_nothing_then_the_same_key_succeeds(
    make_app, fake_llm, db
):
    async with serve(make_app(queue_max=2)) as client:
        running, waiting = await one_running_then_waiting(
            client, fake_llm, "one", "two", "three")

        refused = await post_story(client, {"prompt": "four"}, key="fourth")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "queue_full"
        assert int(refused.headers["retry-after"]) > 0
        assert await db.fetch_val("SELECT count(*) FROM story_jobs") == 3
        assert await db.fetch_val(
            "SELECT count(*) FROM story_jobs WHERE idempotency_key = 'fourth'") == 0
        assert (await client.get("/healthz")).json()["queue_depth"] == 2

        fake_llm.release()
        for job_id in [running, *waiting]:
            assert (await wait_for_job(client, job_id))["status"] == "completed"
        later = await post_story(client, {"prompt": "four"}, key="fourth")
        assert later.status_code == 202 and "idempotent-replayed" not in later.headers
        assert (await wait_for_job(client, later.json()["job_id"]))["status"] == "completed"

    order = [int(r["job_id"]) for r in fake_llm.requests]
    assert order == [running, *waiting, later.json()["job_id"]]
    assert fake_llm.max_in_flight == 1  # one at a time


async def test_a_replay_is_answered_even_when_the_queue_is_full(make_app, fake_llm):
    fake_llm.hold()
    async with serve(make_app(queue_max=1)) as client:
        running = (await post_story(client, {"prompt": "one"})).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, running)
        waiting = await post_story(client, {"prompt": "two"}, key="two")
        assert (await post_story(client, {"prompt": "three"})).status_code == 429
        again = await post_story(client, {"prompt": "two"}, key="two")
        assert again.status_code == 202 and again.json() == waiting.json()
        fake_llm.release()


async def test_a_reserved_slot_counts_until_filled_or_given_back():
    queue = JobQueue(max_waiting=1)
    with queue.reserve() as slot:
        with pytest.raises(QueueFull):
            queue.reserve()
        slot.fill(7)
    assert queue.depth == 1 and queue.held_ids() == [7]
    assert await queue.get() == 7
    assert queue.depth == 0 and queue.held_ids() == [7]  # taken, not yet claimed: still held
    queue.done()
    with queue.reserve():
        pass  # given back unfilled, e.g. when the INSERT failed
    assert queue.depth == 0 and queue.held_ids() == []


async def test_restored_jobs_go_beyond_the_bound_and_keep_their_order():
    queue = JobQueue(max_waiting=1)
    queue.restore([3, 1, 2, 3])
    assert queue.held_ids() == [3, 1, 2] and queue.position(2) == 3
    assert [await queue.get() for _ in range(3)] == [3, 1, 2]
