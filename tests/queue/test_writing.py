"""A job being written: what interrupts its call, and the heartbeat's pace."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest

from app.queue.jobs import Job, Status
from app.queue.writing import Interrupted, Interruption, Writing, unless_interrupted
from app.stories import StoryRequest
from tests.helpers.app import post_story, serve
from tests.helpers.sql import fetch_one

pytestmark = pytest.mark.anyio


def a_running_job() -> Job:
    now = datetime.now(UTC)
    return Job(id=1, idempotency_key="k", request_hash="h", request=StoryRequest(prompt="owl"),
               status=Status.RUNNING, story_id=None, error_text=None, created_at=now,
               started_at=now, completed_at=None)


async def test_a_caller_cancelled_while_the_stopped_call_winds_down_is_cancelled_too():
    writing = Writing(a_running_job())
    winding_down, may_end = asyncio.Event(), asyncio.Event()

    async def call():
        try:
            await asyncio.Event().wait()  # the storyteller, writing
        except asyncio.CancelledError:
            winding_down.set()
            await may_end.wait()  # closing its stream takes a moment
            raise

    caller = asyncio.create_task(
        unless_interrupted(writing, call(), {Interruption.STOP}, timeout_s=60))
    await asyncio.sleep(0)  # the call has started
    writing.interrupt(Interruption.STOP)
    await winding_down.wait()
    caller.cancel()  # the process shuts down meanwhile
    may_end.set()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert caller.cancelled()


async def test_a_stopped_call_still_raises_interrupted_once_it_has_ended():
    writing = Writing(a_running_job())
    ended = asyncio.Event()

    async def call():
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    caller = asyncio.create_task(
        unless_interrupted(writing, call(), {Interruption.STOP}, timeout_s=60))
    await asyncio.sleep(0)
    writing.interrupt(Interruption.STOP)
    with pytest.raises(Interrupted):
        await caller
    assert ended.is_set()  # the call's stream was closed before the caller went on


async def beats_of(db, job_id: int, *, for_s: float) -> list[float]:
    """The job's heartbeats seen in the row over `for_s` seconds, as seconds after its call
    was sent (that statement beats too, a moment after the claim's own stamp, and the
    waiting starts there)."""
    seen: list[datetime] = []
    deadline = time.monotonic() + for_s
    while time.monotonic() < deadline:
        row = await fetch_one(db, "SELECT call_sent_at, heartbeat_at FROM story_jobs"
                                  " WHERE id = :id", {"id": job_id})
        sent = row["call_sent_at"]
        if sent is not None and row["heartbeat_at"] >= sent and row["heartbeat_at"] not in seen:
            seen.append(row["heartbeat_at"])
        await asyncio.sleep(0.02)
    return [(beat - sent).total_seconds() for beat in seen]


@pytest.mark.parametrize(("interval_s", "pgbouncer", "pace_s"), [
    (3.0, False, 3.0),  # LISTEN brings a stop at once: the beat keeps HEARTBEAT_INTERVAL_S
    (0.5, False, 0.5),
    (3.0, True, 1.5),   # no LISTEN: a stop is seen at a beat, so it beats at the stop pace
])
@pytest.mark.slow
async def test_a_waiting_job_beats_at_the_heartbeat_interval(
    make_app, fake_llm, db, interval_s, pgbouncer, pace_s
):
    fake_llm.hold()  # the storyteller sends nothing: only heartbeats touch the row
    app = make_app(heartbeat_interval_s=interval_s, heartbeat_stale_s=60, pgbouncer=pgbouncer)
    async with serve(app) as client:
        wakeup = app.state.services.wakeup
        for _ in range(500):
            if wakeup.listening or pgbouncer:
                break
            await asyncio.sleep(0.01)
        job_id = (await post_story(client)).json()["job_id"]
        beats = await beats_of(db, job_id, for_s=3 * pace_s + 1)  # two gaps, however busy
        fake_llm.release()
    gaps = [later - earlier for earlier, later in zip(beats, beats[1:], strict=False)]
    assert len(gaps) >= 2, beats
    # Never sooner than its pace; later only by what a busy machine adds (a beat at the
    # stop pace of 1.5 s still tells apart from the 3 s interval).
    assert all(pace_s - 0.2 < gap < pace_s + max(0.5, pace_s / 2) for gap in gaps), beats
