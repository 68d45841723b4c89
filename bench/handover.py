"""Benchmark: a restart in the middle of a story, and a stop, with background generation.

    .venv/bin/python bench/handover.py [--runs 7] [--stops 20]    # make bench-handover, ~1 min

The real app runs as uvicorn subprocesses (the Procfile's flags, on loopback) against an
embedded PostgreSQL (or BENCH_DATABASE_URL's server) and the tests' fake OpenAI server,
which writes a long story two words a chunk, CHUNK_DELAY_S apart. Each process has the
app's own heartbeat and save intervals (the test helpers' short ones are taken out), and
SHUTDOWN_GRACE_S=240, so a SIGTERM that waited for the story would show.

- SIGTERM -> exit with a story streaming (LLM_API=responses): the process hands the story
  over instead of waiting for it. Baseline: SIGTERM -> exit of the same app, idle (the
  adopter of the previous measure, once its story was stopped), in the same runs;
- new process ready (/healthz 200) -> the adopted story's words growing again: the job's
  text_so_far in the database longer than what the old process handed over, against the
  interval at which a worker saves the words it has (the soonest the database can show);
- stop -> terminal: POST /stories/jobs/{id}/cancel on a story streaming, until
  GET /stories/jobs/{id} says failed / "cancelled", with LLM_API=responses and =chat.

And the money: one billed create per job across every run (never a second one after a
hand-over), and a cancel at the provider for every responses-mode story stopped.
Each process's log is kept in test-artifacts/bench-handover/.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.embedded import embedded_postgres_url  # noqa: E402
from app.queue.writing import TEXT_SAVE_INTERVAL_S  # noqa: E402
from bench.perf import UVICORN_FLAGS, print_table, submit, wait_for  # noqa: E402
from bench.scale_out import fresh_database  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402
from tests.helpers.processes import AppProcess  # noqa: E402

RUNS = 7
STOPS = 20
CHUNK_DELAY_S = 0.05  # two words a chunk: ~40 words/s, a slow model
STORY = "The Long Walk Home\n\n" + "\n\n".join(
    " ".join(f"step{p}x{w}" for w in range(100)) + "." for p in range(40))  # ~100 s of words
STREAMING_S = 0.3  # a stop is asked this long after the first words reached the fake
EXIT_TIMEOUT_S = 30.0
GROWTH_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
TARGET_EXIT_S = 3.0
TARGET_RESUME_S = 3.0
TARGET_STOP_S = 2.0
LOGS = ROOT / "test-artifacts" / "bench-handover"
# The test helpers' fast heartbeats and short timeouts: the bench runs the app's defaults.
TEST_ONLY_ENV = ("HEARTBEAT_INTERVAL_S", "HEARTBEAT_STALE_S", "SWEEPER_INTERVAL_S",
                 "LLM_TIMEOUT_S")
ACCEPT_JSON = {"Accept": "application/json"}


class Bench:
    def __init__(self, database_url: str, fake: FakeLLM, conn: asyncpg.Connection) -> None:
        self.database_url, self.fake, self.conn = database_url, fake, conn
        self.started = 0
        self.responses_jobs: list[int] = []  # every job written with LLM_API=responses
        self.chat_jobs: list[int] = []
        self.stopped_responses: list[int] = []  # responses-mode jobs stopped by a cancel
        self.stop_codes: dict[str, list[int]] = {"adopted": [], "responses": [], "chat": []}
        self.problems: list[str] = []

    def process(self, name: str, llm_api: str) -> AppProcess:
        self.started += 1
        app = AppProcess(self.database_url, self.fake.url,
                         LOGS / f"{self.started:02d}-{name}.log",
                         command=[sys.executable, "-m", "uvicorn", "app.main:app",
                                  *UVICORN_FLAGS, "--port", "{port}"])
        for name_ in TEST_ONLY_ENV:
            app.env.pop(name_, None)
        app.env = {k: v for k, v in app.env.items() if not k.startswith("HOUSEHOLD")}
        app.env |= {"LLM_API": llm_api, "SHUTDOWN_GRACE_S": "240"}
        return app

    async def sigterm_to_exit(self, app: AppProcess) -> float:
        assert app.process is not None
        started = time.perf_counter()
        app.process.terminate()
        try:
            code = await asyncio.to_thread(app.process.wait, EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.problems.append(f"{app.log_path.name}: still running {EXIT_TIMEOUT_S:g} s "
                                 "after SIGTERM (killed)")
            app.kill9()
            return float("inf")
        elapsed = time.perf_counter() - started
        if code != 0:
            self.problems.append(f"{app.log_path.name}: exit code {code} after SIGTERM")
        return elapsed

    async def text_length(self, job_id: int) -> int:
        return await self.conn.fetchval(
            "SELECT coalesce(length(text_so_far), 0) FROM story_jobs WHERE id = $1", job_id)

    async def first_growth(self, job_id: int, beyond: int) -> float:
        """The moment (perf_counter) the job's saved text is first longer than `beyond`."""
        deadline = time.perf_counter() + GROWTH_TIMEOUT_S
        while time.perf_counter() < deadline:
            if await self.text_length(job_id) > beyond:
                return time.perf_counter()
            await asyncio.sleep(0.01)
        return float("inf")

    async def streaming(self, job_id: int, llm_api: str) -> None:
        """Until the job's words are being written: the fake has some of them."""
        def written() -> bool:
            if llm_api == "chat":
                return self.fake.calls_for(job_id) > 0
            ids = self.fake.response_ids_for(job_id)
            if not ids:
                return False
            output = self.fake.response(ids[0])["output"]
            return bool(output and output[0]["content"] and output[0]["content"][0]["text"])

        deadline = time.monotonic() + 30
        while not written():
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} never started streaming")
            await asyncio.sleep(0.01)
        await asyncio.sleep(STREAMING_S)

    async def stop(self, client: httpx.AsyncClient, job_id: int, kind: str) -> float:
        """POST cancel -> the GET that says failed / cancelled, in seconds. `kind`: chat,
        responses, or adopted (responses, a story taken over from a stopped process)."""
        started = time.perf_counter()
        answer = await client.post(f"/stories/jobs/{job_id}/cancel", json={})
        self.stop_codes[kind].append(answer.status_code)
        if answer.status_code not in (200, 202):
            self.problems.append(f"job {job_id}: cancel answered {answer.status_code} "
                                 f"{answer.text[:200]}")
            return float("inf")
        while time.perf_counter() - started < STOP_TIMEOUT_S:
            job = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
            if job["status"] == "failed" and job["error"] == "cancelled":
                elapsed = time.perf_counter() - started
                if kind != "chat":
                    self.stopped_responses.append(job_id)
                return elapsed
            if job["status"] in ("completed", "failed"):
                self.problems.append(f"job {job_id}: ended {job['status']} "
                                     f"({job['error']}), not cancelled")
                return float("inf")
            await asyncio.sleep(0.01)
        self.problems.append(f"job {job_id}: still {job['status']} {STOP_TIMEOUT_S:g} s "
                             "after the cancel")
        return float("inf")

    # -- the measures ----------------------------------------------------------------------

    async def handovers(self, runs: int) -> tuple[list[float], ...]:
        """Per run: a story streams in process A; SIGTERM A; B starts and adopts it; the
        story is stopped through B; SIGTERM B, idle. Seconds: (exit streaming, ready ->
        growing, exit idle, stop -> cancelled of the adopted story)."""
        exit_busy, resume, exit_idle, stop_adopted = [], [], [], []
        for run in range(runs):
            first = self.process(f"run{run}-streaming", "responses")
            await first.start()
            async with httpx.AsyncClient(base_url=first.url, timeout=30) as client:
                job_id, = await submit(client, 1)
            self.responses_jobs.append(job_id)
            conn = self.conn
            await wait_for(conn, "SELECT length(text_so_far) > 0"
                           " AND response_id IS NOT NULL FROM story_jobs WHERE id = $1", job_id)
            exit_busy.append(await self.sigterm_to_exit(first))

            row = await conn.fetchrow("SELECT status, claimed_by, coalesce(length(text_so_far),"
                                      " 0) AS n FROM story_jobs WHERE id = $1", job_id)
            if row["status"] != "running" or row["claimed_by"] is not None:
                self.problems.append(f"job {job_id}: not handed over at SIGTERM "
                                     f"(status {row['status']}, claimed_by {row['claimed_by']})")
            adopter = self.process(f"run{run}-adopter", "responses")
            growth = asyncio.create_task(self.first_growth(job_id, row["n"]))
            await adopter.start()
            ready = time.perf_counter()
            resume.append(max(await growth - ready, 0.0))
            if not re.search(rf"event=job_adopted job_id={job_id}\b",
                             adopter.log_path.read_text(errors="replace")):
                self.problems.append(f"job {job_id}: no job_adopted in {adopter.log_path.name}")

            async with httpx.AsyncClient(base_url=adopter.url, timeout=30) as client:
                stop_adopted.append(await self.stop(client, job_id, "adopted"))
            await asyncio.sleep(0.2)  # the adopter idle again
            exit_idle.append(await self.sigterm_to_exit(adopter))
        return exit_busy, resume, exit_idle, stop_adopted

    async def stops(self, count: int, llm_api: str) -> list[float]:
        app = self.process(f"stops-{llm_api}", llm_api)
        await app.start()
        times = []
        try:
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                for _ in range(count):
                    job_id, = await submit(client, 1)
                    (self.chat_jobs if llm_api == "chat" else self.responses_jobs).append(job_id)
                    await self.streaming(job_id, llm_api)
                    times.append(await self.stop(client, job_id, llm_api))
                    if llm_api == "chat":
                        try:
                            await asyncio.to_thread(self.fake.wait_for_chat_closed, job_id, 5)
                        except TimeoutError:
                            self.problems.append(f"job {job_id}: chat stream not closed")
        finally:
            app.stop()
        return times

    # -- the checks ------------------------------------------------------------------------

    def billed(self) -> tuple[str, bool]:
        creates = [self.fake.creates_for(j) for j in self.responses_jobs]
        calls = [self.fake.calls_for(j) for j in self.responses_jobs + self.chat_jobs]
        chat = [self.fake.calls_for(j) - self.fake.creates_for(j) for j in self.chat_jobs]
        ok = (set(creates) == {1} and set(calls) == {1} and set(chat) == {1})
        return (f"creates {min(creates)}..{max(creates)} ({len(creates)} jobs), "
                f"chat calls {min(chat)}..{max(chat)} ({len(chat)} jobs)"), ok

    def cancelled_at_provider(self) -> tuple[str, bool]:
        seen = [j for j in self.stopped_responses if self.fake.cancels_for(j) >= 1
                and all(self.fake.response(r)["status"] == "cancelled"
                        for r in self.fake.response_ids_for(j))]
        return (f"{len(seen)}/{len(self.stopped_responses)} stopped jobs"
                f" (of {len(self.responses_jobs)} asked)",
                len(seen) == len(self.stopped_responses) == len(self.responses_jobs))


def seconds(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.2f} s / max {max(values):.2f} s"


def met(ok: bool) -> str:
    return "yes" if ok else "NO"


def log_summary() -> list[str]:
    """What the processes logged: the hand-over events, and every warning or error."""
    counts: dict[str, int] = {}
    unusual: dict[str, int] = {}
    for path in sorted(LOGS.glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            for event in ("job_handed_over", "job_adopted", "shutdown_waiting", "job_failed"):
                if f"event={event} " in line or line.endswith(f"event={event}"):
                    counts[event] = counts.get(event, 0) + 1
            if line.startswith(("WARNING", "ERROR", "CRITICAL", "Traceback")):
                key = " ".join(part for part in line.split()[:2])
                unusual[key] = unusual.get(key, 0) + 1
    lines = ["log events: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    lines += [f"  {n} x {key}" for key, n in sorted(unusual.items())]
    return lines


async def run(server_url: str, runs: int, stops: int) -> list[tuple[str, ...]]:
    database_url = await fresh_database(server_url)
    with FakeLLM() as fake:
        fake.story, fake.chunk_delay_s = STORY, CHUNK_DELAY_S
        conn = await asyncpg.connect(database_url)
        bench = Bench(database_url, fake, conn)
        try:
            exit_busy, resume, exit_idle, stop_adopted = await bench.handovers(runs)
            stop_responses = await bench.stops(stops, "responses")
            stop_chat = await bench.stops(stops, "chat")
        finally:
            await conn.close()
        billed, billed_ok = bench.billed()
        cancels, cancels_ok = bench.cancelled_at_provider()
        problems = bench.problems
        codes = bench.stop_codes

    busy_p50, idle_p50 = statistics.median(exit_busy), statistics.median(exit_idle)
    rows: list[tuple[str, ...]] = [
        ("SIGTERM -> exit, story streaming", seconds(exit_busy),
         f"idle: {seconds(exit_idle)} ({busy_p50 / idle_p50:.2f}x p50)",
         f"max <= {TARGET_EXIT_S:g} s (grace 240 s)", met(max(exit_busy) <= TARGET_EXIT_S)),
        ("ready (/healthz 200) -> words growing", seconds(resume),
         f"words saved every {TEXT_SAVE_INTERVAL_S:g} s",
         f"max <= {TARGET_RESUME_S:g} s", met(max(resume) <= TARGET_RESUME_S)),
    ]
    for kind, values in (("responses", stop_responses), ("chat", stop_chat),
                         ("adopted (responses)", stop_adopted)):
        codes_ = codes[kind.split()[0]]
        answered = ", ".join(f"{codes_.count(c)} x {c}" for c in sorted(set(codes_)))
        rows.append((f"stop -> failed/cancelled, {kind}", seconds(values),
                     f"cancel answered {answered}", f"p50 <= {TARGET_STOP_S:g} s",
                     met(statistics.median(values) <= TARGET_STOP_S)))
    rows.append(("billed calls per job", billed, "", "== 1 each", met(billed_ok)))
    rows.append(("cancel seen at the provider", cancels, "", "every stopped job",
                 met(cancels_ok)))
    rows.append(("problems seen", str(len(problems)), "", "0", met(not problems)))
    for problem in problems:
        print("problem:", problem)
    return rows


async def main(runs: int, stops: int) -> None:
    started = time.monotonic()
    shutil.rmtree(LOGS, ignore_errors=True)
    LOGS.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        server_url = os.environ.get("BENCH_DATABASE_URL") or embedded_postgres_url(
            Path(tmp) / "pg", stop_at_exit=True)
        rows = await run(server_url, runs, stops)
    print(f"Hand-over and stop, LLM_API=responses (and chat) against the fake model writing "
          f"~{1 / CHUNK_DELAY_S * 2:.0f} words/s; {runs} hand-overs, {stops} stops per API")
    print_table(rows, ("measure", "value", "baseline (same run)", "target", "met?"))
    print("\n".join(log_summary()))
    print(f"\n({time.monotonic() - started:.0f} s; {os.cpu_count()} cores; "
          f"logs in {LOGS.relative_to(ROOT)}/)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--stops", type=int, default=STOPS)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.stops))
