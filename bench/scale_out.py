"""Benchmark: throughput with 1, 2 and 4 processes on one database, and POST -> running.

    .venv/bin/python bench/scale_out.py [--per-process 6]

Runs the real app as subprocesses (`uvicorn app.main:app`, one worker slot each) against
an embedded PostgreSQL and the tests' fake OpenAI-compatible server, which takes 1 s per
story. Figures read as ratios against a baseline from the same run:

- jobs per second with N processes, against 1 process (ideal: N x);
- POST -> running for an idle worker (started_at - created_at, both stamped by the
  database), when the accepting process runs the job itself and when another process
  accepted it (the NOTIFY path), against the idle re-check interval a poller would need.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.embedded import embedded_postgres_url  # noqa: E402
from app.services import IDLE_RECHECK_S  # noqa: E402
from tests.helpers.database import with_database  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402
from tests.helpers.processes import AppProcess, submit  # noqa: E402

LLM_DELAY_S = 1.0


async def fresh_database(server_url: str) -> str:
    name = f"bench_{uuid.uuid4().hex[:8]}"
    conn = await asyncpg.connect(server_url)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    return with_database(server_url, name)


def processes(database_url: str, fake: FakeLLM, log_dir: Path, count: int,
              **env: str) -> list[AppProcess]:
    apps = []
    for n in range(count):
        log_path = log_dir / f"app-{count}-{n}-{uuid.uuid4().hex[:4]}.log"
        app = AppProcess(database_url, fake.url, log_path)
        app.env |= {"QUEUE_MAX": "1000", "HEARTBEAT_INTERVAL_S": "1",
                    "HEARTBEAT_STALE_S": "10", **env}
        apps.append(app)
    return apps


async def throughput(server_url: str, fake: FakeLLM, log_dir: Path, count: int,
                     per_process: int) -> float:
    """Jobs per second: all submitted at once, until the last completes."""
    url = await fresh_database(server_url)
    apps = processes(url, fake, log_dir, count)
    try:
        await asyncio.gather(*(app.start() for app in apps))
        fake.reset()
        fake.delay_s = LLM_DELAY_S
        jobs = count * per_process
        conn = await asyncpg.connect(url)
        started = time.perf_counter()
        async with httpx.AsyncClient(base_url=apps[0].url) as client:
            await submit(client, jobs, run=count)
        while await conn.fetchval(
                "SELECT count(*) FROM story_jobs WHERE status = 'completed'") < jobs:
            await asyncio.sleep(0.02)
        elapsed = time.perf_counter() - started
        await conn.close()
        assert max(fake.calls.values()) == 1
        return jobs / elapsed
    finally:
        for app in apps:
            app.stop()


async def post_to_running(server_url: str, fake: FakeLLM, log_dir: Path, samples: int,
                          *, across_processes: bool) -> list[float]:
    """Seconds from the job's creation to its claim, for an idle worker, per sample."""
    url = await fresh_database(server_url)
    if across_processes:
        web, worker = processes(url, fake, log_dir, 2)
        web.env["WORKER_CONCURRENCY"] = "0"
        apps = [web, worker]
    else:
        apps = processes(url, fake, log_dir, 1)
    try:
        for app in apps:
            await app.start()
        fake.reset()
        fake.delay_s = 0.0
        conn = await asyncpg.connect(url)
        async with httpx.AsyncClient(base_url=apps[0].url) as client:
            for i in range(samples):
                job_id, = await submit(client, 1, run=i)
                while await conn.fetchval(
                        "SELECT status FROM story_jobs WHERE id = $1", job_id) != "completed":
                    await asyncio.sleep(0.005)
                await asyncio.sleep(0.05)  # the worker is idle again, waiting
        rows = await conn.fetch("SELECT extract(epoch FROM started_at - created_at)::float8 AS s"
                                " FROM story_jobs ORDER BY id")
        await conn.close()
        return [row["s"] for row in rows]
    finally:
        for app in apps:
            app.stop()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]


async def main(per_process: int, samples: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        server_url = embedded_postgres_url(Path(tmp) / "pg", stop_at_exit=True)
        log_dir = Path(tmp)
        rates = {n: await throughput(server_url, fake, log_dir, n, per_process)
                 for n in (1, 2, 4)}
        same = await post_to_running(server_url, fake, log_dir, samples, across_processes=False)
        across = await post_to_running(server_url, fake, log_dir, samples, across_processes=True)

    print(f"\nThroughput, fake model taking {LLM_DELAY_S:g} s per story, "
          f"{per_process} stories per process, WORKER_CONCURRENCY=1")
    print(f"{'processes':>9} {'jobs/s':>8} {'vs 1 process':>13} {'ideal':>6}")
    for n, rate in rates.items():
        print(f"{n:>9} {rate:>8.2f} {rate / rates[1]:>12.2f}x {n:>5}x")
    print(f"\nPOST -> running for an idle worker ({samples} jobs each; "
          f"baseline: the {IDLE_RECHECK_S:g} s idle re-check a poller would wait)")
    for name, values in (("same process", same), ("another process (NOTIFY)", across)):
        p50, p99 = statistics.median(values), percentile(values, 0.99)
        print(f"{name:<26} p50 {p50 * 1000:7.1f} ms   p99 {p99 * 1000:7.1f} ms   "
              f"= {p50 / IDLE_RECHECK_S:.3f}x the re-check interval")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-process", type=int, default=6)
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    asyncio.run(main(args.per_process, args.samples))
