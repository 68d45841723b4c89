"""Faults: graceful shutdown of the real process, a real PostgreSQL outage, and the live
race between the sweeper and a worker whose LLM call is in flight."""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import time
import uuid
from pathlib import Path

import asyncpg
import httpx
import pytest

from app.embedded import embedded_server
from app.queue.check import check_invariants
from app.queue.processes import ProcessRegistry
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.database import postgres_dir
from tests.helpers.jobs import add_job
from tests.helpers.locks import holding, wait_until_blocked
from tests.helpers.processes import AppProcess, submit
from tests.helpers.sql import execute, fetch_val
from tests.helpers.waits import HTTP_TIMEOUT_S, until

pytestmark = pytest.mark.anyio


# -- graceful shutdown (SIGTERM, as a PaaS sends before a redeploy) ----------------------


async def statuses(database_url: str) -> dict[int, tuple[str, str | None]]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT id, status, error_text FROM story_jobs")
    finally:
        await conn.close()
    return {row["id"]: (row["status"], row["error_text"]) for row in rows}


@pytest.mark.parametrize("finishes_in_time", [True, False])
async def test_sigterm_finishes_or_interrupts_the_running_job_and_keeps_the_waiting_ones(
    database_url, fake_llm, tmp_path, finishes_in_time
):
    fake_llm.hold()
    app = AppProcess(database_url, fake_llm.url, tmp_path / "app.log")
    app.env["SHUTDOWN_GRACE_S"] = "3"
    await app.start()
    async with httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) as client:
        running, *waiting = await submit(client, 3, run=0)
    await asyncio.to_thread(fake_llm.wait_for_call, running)

    app.process.send_signal(signal.SIGTERM)
    started = time.monotonic()
    if finishes_in_time:  # the story comes within the grace period
        await app.logged(f"event=shutdown_waiting job_ids={running}")
        fake_llm.release()
    exit_code = await asyncio.to_thread(app.process.wait, 30)
    elapsed = time.monotonic() - started

    assert exit_code == 0
    jobs = await statuses(database_url)
    if finishes_in_time:
        assert jobs[running] == ("completed", None)
    else:
        assert jobs[running] == ("failed", "interrupted")
        assert 3 <= elapsed < 10  # the grace period, then no longer
    assert [jobs[j] for j in waiting] == [("pending", None)] * 2  # for the next process
    assert fake_llm.calls_for(running) == 1 and fake_llm.total_calls == 1
    log = app.log_path.read_text()
    assert "event=shutdown_requested" in log
    assert f"event=shutdown_waiting job_ids={running}" in log
    if not finishes_in_time:
        assert f"event=job_failed job_id={running} error=interrupted" in log
    assert "Traceback" not in log


async def test_after_sigterm_new_connections_are_refused_and_nothing_is_written(
    database_url, fake_llm, tmp_path
):
    fake_llm.hold()
    app = AppProcess(database_url, fake_llm.url, tmp_path / "app.log")
    await app.start()
    async with httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) as client:
        running, = await submit(client, 1, run=0)
        await asyncio.to_thread(fake_llm.wait_for_call, running)
        app.process.send_signal(signal.SIGTERM)
        # uvicorn has closed its sockets before the app's own shutdown says it waits
        await app.logged(f"event=shutdown_waiting job_ids={running}")
        with pytest.raises(httpx.TransportError):
            await post_story(client)
    fake_llm.release()
    assert await asyncio.to_thread(app.process.wait, 30) == 0
    assert list(await statuses(database_url)) == [running]


# -- a real PostgreSQL outage --------------------------------------------------------------


@pytest.fixture
def own_postgres():
    """A PostgreSQL server of this test's own, so it can be stopped and started."""
    data_dir = postgres_dir()
    server = embedded_server(data_dir, stop_at_exit=True)

    def stop() -> None:
        server.stop()  # pg_ctl stop: fast mode, waits until the server is down

    def start() -> None:
        with server._lock:
            server.ensure_postgres_running()

    yield server.get_uri(), stop, start
    server.cleanup()
    shutil.rmtree(data_dir.parent, ignore_errors=True)


async def test_a_database_outage_answers_503_and_the_story_is_stored_afterwards(
    own_postgres, make_app, fake_llm
):
    url, stop_postgres, start_postgres = own_postgres
    fake_llm.hold()
    app = make_app(database_url=url, heartbeat_stale_s=60, heartbeat_interval_s=0.5)
    async with serve(app) as client:
        job_id = (await post_story(client)).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, job_id)

        await asyncio.to_thread(stop_postgres)
        fake_llm.release()  # the story comes back while the database is down
        outage_started = time.monotonic()
        while time.monotonic() - outage_started < 10:
            for request in (
                client.get("/healthz"),
                client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON),
                client.get(f"/stories/jobs/{job_id}"),
                client.get("/stories", headers=ACCEPT_JSON),
                post_story(client),
            ):
                asked = time.monotonic()
                response = await asyncio.wait_for(request, 6)
                assert time.monotonic() - asked < 6  # never a long hang
                assert response.status_code == 503, response.text
                assert "Traceback" not in response.text
                if response.headers["content-type"].startswith("application/json"):
                    body = response.json()
                    assert body.get("database") == "down" or \
                        body["error"]["code"] == "unavailable"
            await asyncio.sleep(0.5)

        await asyncio.to_thread(start_postgres)
        job = await wait_for_job(client, job_id, timeout_s=30)
        assert job["status"] == "completed"  # stored once the database was back
        assert (await client.get("/healthz")).json()["database"] == "ok"
    assert fake_llm.calls_for(job_id) == 1


async def test_jobs_waiting_through_a_database_outage_all_run_afterwards_once_each(
    own_postgres, make_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    url, stop_postgres, start_postgres = own_postgres
    fake_llm.hold()
    async with serve(make_app(database_url=url, heartbeat_stale_s=60,
                              heartbeat_interval_s=0.5)) as client:
        running = (await post_story(client, {"prompt": "one"})).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, running)
        waiting = [(await post_story(client, {"prompt": p})).json()["job_id"]
                   for p in ("two", "three")]
        await asyncio.to_thread(stop_postgres)
        fake_llm.release()
        # The story cannot be stored, the LISTEN connection drops: the rows are safe.
        await until(lambda: f"event=store_retry job_id={running}" in caplog.text
                    and "event=listen_lost" in caplog.text, "the outage felt")
        await asyncio.to_thread(start_postgres)
        jobs = [await wait_for_job(client, j, timeout_s=30) for j in [running, *waiting]]
    assert [job["status"] for job in jobs] == ["completed"] * 3
    assert [fake_llm.calls_for(j) for j in [running, *waiting]] == [1, 1, 1]


async def test_start_up_waits_for_a_database_that_is_still_starting(
        own_postgres, make_app, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    url, stop_postgres, start_postgres = own_postgres
    await asyncio.to_thread(stop_postgres)
    app = make_app(database_url=url)

    async def start_soon() -> None:
        await until(lambda: "event=database_waiting" in caplog.text, "the app waiting")
        await asyncio.to_thread(start_postgres)

    starter = asyncio.create_task(start_soon())
    async with serve(app) as client:
        assert (await client.get("/healthz")).json()["database"] == "ok"
    await starter


# -- the live race: a stale job whose LLM call is in flight --------------------------------


async def hold_row(database_url: str, sql: str, *args: object):
    conn = await asyncpg.connect(database_url)
    transaction = conn.transaction()
    await transaction.start()
    await conn.execute(sql, *args)
    return conn, transaction


async def test_live_race_a_worker_cut_off_past_the_stale_limit_still_completes_its_job(
    make_app, fake_llm, db, database_url, settings, caplog
):
    # The worker's heartbeats did not reach the database for longer than the stale limit
    # (a partition): the sweeper judges it dead while its LLM call is still in flight. The
    # worker was alive and still owns the job, so its story completes it (chat mode).
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.hold()
    async with serve(make_app(heartbeat_stale_s=60)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, job_id)
        async with holding(database_url) as sweeper_side:
            # Backdated in the sweeper's own transaction: the row is locked from here on,
            # so the worker's next beat (every 0.2 s) waits and cannot undo it first.
            await execute(sweeper_side.db,
                "UPDATE story_jobs SET heartbeat_at = now() - interval '1 hour' WHERE id = :id",
                {"id": job_id})
            assert await sweeper_side.sweep_dead_running(60) == ([], [job_id], [])
            fake_llm.release()  # the story comes back; storing it waits for the row
            await wait_until_blocked(db, "insert_story")
        job = await wait_for_job(client, job_id, ("completed",))
        story_count = await fetch_val(db,
            "SELECT count(*) FROM stories WHERE job_id = :id", {"id": job_id})
    assert (job["status"], job["error"]) == ("completed", None)
    assert story_count == 1 and job["story_id"] is not None
    assert "event=story_orphaned" not in caplog.text
    assert fake_llm.calls_for(job_id) == 1
    report = await check_invariants(db, settings)
    assert not report.broken, report


async def test_live_race_worker_wins_the_sweeper_updates_nothing(
    make_app, fake_llm, db, database_url
):
    fake_llm.hold()
    app = make_app(heartbeat_stale_s=60, heartbeat_interval_s=600)  # no beat during the test
    async with serve(app) as client:
        job_id = (await post_story(client)).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, job_id)
        await execute(db,   # the job looks dead to any sweep from now on
            "UPDATE story_jobs SET heartbeat_at = now() - interval '1 hour' WHERE id = :id",
            {"id": job_id})
        conn, transaction = await hold_row(
            database_url, "SELECT id FROM story_jobs WHERE id = $1 FOR NO KEY UPDATE", job_id)
        fake_llm.release()
        await wait_until_blocked(db, "insert_story")  # storing the story is first in line
        sweep = asyncio.create_task(app.state.services.sweeper.sweep())
        await wait_until_blocked(db, "sweep_dead_running")  # the sweeper behind it
        await transaction.commit()
        await conn.close()
        result = await sweep
        job = await wait_for_job(client, job_id)
    assert result.interrupted == [] and result.recovered == []  # the loser updated nothing
    assert job["status"] == "completed"
    assert fake_llm.calls_for(job_id) == 1


def test_check_command_reports_broken_invariants(database_url, tmp_path):
    import os
    import subprocess
    import sys

    async def arrange() -> int:
        conn = await asyncpg.connect(database_url)
        try:
            return await conn.fetchval(
                "INSERT INTO story_jobs (idempotency_key, request_hash, prompt, length, status,"
                " started_at, heartbeat_at, claimed_by)"
                " VALUES ($1, 'h', 'p', 'short', 'running', now() - interval '1 hour',"
                " now() - interval '1 hour', $2) RETURNING id", "k", uuid.uuid4())
        finally:
            await conn.close()

    env = {**os.environ, "DATABASE_URL": database_url}
    root = Path(__file__).resolve().parents[2]
    clean = subprocess.run([sys.executable, "-m", "app", "check"], cwd=root, env=env,
                           capture_output=True, text=True, timeout=60)
    assert clean.returncode == 0 and "invariants: ok" in clean.stdout
    dead = asyncio.run(arrange())
    broken = subprocess.run([sys.executable, "-m", "app", "check"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=60)
    assert broken.returncode == 1
    assert f"ids: {dead}" in broken.stdout and "invariants: BROKEN" in broken.stdout


async def test_check_reports_jobs_expired_while_a_worker_was_alive_or_left_stranded(
    db, settings
):
    store = JobStore(db)
    wrongly = await add_job(store, "wrongly", StoryRequest(prompt="expired while alive"), "h")
    stranded = await add_job(store, "stranded", StoryRequest(prompt="nobody expired it"), "h")
    await execute(db, "UPDATE story_jobs SET created_at = now() - interval '2 hours'")
    # The sweeper judged no worker alive: this job expires, correctly, and nothing is wrong.
    assert await store.sweep_expired_pending(480) == [wrongly.id, stranded.id]
    assert not (await check_invariants(store.db, settings)).broken
    # Had a worker been alive then (started before, beating since), it was a defect.
    await ProcessRegistry(store.db).register(uuid.uuid4(), host="h", pid=1, concurrency=1)
    await execute(db, "UPDATE workers SET started_at = now() - interval '3 hours'")
    await execute(db,
        "UPDATE story_jobs SET status = 'pending', error_text = NULL, completed_at = NULL"
        " WHERE id = :id", {"id": stranded.id})
    await execute(db, "UPDATE workers SET heartbeat_at = now() - interval '1 hour'")
    report = await check_invariants(store.db, settings)
    assert report.count("jobs expired while a worker was alive") == 0
    assert report.count("pending jobs with no live worker") == 1  # the sweeper is behind
    await execute(db, "UPDATE workers SET heartbeat_at = now()")
    report = await check_invariants(store.db, settings)
    assert report.count("jobs expired while a worker was alive") == 1 and report.broken
    assert report.count("pending jobs with no live worker") == 0
