"""The app as a real process (uvicorn in a subprocess), to kill -9, restart and read
the logs of.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from tests.helpers.fake_llm import free_port
from tests.helpers.platform import ROOT
from tests.helpers.waits import HTTP_TIMEOUT_S, until

# How long a start may take before the test fails: a start takes a second or two, but 30 s
# were passed once with four workers on two cores beside other sessions' test runs (a load
# average of 22). Waited only when something is wrong.
START_WITHIN_S = 60


class AppProcess:
    """The real app, as the Procfile runs it, on a free port.

    `command`: another start command (argv, `{port}` filled in), e.g. the Procfile's own
    line or `python -m app worker`; `serves_http=False` waits for the start-up log line
    instead of /healthz.
    """

    def __init__(self, database_url: str, llm_url: str, log_path: Path, *,
                 command: list[str] | None = None, serves_http: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("OPENAI")},
            "DATABASE_URL": database_url,
            "STORYTELLER": "openai",
            "OPENAI_API_KEY": "chaos",
            "OPENAI_BASE_URL": llm_url,
            "HEARTBEAT_INTERVAL_S": "0.2",
            "HEARTBEAT_STALE_S": str(HEARTBEAT_STALE_S),
            "SWEEPER_INTERVAL_S": "30",
            "LLM_TIMEOUT_S": "60",
            "DAILY_STORY_LIMIT": "100000",
            "SHUTDOWN_GRACE_S": "2",
            # A budget no run reaches: every job sets aside, and every call is in the ledger.
            "MONTHLY_BUDGET": "1000",
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        }
        self.command = command or [sys.executable, "-m", "uvicorn", "app.main:app",
                                   "--host", "127.0.0.1", "--port", "{port}"]
        self.serves_http = serves_http
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self, started_lines: int = 1) -> None:
        """Start it and wait until it serves (or has logged `started_lines` starts)."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [part.replace("{port}", str(self.port)) for part in self.command],
                cwd=ROOT, env=self.env | {"PORT": str(self.port)},
                stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_WITHIN_S
        async with httpx.AsyncClient() as client:
            while True:
                if self.serves_http:
                    try:
                        if (await client.get(f"{self.url}/healthz", timeout=2)).status_code \
                                == 200 and self.started_count() >= started_lines:
                            return
                    except httpx.TransportError:
                        pass
                elif self.started_count() >= started_lines:
                    return
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()  # not left running after the test, on a database since dropped
                    raise RuntimeError(f"the app did not start; see {self.log_path}")
                await asyncio.sleep(0.05)

    async def logged(self, text: str) -> None:
        """Until the app's log has `text` (a line's start, "event=shutdown_waiting", say)."""
        await until(lambda: text in self.log_path.read_text(errors="replace"),
                    f"{text!r} in {self.log_path}")

    def started_count(self) -> int:
        return self.log_path.read_text(errors="replace").count("event=started ")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def kill9(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def problems_in_logs_and_check(apps: list[AppProcess]) -> list[str]:
    """After a run: its ERROR lines and tracebacks, and what `python -m app check` (the
    invariants, on the apps' database) finds broken."""
    problems = []
    errors = [line for app in apps
              for line in app.log_path.read_text(errors="replace").splitlines()
              if line.startswith(("ERROR", "CRITICAL", "Traceback"))]
    if errors:
        problems.append(f"{len(errors)} error lines in the logs, the first: {errors[0][:300]}")
    check = subprocess.run([sys.executable, "-m", "app", "check"], cwd=ROOT, env=apps[0].env,
                           capture_output=True, text=True, timeout=60)
    if check.returncode != 0:
        problems.append("invariant check failed:\n" + check.stdout + check.stderr)
    return problems


async def ledger_problems(conn, fake) -> list[str]:
    """Once every job is over: nothing is still set aside, and the ledger holds one row per
    provider call, counted at the fake per job (`fake`: the FakeLLM; a story's chat call or
    background create, a picture's images call, a narration part's audio call): each
    stored story's, drawn picture's and read part's, and each call cut off after it reached
    the provider (a crash, a stop, a timeout, a picture refused), once. A row with no call
    seen is a crash between the call's mark and its request (the job `interrupted`), nothing
    else."""
    problems = []
    set_aside = await conn.fetchval(
        "SELECT set_aside FROM month_spend(date_trunc('month', now()) - interval '1 day')")
    if set_aside:
        problems.append(f"{set_aside} micro-dollars still set aside with every job over")
    rows = await conn.fetch(
        "SELECT j.id, j.kind, j.error_text, count(s.id) AS charged FROM story_jobs j"
        " LEFT JOIN spend s ON s.job_id = j.id AND s.kind = j.kind"
        " WHERE NOT j.imported GROUP BY j.id ORDER BY j.id")
    for row in rows:
        job_id = row["id"]
        calls = (fake.images.calls_for(job_id) if row["kind"] == "picture"
                 else fake.audio.calls_for(job_id) if row["kind"] == "narration"
                 else fake.calls_for(job_id))
        if row["charged"] > 1:
            problems.append(f"{row['kind']} job {job_id} is in the ledger"
                            f" {row['charged']} times")
        elif calls > row["charged"]:
            problems.append(f"{row['kind']} job {job_id} made {calls} provider calls and is"
                            f" in the ledger {row['charged']} times")
        elif row["charged"] > calls and row["error_text"] != "interrupted":
            problems.append(f"{row['kind']} job {job_id} is in the ledger with no call made"
                            f" ({row['error_text']})")
    return problems


async def start_and_submit(apps: list[AppProcess], rng, run: int, most: int) -> list[int]:
    """Start each app, then ask each for 2 to `most` (seeded) stories: the jobs' ids."""
    for app in apps:
        await app.start()
    job_ids: list[int] = []
    for app in apps:
        async with httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) as client:
            job_ids += await submit(client, rng.randint(2, most), run, start=len(job_ids),
                                  app=app)
    return job_ids


async def submit(client: httpx.AsyncClient, n: int, run: int, start: int = 0,
                 app: AppProcess | None = None) -> list[int]:
    """Ask for n stories; a refusal fails with its answer and, given the `app` that
    answered, the WARNING and ERROR lines of its log (why a 503 was a 503)."""
    ids = []
    for i in range(start, start + n):
        response = await client.post(
            "/stories/generate", json={"prompt": f"chaos run {run} story {i}"},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        if response.status_code != 202:
            lines = [] if app is None else [
                line for line in app.log_path.read_text(errors="replace").splitlines()
                if line.startswith(("WARNING", "ERROR"))]
            raise RuntimeError(f"submit refused: {response.status_code} {response.text}"
                               + "".join("\n  " + line for line in lines[-10:]))
        ids.append(response.json()["job_id"])
    return ids


# Past the longest a loaded machine stalls a process's event loop: its first story imports
# the openai library (8 s seen with four workers on two cores, then 10.7 s, when a web
# process's sweeper expired the jobs waiting for a live worker that had not beaten), and
# with a 2 s threshold its own sweeper took its job for a dead process's.
HEARTBEAT_STALE_S = 20
