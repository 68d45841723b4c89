"""Deploys hand stories over (LLM_API=responses): SIGTERM to the real app, as a platform
sends it, with the default heartbeats (a dead process's job would wait a minute to look
dead): the process lets go of its story and exits in seconds, without waiting the
shutdown grace; the next process adopts the story at once and completes it, one create.
kill -9 mid-story: the story is adopted once the heartbeat is stale, one create.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from tests.chaos import SIGTERM_EXIT_WITHIN_S
from tests.helpers.app import ACCEPT_JSON
from tests.helpers.processes import AppProcess, submit
from tests.helpers.sql import fetch_one
from tests.helpers.waits import HTTP_TIMEOUT_S, WAIT_S

pytestmark = pytest.mark.anyio


def background_app(database_url: str, fake_llm, log_path, **env: str) -> AppProcess:
    app = AppProcess(database_url, fake_llm.url, log_path)
    app.env |= {"LLM_API": "responses", **env}
    return app


async def streaming(db, job_id: int, timeout_s: float = WAIT_S) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        row = await fetch_one(db, "SELECT text_so_far, response_sequence, claimed_by FROM"
                                  " story_jobs WHERE id = :id", {"id": job_id})
        if row["text_so_far"] and row["response_sequence"] is not None:
            return row
        assert time.monotonic() < deadline, "the story never streamed"
        await asyncio.sleep(0.05)


async def completed(url: str, job_id: int, timeout_s: float = WAIT_S) -> dict:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT_S) as client:
        while True:
            job = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
            if job["status"] in ("completed", "failed"):
                return job
            assert time.monotonic() < deadline, job
            await asyncio.sleep(0.1)


async def test_sigterm_hands_the_story_over_and_the_next_process_completes_it(
    database_url, fake_llm, db, tmp_path
):
    defaults = {"HEARTBEAT_INTERVAL_S": "5", "HEARTBEAT_STALE_S": "60",
                "SHUTDOWN_GRACE_S": "240"}
    fake_llm.chunk_delay_s = 0.05
    fake_llm.hold_after_chunks = 3
    fake_llm.hold()
    first = background_app(database_url, fake_llm, tmp_path / "first.log", **defaults)
    await first.start()
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=HTTP_TIMEOUT_S) as client:
            [job_id] = await submit(client, 1, run=0)
        await streaming(db, job_id)
        asked = time.monotonic()
        first.process.terminate()
        exit_code = await asyncio.to_thread(first.process.wait, 30)
        exit_s = time.monotonic() - asked
    finally:
        first.stop()
    log = (tmp_path / "first.log").read_text()
    assert exit_code == 0 and exit_s < SIGTERM_EXIT_WITHIN_S, (exit_s, log)
    assert f"event=job_handed_over job_id={job_id}" in log
    row = await fetch_one(db, "SELECT status, claimed_by FROM story_jobs WHERE id = :id",
                          {"id": job_id})
    assert (row["status"], row["claimed_by"]) == ("running", None)

    second = background_app(database_url, fake_llm, tmp_path / "second.log", **defaults)
    await second.start()
    try:
        fake_llm.release()
        job = await completed(second.url, job_id, timeout_s=15)  # not after a minute
    finally:
        second.stop()
    assert job["status"] == "completed", job
    assert f"event=job_adopted job_id={job_id}" in (tmp_path / "second.log").read_text()
    assert fake_llm.creates_for(job_id) == 1 and fake_llm.calls_for(job_id) == 1
    [response_id] = fake_llm.response_ids_for(job_id)
    written = fake_llm.response(response_id)["output"][0]["content"][0]["text"]
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": job_id})
    assert f"{story['title']}\n\n{story['body']}" == written.strip()  # each word once


async def test_kill_9_mid_story_the_story_is_adopted_after_a_restart(
    database_url, fake_llm, db, tmp_path
):
    fake_llm.chunk_delay_s = 0.05
    fake_llm.hold_after_chunks = 3
    fake_llm.hold()
    first = background_app(database_url, fake_llm, tmp_path / "first.log")
    await first.start()
    async with httpx.AsyncClient(base_url=first.url, timeout=HTTP_TIMEOUT_S) as client:
        [job_id] = await submit(client, 1, run=0)
    await streaming(db, job_id)
    first.kill9()
    fake_llm.release()  # the provider writes on, whatever happened to the app
    second = background_app(database_url, fake_llm, tmp_path / "second.log")
    await second.start()
    try:
        job = await completed(second.url, job_id)
    finally:
        second.stop()
    assert job["status"] == "completed", job
    assert fake_llm.creates_for(job_id) == 1
