"""Several processes on one database, as real subprocesses: uvicorn's WEB_CONCURRENCY
workers, web processes side by side, worker-only processes, a dyno that dies, a deploy
that overlaps the old release with the new. The queue is the table, so every accepted job
runs once, in whichever process is free, and nothing expires while a worker lives."""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.helpers.app import post_story
from tests.helpers.platform import procfile
from tests.helpers.processes import AppProcess, submit
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = pytest.mark.anyio

TERMINAL = ("completed", "failed")


async def jobs_by_id(database_url: str) -> dict[int, asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT id, status, error_text, claimed_by FROM story_jobs")
    finally:
        await conn.close()
    return {row["id"]: row for row in rows}


async def wait_all_terminal(database_url: str, job_ids: list[int], timeout_s: float = 60) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        jobs = await jobs_by_id(database_url)
        if all(jobs[j]["status"] in TERMINAL for j in job_ids):
            return jobs
        if asyncio.get_running_loop().time() > deadline:
            unfinished = {j: jobs[j]["status"] for j in job_ids
                          if jobs[j]["status"] not in TERMINAL}
            raise AssertionError(f"jobs still unfinished: {unfinished}")
        await asyncio.sleep(0.1)


def app_process(database_url, fake_llm, tmp_path: Path, name: str, **env: str) -> AppProcess:
    app = AppProcess(database_url, fake_llm.url, tmp_path / f"{name}.log")
    # Expiry is quick here (6 s, swept every second): were a waiting job judged by one
    # process's memory, the deep queues below would expire before they drained.
    app.env |= {"SWEEPER_THRESHOLD_MIN": "0.1", "SWEEPER_INTERVAL_S": "1",
                "QUEUE_MAX": "50", **env}
    return app


def stop_all(*apps: AppProcess) -> None:
    for app in apps:
        app.stop()


def assert_clean_logs(*apps: AppProcess) -> None:
    for app in apps:
        text = app.log_path.read_text()
        assert "Traceback" not in text, text[-3000:]
        assert "error=expired" not in text


# Three processes (six more jobs, one more start) is the same drain at another size: a
# variant, which make test-all runs.
@pytest.mark.parametrize("processes", [2, pytest.param(3, marks=pytest.mark.variant)])
@pytest.mark.slow
async def test_a_deep_queue_through_several_processes_drains_each_job_once(
    database_url, fake_llm, tmp_path, processes
):
    fake_llm.delay_s = 1.2  # six jobs each: the last waits past the 6 s threshold
    apps = [app_process(database_url, fake_llm, tmp_path, f"app{n}") for n in range(processes)]
    try:
        await asyncio.gather(*(app.start() for app in apps))
        job_ids: list[int] = []
        for round_ in range(6):  # submitted through every process in turn
            for app in apps:
                async with httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) as client:
                    job_ids += await submit(client, 1, run=round_, start=len(job_ids))
        jobs = await wait_all_terminal(database_url, job_ids)
    finally:
        stop_all(*apps)
    assert [jobs[j]["status"] for j in job_ids] == ["completed"] * len(job_ids)
    assert all(fake_llm.calls_for(j) == 1 for j in job_ids)
    assert len({jobs[j]["claimed_by"] for j in job_ids}) == processes  # all took part
    assert_clean_logs(*apps)


@pytest.mark.slow
async def test_the_procfile_web_line_with_web_concurrency_2_runs_eight_stories(
    database_url, fake_llm, tmp_path
):
    fake_llm.delay_s = 0.5
    command = shlex.split(procfile()["web"].replace("$PORT", "{port}"))
    app = app_process(database_url, fake_llm, tmp_path, "web", WEB_CONCURRENCY="2")
    app.command = command
    try:
        await app.start(started_lines=2)  # both of uvicorn's worker processes
        async with httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) as client:
            responses = await asyncio.gather(*(
                post_story(client, {"prompt": f"eight at once {n}"}) for n in range(8)))
            assert [r.status_code for r in responses] == [202] * 8
            job_ids = [r.json()["job_id"] for r in responses]
        jobs = await wait_all_terminal(database_url, job_ids)
        app.process.send_signal(signal.SIGTERM)
        exit_code = await asyncio.to_thread(app.process.wait, 30)
    finally:
        app.stop()
    assert [jobs[j]["status"] for j in job_ids] == ["completed"] * 8
    assert all(fake_llm.calls_for(j) == 1 for j in job_ids)
    assert len({jobs[j]["claimed_by"] for j in job_ids}) == 2
    assert exit_code == 0
    log = app.log_path.read_text()
    assert log.count("event=stopped") == 2
    # Each process served first and loaded the model's client library after
    # (app/storytelling/provider.py).
    assert log.count("event=provider_loaded") == 2
    assert_clean_logs(app)


@pytest.mark.slow
async def test_when_one_process_dies_the_other_runs_every_job_that_had_not_started(
    database_url, fake_llm, tmp_path
):
    fake_llm.hold()
    first = app_process(database_url, fake_llm, tmp_path, "first")
    second = app_process(database_url, fake_llm, tmp_path, "second")
    try:
        await first.start()
        await second.start()
        async with httpx.AsyncClient(base_url=first.url, timeout=HTTP_TIMEOUT_S) as client:
            job_ids = await submit(client, 6, run=0)
        # Each process is writing one job; four wait.
        await asyncio.to_thread(fake_llm.wait_for_call, job_ids[0])
        await asyncio.to_thread(fake_llm.wait_for_call, job_ids[1])
        first_boot = await boot_id_of(database_url, first.pid)
        dead_job = next(j for j, row in (await jobs_by_id(database_url)).items()
                        if row["claimed_by"] == first_boot)
        first.kill9()
        fake_llm.release()
        jobs = await wait_all_terminal(database_url, job_ids, timeout_s=30)
    finally:
        stop_all(first, second)
    assert (jobs[dead_job]["status"], jobs[dead_job]["error_text"]) == ("failed", "interrupted")
    others = [j for j in job_ids if j != dead_job]
    assert [jobs[j]["status"] for j in others] == ["completed"] * 5
    assert all(fake_llm.calls_for(j) == 1 for j in job_ids)
    assert_clean_logs(second)


@pytest.mark.slow
async def test_a_deploy_overlap_runs_every_job_either_release_accepted(
    database_url, fake_llm, tmp_path
):
    fake_llm.delay_s = 0.2
    old = app_process(database_url, fake_llm, tmp_path, "old", SHUTDOWN_GRACE_S="5")
    new = app_process(database_url, fake_llm, tmp_path, "new")
    try:
        await old.start()
        async with httpx.AsyncClient(base_url=old.url, timeout=HTTP_TIMEOUT_S) as client:
            job_ids = await submit(client, 3, run=0, app=old)
            await new.start()  # the new release boots while the old one still serves
            job_ids += await submit(client, 3, run=1, start=3, app=old)
        old.process.send_signal(signal.SIGTERM)
        async with httpx.AsyncClient(base_url=new.url, timeout=HTTP_TIMEOUT_S) as client:
            job_ids += await submit(client, 2, run=2, start=6, app=new)
        assert await asyncio.to_thread(old.process.wait, 30) == 0
        jobs = await wait_all_terminal(database_url, job_ids)
    finally:
        stop_all(old, new)
    assert [jobs[j]["status"] for j in job_ids] == ["completed"] * len(job_ids)
    assert all(fake_llm.calls_for(j) == 1 for j in job_ids)
    assert_clean_logs(old, new)


@pytest.mark.slow
async def test_queue_max_counts_the_jobs_waiting_in_every_process(
    database_url, fake_llm, tmp_path
):
    fake_llm.hold()
    apps = [app_process(database_url, fake_llm, tmp_path, name, QUEUE_MAX="2")
            for name in ("a", "b")]
    try:
        for app in apps:
            await app.start()
        async with httpx.AsyncClient(base_url=apps[0].url, timeout=HTTP_TIMEOUT_S) as a, \
                httpx.AsyncClient(base_url=apps[1].url, timeout=HTTP_TIMEOUT_S) as b:
            running = await submit(a, 1, run=0) + await submit(b, 1, run=0, start=1)
            for job_id in running:  # one writing in each process
                await asyncio.to_thread(fake_llm.wait_for_call, job_id)
            waiting = await submit(a, 1, run=0, start=2) + await submit(b, 1, run=0, start=3)
            refused = [await post_story(a, {"prompt": "five"}),
                       await post_story(b, {"prompt": "six"})]
            assert [r.status_code for r in refused] == [429, 429]
            assert {r.json()["error"]["code"] for r in refused} == {"queue_full"}
            health = (await b.get("/healthz")).json()
        jobs = await jobs_by_id(database_url)
        fake_llm.release()
        await wait_all_terminal(database_url, running + waiting)
    finally:
        stop_all(*apps)
    assert len(jobs) == 4  # the refusals wrote nothing
    assert health["queue_depth"] == 2


@pytest.mark.slow
async def test_a_worker_only_process_runs_the_jobs_a_serve_only_web_process_accepts(
    database_url, fake_llm, tmp_path
):
    web = app_process(database_url, fake_llm, tmp_path, "web", WORKER_CONCURRENCY="0")
    worker = app_process(database_url, fake_llm, tmp_path, "worker")
    worker.command = [sys.executable, "-m", "app", "worker"]
    worker.serves_http = False
    try:
        await web.start()
        await worker.start()
        async with httpx.AsyncClient(base_url=web.url, timeout=HTTP_TIMEOUT_S) as client:
            assert (await client.get("/healthz")).json()["worker"] == "off"
            job_ids = await submit(client, 3, run=0)
        jobs = await wait_all_terminal(database_url, job_ids)
        worker.process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(worker.process.wait, 30) == 0
    finally:
        stop_all(web, worker)
    outcomes = {j: (jobs[j]["status"], jobs[j]["error_text"]) for j in job_ids}
    assert [status for status, _ in outcomes.values()] == ["completed"] * 3, (
        outcomes, worker.log_path.read_text()[-4000:], web.log_path.read_text()[-2000:])
    worker_boot = {jobs[j]["claimed_by"] for j in job_ids}
    assert len(worker_boot) == 1
    log = worker.log_path.read_text()
    assert "event=started" in log and "event=stopped" in log
    assert_clean_logs(web, worker)


async def boot_id_of(database_url: str, pid: int):
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval("SELECT boot_id FROM workers WHERE pid = $1", pid)
    finally:
        await conn.close()
