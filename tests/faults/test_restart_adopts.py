"""kill -9 and a restart on the same machine (LLM_API=responses, the default heartbeats,
WORKER_CONCURRENCY=1): the new process finds the old one's pid gone, and the first thing
its one slot does is adopt the story already paid for, with a newer job waiting. One
create for it, and the waiting job is run after it.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from tests.faults.test_handover import background_app, completed, streaming
from tests.helpers.processes import submit
from tests.helpers.sql import fetch_one, fetch_val
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = pytest.mark.anyio

DEFAULTS = {"HEARTBEAT_INTERVAL_S": "5", "HEARTBEAT_STALE_S": "60",
            "WORKER_CONCURRENCY": "1"}
AT_ONCE_S = 3.0  # a dead owner's beats are missed for 7.5 s before it is adopted otherwise


async def test_after_kill_9_the_restarted_process_adopts_the_paid_story_before_a_waiting_job(
    database_url, fake_llm, db, tmp_path
):
    fake_llm.chunk_delay_s = 0.05
    fake_llm.hold_after_chunks = 3
    fake_llm.hold()
    first = background_app(database_url, fake_llm, tmp_path / "first.log", **DEFAULTS)
    await first.start()
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=HTTP_TIMEOUT_S) as client:
            [paid] = await submit(client, 1, run=0)
            dead_owner = (await streaming(db, paid))["claimed_by"]
            [waiting] = await submit(client, 1, run=0, start=1)  # the one slot is busy
    finally:
        first.kill9()
    second = background_app(database_url, fake_llm, tmp_path / "second.log", **DEFAULTS)
    await second.start()
    try:
        deadline = time.monotonic() + AT_ONCE_S
        while await fetch_val(db, "SELECT claimed_by FROM story_jobs WHERE id = :id",
                              {"id": paid}) == dead_owner:
            assert time.monotonic() < deadline, (tmp_path / "second.log").read_text()
            await asyncio.sleep(0.05)
        row = await fetch_one(db, "SELECT status FROM story_jobs WHERE id = :id",
                              {"id": waiting})
        assert row["status"] == "pending" and fake_llm.creates_for(waiting) == 0
        fake_llm.release()
        job = await completed(second.url, paid)
        later = await completed(second.url, waiting)
    finally:
        second.stop()
    log = (tmp_path / "second.log").read_text()
    assert f"event=process_found_gone boot_id={dead_owner}" in log
    assert f"event=job_adopted job_id={paid}" in log
    assert job["status"] == "completed" and later["status"] == "completed", (job, later)
    assert fake_llm.creates_for(paid) == 1 and fake_llm.calls_for(paid) == 1
    assert fake_llm.creates_for(waiting) == 1
