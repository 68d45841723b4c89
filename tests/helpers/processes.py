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
from tests.helpers.waits import HTTP_TIMEOUT_S


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
        deadline = time.monotonic() + 30
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
                    raise RuntimeError(f"the app did not start; see {self.log_path}")
                await asyncio.sleep(0.05)

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


async def ledger_problems(conn) -> list[str]:
    """Once every job is over: nothing is still set aside, and the ledger holds each stored
    story's call and each drawn picture's once (migration 025's `spend`); besides those,
    only calls cut off after they were made (a story stopped or past its time, or swept
    with words written: billed), each once."""
    problems = []
    set_aside = await conn.fetchval(
        "SELECT set_aside FROM month_spend(date_trunc('month', now()) - interval '1 day')")
    if set_aside:
        problems.append(f"{set_aside} micro-dollars still set aside with every job over")
    for kind, stored in (("story", "SELECT job_id FROM stories"),
                         ("picture", "SELECT id AS job_id FROM story_jobs WHERE kind = 'picture'"
                                     " AND status = 'completed'")):
        missing = await conn.fetchval(
            f"SELECT count(*) FROM ({stored}) AS paid WHERE NOT EXISTS (SELECT 1 FROM spend"
            f" WHERE spend.job_id = paid.job_id AND spend.kind = '{kind}')")
        extra = await conn.fetchval(
            f"SELECT count(*) FROM spend WHERE kind = '{kind}' AND job_id NOT IN ({stored})"
            " AND job_id NOT IN (SELECT id FROM story_jobs WHERE status = 'failed'"
            "   AND started_at IS NOT NULL AND (text_so_far <> ''"
            "   OR error_text IN ('cancelled', 'the storyteller took too long')))")
        if missing or extra:
            problems.append(f"the ledger misses {missing} and has {extra} extra {kind} calls")
    return problems


async def start_and_submit(apps: list[AppProcess], rng, run: int, most: int) -> list[int]:
    """Start each app, then ask each for 2 to `most` (seeded) stories: the jobs' ids."""
    for app in apps:
        await app.start()
    job_ids: list[int] = []
    for app in apps:
        async with httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) as client:
            job_ids += await submit(client, rng.randint(2, most), run, start=len(job_ids))
    return job_ids


async def submit(client: httpx.AsyncClient, n: int, run: int, start: int = 0) -> list[int]:
    ids = []
    for i in range(start, start + n):
        response = await client.post(
            "/stories/generate", json={"prompt": f"chaos run {run} story {i}"},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        if response.status_code != 202:
            raise RuntimeError(f"submit refused: {response.status_code} {response.text}")
        ids.append(response.json()["job_id"])
    return ids


# Past the longest a loaded machine stalls a process's event loop: its first story imports
# the openai library (8 s seen with four workers on two cores, then 10.7 s, when a web
# process's sweeper expired the jobs waiting for a live worker that had not beaten), and
# with a 2 s threshold its own sweeper took its job for a dead process's.
HEARTBEAT_STALE_S = 20
