"""A real network partition: one app reaches PostgreSQL through a TCP proxy that the test
cuts for longer than HEARTBEAT_STALE_S while that app's story streams (the process alive,
its heartbeat unwritable), while another app on the same database carries on.

chat: the other process's sweeper gives the job up as 'interrupted'; the cut-off worker,
which still owns it, completes it with its story once the database is back.
responses: the other process adopts the job (it has a response id) and completes it by
following the same response; the cut-off worker finds the job no longer its own and
stores nothing. In both, one billed call, one story, and every story reachable.
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from app.queue.check import check_invariants
from tests.helpers.app import post_story, serve, wait_for_job
from tests.helpers.proxy import CuttableProxy
from tests.helpers.sql import fetch_val
from tests.helpers.waits import WAIT_S

pytestmark = pytest.mark.anyio


async def until(condition, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not await condition():
        assert time.monotonic() < deadline, "the condition never came true"
        await asyncio.sleep(0.05)


async def stale(db, job_id: int, stale_s: float) -> bool:
    return await fetch_val(db, "SELECT heartbeat_at < now() - make_interval(secs => :s)"
                               " FROM story_jobs WHERE id = :id", {"id": job_id, "s": stale_s})


async def test_chat_a_worker_cut_off_from_the_database_still_delivers_its_story(
    make_app, fake_llm, db, database_url, settings, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.hold()
    with CuttableProxy(database_url) as proxy:
        cut_off, other = make_app(database_url=proxy.url), make_app(worker_concurrency=0)
        async with serve(cut_off) as client, serve(other) as other_client:
            job_id = (await post_story(client)).json()["job_id"]
            await asyncio.to_thread(fake_llm.wait_for_call, job_id)
            proxy.cut()
            # The other process's sweeper looks again the moment the heartbeat goes stale,
            # and gives the job up while its worker is alive.
            await until(lambda: _logged(caplog, f"event=job_swept job_id={job_id}"
                                                " error=interrupted"))
            assert await fetch_val(db, "SELECT status FROM story_jobs WHERE id = :id",
                                   {"id": job_id}) == "failed"
            fake_llm.release()  # the story arrives at the cut-off worker
            await until(lambda: _logged(caplog, f"event=store_retry job_id={job_id}"))
            proxy.heal()
            job = await wait_for_job(other_client, job_id, ("completed",), timeout_s=20)
    assert job["story_id"] is not None and job["error"] is None
    assert fake_llm.calls_for(job_id) == 1
    assert await fetch_val(db, "SELECT count(*) FROM stories WHERE job_id = :id",
                           {"id": job_id}) == 1
    assert "story_orphaned" not in caplog.text
    report = await check_invariants(db, settings)
    assert not report.broken, report.format()


async def test_responses_the_job_is_adopted_and_the_cut_off_worker_stores_nothing(
    make_app, fake_llm, db, database_url, settings, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.chunk_delay_s = 0.01
    fake_llm.hold_after_chunks = 3
    fake_llm.hold()
    with CuttableProxy(database_url) as proxy:
        cut_off = make_app(database_url=proxy.url, llm_api="responses")
        async with serve(cut_off) as client:
            job_id = (await post_story(client)).json()["job_id"]
            await until(lambda: fetch_val(db, "SELECT response_sequence IS NOT NULL FROM"
                                              " story_jobs WHERE id = :id", {"id": job_id}))
            proxy.cut()
            await until(lambda: stale(db, job_id, settings.heartbeat_stale_s))
            # Another process: it adopts the job and follows the same response.
            async with serve(make_app(llm_api="responses")) as other_client:
                await until(lambda: _logged(caplog, f"event=job_adopted job_id={job_id}"))
                fake_llm.release()
                job = await wait_for_job(other_client, job_id, ("completed",), timeout_s=20)
                proxy.heal()
                await until(lambda: _logged(caplog, f"event=job_lost job_id={job_id}"),
                            timeout_s=20)
    assert fake_llm.creates_for(job_id) == 1 and fake_llm.calls_for(job_id) == 1
    assert fake_llm.cancels_for(job_id) == 0
    assert await fetch_val(db, "SELECT count(*) FROM stories WHERE job_id = :id",
                           {"id": job_id}) == 1
    assert job["error"] is None and job["story_id"] is not None
    report = await check_invariants(db, settings)
    assert not report.broken, report.format()


async def _logged(caplog, text: str) -> bool:
    return text in caplog.text
