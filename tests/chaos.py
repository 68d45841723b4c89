"""The crash campaign: `kill -9` the real app at chosen moments of a job's life, restart it
on the same database, and check that nothing was lost and nothing was paid for twice.

    python -m tests.chaos --runs 30 --seed 1      # what `make chaos` runs

Each run starts `uvicorn app.main:app` as one or two subprocesses against its own fresh
database and the fake OpenAI-compatible server, submits a few jobs (through every
process), and kills a process at one moment:

- before_claim        a job is committed but its claim cannot happen (we hold its row)
- during_call         the LLM request is in flight
- after_story_insert  the story is stored, the completion is in flight (held by a row lock)
- while_waiting       jobs wait in the queue behind a running one
- random              at a seeded random time while jobs come and go
- two_during_call     two processes each writing a job; one of them (seeded) is killed
- two_random          two processes; a seeded one is killed at a seeded random time

With one process, the app is restarted; with two, the survivor alone must finish. A run
passes when every job is terminal within 2 minutes, no job was called twice, every
completed job has exactly one story and every story is reachable from its job, the jobs
that never reached the LLM ran, a job killed mid-call ended `interrupted` (or `completed`
when its story was already stored), nothing expired, and `python -m app check` (which
also looks for jobs expired while a worker was alive) finds no broken invariant.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import httpx

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.locks import lock_row, wait_until_blocked, wait_until_waiting
from tests.helpers.processes import AppProcess, submit

ROOT = Path(__file__).resolve().parent.parent
MOMENTS = ("before_claim", "during_call", "after_story_insert", "while_waiting", "random",
           "two_during_call", "two_random")
TERMINAL_WITHIN_S = 120


@dataclass
class RunResult:
    seed: int
    moment: str
    kills: int = 0
    jobs: int = 0
    terminal: int = 0
    max_calls: int = 0
    orphans: int = 0
    lost: int = 0
    expired: int = 0
    restart_to_terminal_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


async def run_once(seed: int, moment: str, database_url: str, fake: FakeLLM,
                   log_dir: Path) -> RunResult:
    rng = random.Random(seed)
    result = RunResult(seed=seed, moment=moment)
    fake.reset()
    fake.hold()
    two = moment.startswith("two_")
    apps = [AppProcess(database_url, fake.url, log_dir / f"chaos-{seed}-{moment}-{n}.log")
            for n in range(2 if two else 1)]
    victim = apps[rng.randrange(len(apps))]
    conn = await asyncpg.connect(database_url)
    held: list[tuple[asyncpg.Connection, object]] = []
    story_at_kill: set[int] = set()
    try:
        for app in apps:
            await app.start()
        job_ids: list[int] = []
        for app in apps:
            async with httpx.AsyncClient(base_url=app.url, timeout=10) as client:
                job_ids += await submit(client, rng.randint(2, 4), seed, start=len(job_ids))
        first, second = job_ids[0], job_ids[1]
        if moment in ("random", "two_random"):
            fake.delay_s = rng.uniform(0.02, 0.3)
            fake.release()
            await asyncio.sleep(rng.uniform(0.0, 1.2))
        elif moment == "two_during_call":
            # Each process is writing one job: the two oldest.
            await asyncio.to_thread(fake.wait_for_call, first)
            await asyncio.to_thread(fake.wait_for_call, second)
            await asyncio.sleep(rng.uniform(0.0, 0.5))
        else:
            await asyncio.to_thread(fake.wait_for_call, first)
            if moment == "before_claim":
                # The next job is committed, but no claim can take it while we hold its
                # row; the first completes and the worker finds nothing it may claim.
                held.append(await lock_row(database_url, second))
                fake.release()
                while await conn.fetchval(
                        "SELECT status FROM story_jobs WHERE id = $1", first) != "completed":
                    await asyncio.sleep(0.01)
            elif moment == "after_story_insert":
                # Hold the row, let the story's insert queue behind us, queue a second
                # holder behind the insert, then let the insert through: the story is
                # committed and the completion waits behind the second holder.
                held.append(await lock_row(database_url, first))
                fake.release()
                await wait_until_blocked(conn, "insert_story")
                second_conn = await asyncpg.connect(database_url)
                second_tx = second_conn.transaction()
                await second_tx.start()
                locking = asyncio.create_task(second_conn.execute(
                    "SELECT id FROM story_jobs WHERE id = $1 FOR NO KEY UPDATE", first))
                await wait_until_waiting(conn, second_conn.get_server_pid())
                first_conn, first_tx = held.pop()
                await first_tx.commit()
                await first_conn.close()
                await locking
                held.append((second_conn, second_tx))
                await wait_until_blocked(conn, "complete_job")
            elif moment == "during_call":
                await asyncio.sleep(rng.uniform(0.0, 0.5))
        victim.kill9()
        result.kills += 1
        # The dead app's statements may still be queued in its server backends; end
        # them so the crash lands before they run, as the moment intends.
        survivors = [a for a in apps if a is not victim]
        if not survivors:
            await conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND NOT (pid = ANY($1::int[]))", [c.get_server_pid() for c, _ in held])
        for held_conn, transaction in held:
            await transaction.rollback()
            await held_conn.close()
        held.clear()
        # The process is dead: the rows are as it left them.
        at_kill = {row["id"]: row["status"] for row in await conn.fetch(
            "SELECT id, status FROM story_jobs")}
        victims_jobs = {row["id"] for row in await conn.fetch(
            "SELECT j.id FROM story_jobs j JOIN workers w ON w.boot_id = j.claimed_by"
            " WHERE j.status = 'running' AND w.pid = $1", victim.pid)}
        story_at_kill = {row["job_id"] for row in await conn.fetch("SELECT job_id FROM stories")}

        fake.delay_s = 0.0
        fake.release()
        restarted = time.monotonic()
        if not survivors:
            await victim.start()
        while True:
            unfinished = await conn.fetchval(
                "SELECT count(*) FROM story_jobs WHERE status IN ('pending', 'running')")
            if unfinished == 0:
                break
            if time.monotonic() - restarted > TERMINAL_WITHIN_S:
                result.problems.append(f"{unfinished} jobs not terminal after the kill")
                break
            await asyncio.sleep(0.05)
        result.restart_to_terminal_s = time.monotonic() - restarted
        for app in apps:
            app.stop()

        rows = await conn.fetch("SELECT id, status, error_text FROM story_jobs ORDER BY id")
        by_id = {row["id"]: row for row in rows}
        result.jobs = len(job_ids)
        result.lost = sum(1 for j in job_ids if j not in by_id)
        result.terminal = sum(1 for row in rows if row["status"] in ("completed", "failed"))
        result.max_calls = max(fake.calls.values(), default=0)
        result.orphans = await conn.fetchval(
            "SELECT count(*) FROM stories s JOIN story_jobs j ON j.id = s.job_id"
            " WHERE j.status <> 'completed' OR j.story_id IS DISTINCT FROM s.id")
        result.expired = sum(1 for row in rows if row["error_text"] == "expired")
        if result.lost:
            result.problems.append(f"{result.lost} jobs lost")
        if result.max_calls > 1:
            result.problems.append(f"a job was called {result.max_calls} times")
        if result.orphans:
            result.problems.append(f"{result.orphans} stories not reachable from their job")
        if result.expired:
            result.problems.append(f"{result.expired} jobs expired while a worker was alive")
        wrong = await conn.fetchval(
            "SELECT count(*) FROM story_jobs j WHERE j.status = 'completed' AND"
            " (SELECT count(*) FROM stories s WHERE s.job_id = j.id) <> 1")
        if wrong:
            result.problems.append(f"{wrong} completed jobs without exactly one story")
        for job_id in job_ids:
            row = by_id.get(job_id)
            if row is None:
                continue
            ended = (row["status"], row["error_text"])
            if at_kill.get(job_id) == "pending" and row["status"] != "completed":
                result.problems.append(f"waiting job {job_id} ended {row['status']}")
            if job_id in victims_jobs:
                expected = ("completed", None) if job_id in story_at_kill else \
                    ("failed", "interrupted")
                if ended != expected:
                    result.problems.append(f"job {job_id} killed mid-run ended {ended}")
            elif at_kill.get(job_id) == "running" and row["status"] != "completed":
                result.problems.append(f"job {job_id} of a live process ended {ended}")
        if moment == "after_story_insert" and by_id[first]["status"] != "completed":
            result.problems.append(f"job {first}, its story stored, did not complete")
        check = subprocess.run(
            [sys.executable, "-m", "app", "check"], cwd=ROOT, env=apps[0].env,
            capture_output=True, text=True, timeout=60)
        if check.returncode != 0:
            result.problems.append("invariant check failed:\n" + check.stdout + check.stderr)
    except Exception as error:  # a harness failure is a failed run, with its reason
        result.problems.append(f"harness error: {error!r}")
    finally:
        for held_conn, transaction in held:
            await transaction.rollback()
            await held_conn.close()
        fake.release()
        for app in apps:
            app.stop()
        await conn.close()
    return result


def format_table(results: list[RunResult]) -> str:
    header = f"{'seed':>5} {'moment':<19} {'kills':>5} {'jobs':>4} {'terminal':>8} " \
             f"{'max calls/job':>13} {'unreachable stories':>19} {'lost jobs':>9} " \
             f"{'expired':>7} {'kill->done s':>12}  result"
    lines = [header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r.seed:>5} {r.moment:<19} {r.kills:>5} {r.jobs:>4} {r.terminal:>8} "
            f"{r.max_calls:>13} {r.orphans:>19} {r.lost:>9} {r.expired:>7} "
            f"{r.restart_to_terminal_s:>12.1f}  "
            + ("ok" if r.passed else "FAIL: " + "; ".join(r.problems)))
    lines.append("-" * len(header))
    lines.append(
        f"{'total':>5} {len(results):<3} runs{'':<11} {sum(r.kills for r in results):>5} "
        f"{sum(r.jobs for r in results):>4} {sum(r.terminal for r in results):>8} "
        f"{max((r.max_calls for r in results), default=0):>13} "
        f"{sum(r.orphans for r in results):>19} {sum(r.lost for r in results):>9} "
        f"{sum(r.expired for r in results):>7}")
    return "\n".join(lines)


def plan(runs: int, seed: int) -> list[tuple[int, str]]:
    """Every moment in turn, so even a short campaign covers them all."""
    return [(seed + i, MOMENTS[i % len(MOMENTS)]) for i in range(runs)]


async def campaign(runs: int, seed: int, server_url: str, log_dir: Path) -> list[RunResult]:
    admin = server_url
    results = []
    with FakeLLM() as fake:
        for run_seed, moment in plan(runs, seed):
            name = f"chaos_{run_seed}_{uuid.uuid4().hex[:6]}"
            conn = await asyncpg.connect(admin)
            await conn.execute(f'CREATE DATABASE "{name}"')
            await conn.close()
            url = with_database(server_url, name)
            result = await run_once(run_seed, moment, url, fake, log_dir)
            results.append(result)
            print(f"run {len(results)}/{runs} seed={run_seed} {moment}: "
                  + ("ok" if result.passed else "FAIL"), flush=True)
            conn = await asyncpg.connect(admin)
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await conn.close()
    return results


def with_database(url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


def main() -> int:
    parser = argparse.ArgumentParser(description="kill -9 the app at chosen moments")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from app.db import embedded_postgres_url

    with tempfile.TemporaryDirectory() as tmp:
        server_url = os.environ.get("TEST_DATABASE_URL") or embedded_postgres_url(
            Path(tmp) / "pg", stop_at_exit=True)
        log_dir = ROOT / "test-artifacts" / "chaos"
        log_dir.mkdir(parents=True, exist_ok=True)
        results = asyncio.run(campaign(args.runs, args.seed, server_url, log_dir))
    print()
    print(format_table(results))
    passed = sum(r.passed for r in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
