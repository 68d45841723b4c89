"""Benchmark: where a family feels speed, as ratios against baselines from the same run.

    .venv/bin/python bench/perf.py            # make bench; about a minute and a half

Every server is a separate uvicorn process started with the Procfile's flags, on an
embedded PostgreSQL (or BENCH_DATABASE_URL's server); the story model is the tests' fake
OpenAI-compatible server. Baselines (bench/baselines.py): bare Starlette, and the "DB
floor", bare Starlette + asyncpg doing the one statement an endpoint needs.

- bytes on the wire: the home page with its CSS, scripts and icon, in Debian's Chromium
  (service workers blocked, so this is what HTTP caching does); first visit and repeat;
- cold start: from spawning the process to the first 200 from /healthz;
- polls: requests/s under wrk (16 connections), seven rounds taken by turns with the
  floors', the ratio the median of each round's: a running job's JSON against the DB
  floor's, and a finished job's card (its whole story in place) against the "render floor"
  (the one SELECT and the same template, bench/baselines.py);
- POST /stories/generate -> 202: p50 latency, one request at a time, app and floor by turns,
  with the worker idle, then busy (writing stories streamed at a model's pace meanwhile);
  and with MONTHLY_BUDGET on (a month's ledger to sum), by turns with the app without one;
- memory: RSS growth over 1,000 jobs after a warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.embedded import embedded_postgres_url  # noqa: E402
from bench.scale_out import fresh_database  # noqa: E402
from tests.helpers.fake_llm import FakeLLM, free_port  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
# The Procfile's web line, on loopback: every server in the table runs with these flags.
UVICORN_FLAGS = ["--host", "127.0.0.1", "--timeout-graceful-shutdown", "3"]
WRK_CONNECTIONS = 16
WRK_SECONDS = 2
WRK_ROUNDS = 7
POLL_WARN_BELOW = 0.9
POST_WARMUP = 50
POST_REQUESTS = 400
COLD_STARTS = 5
RSS_WARMUP_JOBS = 200
RSS_JOBS = 1000
# A story long enough that its running card shows a few paragraphs (the fake streams two
# words a chunk and stops after HELD_CHUNKS until released).
STORY = "The Lantern Fox\n\n" + "\n\n".join(
    " ".join(f"word{p}x{w}" for w in range(60)) + "." for p in range(10))
HELD_CHUNKS = 150  # ~300 words written: the card mid-story
# The busy worker: a story streamed two words a chunk every BUSY_CHUNK_S (faster than a
# real model, about 20 ms a token), BUSY_JOBS of them queued so it writes all the while.
BUSY_CHUNK_S = 0.01
BUSY_JOBS = 12


@dataclass
class Server:
    """One uvicorn process serving `target` (module:app) on a free port."""

    target: str
    env: dict[str, str]
    log_path: Path

    def __post_init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def spawn(self) -> float:
        """Start it; returns the perf_counter moment it was spawned."""
        with self.log_path.open("ab") as log:
            started = time.perf_counter()
            self.process = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", self.target, "--port", str(self.port),
                 *UVICORN_FLAGS], cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        return started

    def wait_healthy(self, timeout_s: float = 60) -> float:
        """Blocks until /healthz answers 200; returns that moment (perf_counter)."""
        deadline = time.perf_counter() + timeout_s
        request = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode()
        while time.perf_counter() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.target} exited; see {self.log_path}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                    sock.sendall(request)
                    if sock.recv(64).startswith(b"HTTP/1.1 200"):
                        return time.perf_counter()
            except OSError:
                time.sleep(0.002)
        raise RuntimeError(f"{self.target} did not become healthy; see {self.log_path}")

    def start(self) -> Server:
        self.spawn()
        self.wait_healthy()
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def rss_kb(self) -> int:
        assert self.process is not None
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]


# -- measures ---------------------------------------------------------------------------


def cold_start_s(server: Server) -> float:
    """Median over COLD_STARTS runs of spawn -> first /healthz 200."""
    times = []
    for _ in range(COLD_STARTS):
        spawned = server.spawn()
        times.append(server.wait_healthy() - spawned)
        server.stop()
    return statistics.median(times)


def compile_ahead() -> None:
    """The app's bytecode written ahead, as the libraries' was when pip installed them: a
    shell with PYTHONDONTWRITEBYTECODE set would otherwise compile all of app/ at every
    cold start, and the baselines (libraries only) would not."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "app", "bench", "tests"],
                   cwd=ROOT, check=True)


def cold_start_rows(app: Server, bare: Server, stack: Server) -> list[tuple[str, ...]]:
    """The app's cold start against the stack floor (the target), and bare Starlette's."""
    bare_s, stack_s, app_s = cold_start_s(bare), cold_start_s(stack), cold_start_s(app)
    return [("cold start -> first /healthz 200", f"{app_s:.2f} s",
             f"stack floor {stack_s:.2f} s", f"{app_s / stack_s:.2f}x (<= 1.25x)"),
            ("  (bare Starlette, no database)", "", f"{bare_s:.2f} s",
             f"{app_s / bare_s:.2f}x")]


def wrk(url: str, *, headers: dict[str, str] | None = None,
        seconds: int = WRK_SECONDS) -> dict[str, float]:
    """wrk's requests/s and latency percentiles (seconds); fails on any non-2xx answer."""
    command = ["wrk", "-t1", f"-c{WRK_CONNECTIONS}", f"-d{seconds}s", "--latency"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    command.append(url)
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk saw errors against {url}:\n{out}")
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}  # type: ignore[union-attr]
    for percent, value, unit in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M):
        result[f"p{percent}"] = float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
    return result


async def page_bytes(url: str, *, scroll: bool = False) -> tuple[int, int, list[str]]:
    """(first visit, repeat visit) bytes received for a page and everything it loads, as
    Chromium counts them (headers included); and what each visit fetched. `scroll`: to the
    page's end first, so that every lazy image loads."""
    origin = url.rstrip("/")
    from playwright.async_api import async_playwright

    from tests.helpers.browser import CHROMIUM_ARGS, byte_counters

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                   args=CHROMIUM_ARGS)
        context = await browser.new_context(service_workers="block")
        page = await context.new_page()
        cdp = await context.new_cdp_session(page)
        urls, received = byte_counters(cdp)
        await cdp.send("Network.enable")
        totals, fetched = [], []
        for _ in range(2):
            received.clear()
            urls.clear()
            await page.goto(url, wait_until="networkidle")
            if scroll:
                for _ in range(40):
                    await page.mouse.wheel(0, 800)
                    await page.wait_for_timeout(50)
                await page.wait_for_load_state("networkidle")
            await page.wait_for_timeout(300)
            totals.append(sum(received.values()))
            fetched.append(", ".join(f"{urls.get(rid, '?').removeprefix(origin)} {size}"
                                     for rid, size in received.items() if size))
        await browser.close()
    return totals[0], totals[1], fetched


class KeepAlive:
    """A bare HTTP/1.1 client on one kept-alive connection: next to no time of its own, so
    a latency is the server's (httpx would add a few hundred microseconds to each)."""

    def __init__(self, url: str) -> None:
        self.host, port = url.removeprefix("http://").split(":")
        self.port = int(port)

    async def __aenter__(self) -> KeepAlive:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.writer.close()

    async def post_json(self, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.writer.write((f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\n"
                           f"Content-Type: application/json\r\n{head}"
                           f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        status_and_headers = await self.reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: (\d+)", status_and_headers).group(1))  # type: ignore[union-attr]
        if not status_and_headers.startswith(b"HTTP/1.1 202"):
            raise RuntimeError(status_and_headers.decode())
        return await self.reader.readexactly(length)


async def post_p50s(app_url: str, floor_url: str, conn: asyncpg.Connection, *,
                    floor_table: str = "floor_jobs") -> tuple[float, float]:
    """p50 of POST /stories/generate -> 202 (app, floor), one request at a time, taking
    turns (the "floor" may be another app: `floor_table` is where its jobs go). Each job
    made is deleted before the next request, so every intake counts the pending jobs and the
    day's jobs of a household's evening, not of thousands of bench requests (the app's
    counts stop at QUEUE_MAX and DAILY_STORY_LIMIT in any case)."""
    body = b'{"prompt": "a lantern fox who lights the way home", "length": "short"}'
    times: dict[str, list[float]] = {"app": [], "floor": []}
    async with KeepAlive(app_url) as app, KeepAlive(floor_url) as floor:
        for n in range(POST_WARMUP + POST_REQUESTS):
            for name, client, table in (("app", app, "story_jobs"), ("floor", floor, floor_table)):
                started = time.perf_counter()
                answer = await client.post_json("/stories/generate", body,
                                                {"Idempotency-Key": uuid.uuid4().hex})
                elapsed = time.perf_counter() - started
                if n >= POST_WARMUP:
                    times[name].append(elapsed)
                job_id = int(re.search(rb'"job_id":\s*(\d+)', answer).group(1))  # type: ignore[union-attr]
                await conn.execute(f"DELETE FROM {table} WHERE id = $1", job_id)
    return statistics.median(times["app"]), statistics.median(times["floor"])


async def wait_for(conn: asyncpg.Connection, query: str, *args: object,
                   timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not await conn.fetchval(query, *args):
        if time.monotonic() > deadline:
            raise TimeoutError(query)
        await asyncio.sleep(0.05)


async def submit(client: httpx.AsyncClient, count: int) -> list[int]:
    ids = []
    for _ in range(count):
        response = await client.post("/stories/generate", json={"prompt": "a sleepy comet"},
                                     headers={"Idempotency-Key": uuid.uuid4().hex})
        response.raise_for_status()
        ids.append(response.json()["job_id"])
    return ids


# A budget no bench reaches, and the fake model priced, as a family's would be.
BUDGET_ENV = {"MONTHLY_BUDGET": "1000",
              "PRICES": '{"fake": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}'}
LEDGER_ROWS = 900  # a month of 30 stories a day: what the budget's sum reads


async def seed_ledger(conn: asyncpg.Connection) -> None:
    await conn.execute(
        "INSERT INTO spend (kind, model, output_tokens, cost_micros, created_at)"
        " SELECT 'story', 'fake', 1200, 720, date_trunc('month', now()) + n * interval '1 min'"
        " FROM generate_series(1, $1) AS n", LEDGER_ROWS)


# -- the run ----------------------------------------------------------------------------


def app_env(database_url: str, llm_url: str, **extra: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "HOUSEHOLD"))},
        "DATABASE_URL": database_url,
        "STORYTELLER": "openai",
        "OPENAI_API_KEY": "bench",
        "OPENAI_BASE_URL": llm_url,
        "QUEUE_MAX": "10000",
        "DAILY_STORY_LIMIT": "100000",
        **extra,
    }


async def run(tmp: Path, server_url: str) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    database_url = await fresh_database(server_url)
    with FakeLLM() as fake:
        env = app_env(database_url, fake.url)
        app = Server("app.main:app", env, tmp / "app.log")
        bare = Server("bench.baselines:bare", env, tmp / "bare.log")
        floor = Server("bench.baselines:floor", env, tmp / "floor.log")
        stack = Server("bench.baselines:stack", env, tmp / "stack.log")
        capped = Server("app.main:app", env | BUDGET_ENV, tmp / "capped.log")
        conn = await asyncpg.connect(database_url)
        try:
            app.start().stop()  # migrate the database once, outside the timing
            rows += cold_start_rows(app, bare, stack)

            app.start()
            floor.start()
            fake.story = STORY
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                # A shelf with a few stories, as the home page shows it most evenings.
                for job_id in await submit(client, 6):
                    await wait_for(conn, "SELECT status = 'completed' FROM story_jobs"
                                   " WHERE id = $1", job_id)
                finished = job_id  # its card: the whole story in place
                first, repeat, fetched = await page_bytes(app.url + "/")
                rows.append(("home page + assets, first visit", f"{first / 1000:.1f} KB",
                             "target 30 KB", f"{first / 30_000:.2f}x of target"))
                rows.append(("home page + assets, repeat visit", f"{repeat / 1000:.1f} KB",
                             "target 5 KB", f"{repeat / 5_000:.2f}x of target"))

                fake.hold_after_chunks = HELD_CHUNKS
                fake.hold()
                running, = await submit(client, 1)
                await wait_for(conn, "SELECT length(text_so_far) > 1000 FROM story_jobs"
                               " WHERE id = $1", running)
            poll = f"/stories/jobs/{running}"
            done = f"/stories/jobs/{finished}"
            as_json = {"Accept": "application/json"}
            # What htmx sends for a card's poll (a browser adds Accept-Encoding).
            as_htmx = {"HX-Request": "true", "Accept": "*/*",
                       "Accept-Encoding": "gzip, deflate, br, zstd"}
            for url, headers in ((app.url + poll, as_json), (floor.url + poll, as_json),
                                 (app.url + done, as_htmx), (floor.url + done, as_htmx)):
                await asyncio.to_thread(wrk, url, headers=headers, seconds=1)  # warm
            # The same card unasked for gzip: what the app adds besides compressing it.
            as_htmx_plain = {k: v for k, v in as_htmx.items() if k != "Accept-Encoding"}
            await same_card(app.url + done, floor.url + done, as_htmx_plain)
            floor_r, json_r, render_r, card_r, plain_r, running_r = await poll_rates(
                [(floor.url + poll, as_json), (app.url + poll, as_json),
                 (floor.url + done, as_htmx), (app.url + done, as_htmx),
                 (app.url + done, as_htmx_plain), (app.url + poll, as_htmx)])
            bare_rps = await bare_rate(bare)
            floor_rps, render_rps = statistics.median(floor_r), statistics.median(render_r)
            rows.append(("poll, JSON (running job), req/s", f"{statistics.median(json_r):,.0f}",
                         f"DB floor {floor_rps:,.0f}", f"{ratio(json_r, floor_r):.2f}x (>= 1.0x)"))
            rows.append(("poll, card of a finished job (htmx), req/s",
                         f"{statistics.median(card_r):,.0f}", f"render floor {render_rps:,.0f}",
                         f"{ratio(card_r, render_r):.2f}x (>= 1.0x)"))
            warn_below_floor("poll, JSON", ratio(json_r, floor_r))
            warn_below_floor("poll, card", ratio(card_r, render_r))
            rows.append(("  (the same card, not gzipped, req/s)",
                         f"{statistics.median(plain_r):,.0f}", f"render floor {render_rps:,.0f}",
                         f"{ratio(plain_r, render_r):.2f}x"))
            rows.append(("  (card of a running job, req/s)", f"{statistics.median(running_r):,.0f}",
                         f"DB floor {floor_rps:,.0f}", f"{ratio(running_r, floor_r):.2f}x"))
            rows.append(("  (bare Starlette /healthz, req/s)", "", f"{bare_rps:,.0f}", ""))

            app_p50, floor_p50 = await post_p50s(app.url, floor.url, conn)
            rows.append(("POST /stories/generate -> 202, p50, worker idle",
                         f"{app_p50 * 1000:.2f} ms", f"DB floor {floor_p50 * 1000:.2f} ms",
                         f"{app_p50 / floor_p50:.2f}x (<= 1.2x)"))

            # The same intake with MONTHLY_BUDGET on (the month's money read under the lock,
            # over a month's ledger), by turns with the app without one.
            await seed_ledger(conn)
            capped.start()
            capped_p50, uncapped_p50 = await post_p50s(capped.url, app.url, conn,
                                                       floor_table="story_jobs")
            capped.stop()
            rows.append(("POST /stories/generate -> 202, p50, budget on",
                         f"{capped_p50 * 1000:.2f} ms", f"no budget {uncapped_p50 * 1000:.2f} ms",
                         f"{capped_p50 / uncapped_p50:.2f}x (<= 1.1x)"))

            fake.hold_after_chunks = None
            fake.release()
            fake.chunk_delay_s = BUSY_CHUNK_S
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                await submit(client, BUSY_JOBS)
            await wait_for(conn, "SELECT count(*) > 0 FROM story_jobs WHERE status = 'running'"
                           " AND length(text_so_far) > 0")
            app_p50, floor_p50 = await post_p50s(app.url, floor.url, conn)
            busy = await conn.fetchval("SELECT count(*) FROM story_jobs WHERE status = 'running'")
            if not busy:
                raise RuntimeError("the worker ran out of stories before the POST measure ended")
            rows.append(("POST /stories/generate -> 202, p50, worker busy",
                         f"{app_p50 * 1000:.2f} ms", f"DB floor {floor_p50 * 1000:.2f} ms",
                         f"{app_p50 / floor_p50:.2f}x (<= 1.5x)"))

            fake.story = None
            fake.chunk_delay_s = 0.0
            rss_start, rss_end = await rss_over_jobs(app, conn)
            growth_mb = (rss_end - rss_start) / 1024
            rows.append((f"RSS growth over {RSS_JOBS:,} jobs", f"{growth_mb:+.2f} MB",
                         f"after {RSS_WARMUP_JOBS} warm-up: {rss_start / 1024:.1f} MB",
                         "(<= 1 MB)"))
        finally:
            await conn.close()
            for server in (app, bare, floor, capped, stack):
                server.stop()
    for visit, requests in zip(("First", "Repeat"), fetched, strict=True):
        print(f"{visit} visit fetched (bytes): {requests or 'nothing'}")
    return rows


async def poll_rates(targets: list[tuple[str, dict[str, str]]]) -> list[list[float]]:
    """Requests/s for each (url, headers) in each of WRK_ROUNDS short runs, taken by turns,
    so a slow moment of a shared machine falls on every target alike."""
    rates: list[list[float]] = [[] for _ in targets]
    for _ in range(WRK_ROUNDS):
        for index, (url, headers) in enumerate(targets):
            rates[index].append((await asyncio.to_thread(wrk, url, headers=headers))["rps"])
    return rates


async def same_card(app_url: str, floor_url: str, headers: dict[str, str]) -> None:
    """The render floor answers the app's card, byte for byte (a form's one-off key aside):
    else its ratio compares two different pages."""
    async with httpx.AsyncClient(timeout=10) as client:
        app_html, floor_html = [
            re.sub(r"[0-9a-f]{32}", "KEY", (await client.get(url, headers=headers)).text)
            for url in (app_url, floor_url)]
    if app_html != floor_html:
        raise SystemExit(f"bench: the render floor's card is not the app's ({len(floor_html)}"
                         f" bytes against {len(app_html)}): bench/baselines.py's card()")


def warn_below_floor(measure: str, app_ratio: float) -> None:
    """One WARNING line when a poll falls below POLL_WARN_BELOW its floor: every open page
    asks every 3 s, so a fall there is felt by the whole household (and CI prints it)."""
    if app_ratio < POLL_WARN_BELOW:
        print(f"bench: WARNING: {measure} at {app_ratio:.2f}x its floor (below "
              f"{POLL_WARN_BELOW}x): profile it (make profile) before anything else",
              file=sys.stderr, flush=True)


def ratio(app_rounds: list[float], floor_rounds: list[float]) -> float:
    """The median of each round's ratio: a round's figures were taken side by side, so the
    machine's load that round weighs on both."""
    return statistics.median(a / b for a, b in zip(app_rounds, floor_rounds, strict=True))


async def bare_rate(bare: Server) -> float:
    bare.start()
    try:
        await asyncio.to_thread(wrk, bare.url + "/healthz", seconds=1)
        return (await asyncio.to_thread(wrk, bare.url + "/healthz"))["rps"]
    finally:
        bare.stop()


async def rss_over_jobs(app: Server, conn: asyncpg.Connection) -> tuple[int, int]:
    """RSS after a warm-up of jobs (and every job left waiting by the POST measure), then
    after RSS_JOBS more, each written by the worker through the fake model."""
    done = "SELECT count(*) = 0 FROM story_jobs WHERE status IN ('pending', 'running')"
    async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
        await submit(client, RSS_WARMUP_JOBS)
        await wait_for(conn, done, timeout_s=300)
        await asyncio.sleep(1)
        start = app.rss_kb()
        await submit(client, RSS_JOBS)
        await wait_for(conn, done, timeout_s=300)
        await asyncio.sleep(1)
        return start, app.rss_kb()


def print_table(rows: list[tuple[str, ...]], headers: tuple[str, ...] = (
        "measure", "app", "baseline (same run)", "ratio (target)")) -> None:
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    for row in [headers, tuple("-" * w for w in widths), *rows]:
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |")


async def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    for tool, path in (("wrk", "/usr/bin/wrk"), ("chromium", str(CHROMIUM))):
        if not Path(path).exists():
            sys.exit(f"bench needs {tool}: apt-get install {tool}")
    started = time.monotonic()
    compile_ahead()
    with tempfile.TemporaryDirectory() as tmp:
        server_url = os.environ.get("BENCH_DATABASE_URL") or embedded_postgres_url(
            Path(tmp) / "pg", stop_at_exit=True)
        rows = await run(Path(tmp), server_url)
    print_table(rows)
    print(f"\n({time.monotonic() - started:.0f} s; {os.cpu_count()} cores; "
          f"polls: median of {WRK_ROUNDS} rounds of wrk -t1 -c{WRK_CONNECTIONS} -d{WRK_SECONDS}s)")


if __name__ == "__main__":
    asyncio.run(main())
