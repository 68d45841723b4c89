"""kill -9 while a narration part is read: its one call made, the process gone. The part
ends `failed` ('interrupted'), its call charged in the ledger, and nothing reads it again by
itself; asking again makes a job for the missing part alone."""

from __future__ import annotations

import asyncio
import time
import uuid

import asyncpg
import httpx
import pytest

from tests.helpers.narrations import SHORT_STORY
from tests.helpers.processes import AppProcess, ledger_problems, problems_in_logs_and_check
from tests.helpers.sql import fetch_all, fetch_one
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = [pytest.mark.anyio, pytest.mark.chaos, pytest.mark.slow]

ENDED_WITHIN_S = 90


def narrating_app(database_url: str, fake, log) -> AppProcess:
    app = AppProcess(database_url, fake.url, log)
    app.env |= {"LLM_API": "chat", "ILLUSTRATOR": "off", "NARRATOR": "speech",
                "VOICE_MODEL": "kokoro", "VOICE": "af_heart",
                "PRICES": '{"kokoro": {"input_per_mtok": 15}}'}
    return app


async def until_job(db, job_id: int, status: str) -> dict:
    deadline = time.monotonic() + ENDED_WITHIN_S
    while True:
        row = await fetch_one(db, "SELECT * FROM story_jobs WHERE id = :id", {"id": job_id})
        if row["status"] == status:
            return row
        assert time.monotonic() < deadline, f"job {job_id} still {row['status']}"
        await asyncio.sleep(0.1)


async def ask(client: httpx.AsyncClient, story_id: int) -> int:
    answer = await client.post(f"/stories/{story_id}/narration", json={},
                               headers={"Idempotency-Key": uuid.uuid4().hex})
    assert answer.status_code == 202, answer.text
    return answer.json()["job_id"]


async def test_kill_9_mid_call_charges_the_part_once_and_never_reads_it_again(
        database_url, fake_llm, db, tmp_path):
    fake_llm.story = SHORT_STORY
    fake_llm.audio.mode = "hang"
    first = narrating_app(database_url, fake_llm, tmp_path / "first.log")
    await first.start()
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=HTTP_TIMEOUT_S) as client:
            made = await client.post("/stories/generate", json={"prompt": "a whale"},
                                     headers={"Idempotency-Key": uuid.uuid4().hex})
            story_job = await until_job(db, made.json()["job_id"], "completed")
            cut_off = await ask(client, story_job["story_id"])
            await asyncio.to_thread(fake_llm.audio.wait_for_call, cut_off)
    finally:
        first.kill9()
    fake_llm.audio.mode = "ok"
    second = narrating_app(database_url, fake_llm, tmp_path / "second.log")
    await second.start()
    try:
        failed = await until_job(db, cut_off, "failed")
        assert failed["error_text"] == "interrupted"
        [charged] = await fetch_all(db, "SELECT * FROM spend WHERE job_id = :id",
                                    {"id": cut_off})
        assert (charged["kind"], charged["model"], charged["estimated"]) == (
            "narration", "kokoro", True)
        assert charged["cost_micros"] == failed["set_aside_micros"] > 0
        await asyncio.sleep(1.0)  # a second process, with a free slot: it reads nothing
        assert fake_llm.audio.calls_for(cut_off) == 1
        async with httpx.AsyncClient(base_url=second.url, timeout=HTTP_TIMEOUT_S) as client:
            story = (await client.get(f"/stories/{story_job['story_id']}",
                                      headers={"Accept": "application/json"})).json()
            assert story["narration"]["status"] == "failed"
            again = await ask(client, story_job["story_id"])
            done = await until_job(db, again, "completed")
        assert done["narration_part"] == failed["narration_part"] == 0
        assert fake_llm.audio.calls_for(cut_off) == 1 and fake_llm.audio.calls_for(again) == 1
        assert fake_llm.audio.total_calls() == 2
    finally:
        second.stop()
    conn = await asyncpg.connect(database_url)
    try:
        assert await ledger_problems(conn, fake_llm) == []
    finally:
        await conn.close()
    assert problems_in_logs_and_check([second]) == []
