"""Where a request's time goes inside the app, without a server: cProfile of the ASGI app
called directly, N times in a row, for a poll (JSON), a finished job's card and a POST.

    .venv/bin/python bench/cprofile_app.py [poll|card|post ...] [--n 3000]

It builds the app as uvicorn would (create_app, the lifespan run in process) on an embedded
PostgreSQL (or BENCH_DATABASE_URL's server) with the demo storyteller, makes one finished
job, then calls the app with hand-made ASGI messages: no sockets, no HTTP parsing, so what
is left is the app's own code and the database round trips. Prints the heaviest functions
(own time and cumulative), and the mean time per request with the profiler off, beside
the floors' (bench/baselines.py's, called the same way on the same rows): the difference is
the app's own cost.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# In place of this script's folder: bench/profile.py would shadow the profile module
# that cProfile imports.
sys.path[0] = str(ROOT)

import argparse  # noqa: E402
import asyncio  # noqa: E402
import cProfile  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable  # noqa: E402

from app.embedded import embedded_postgres_url  # noqa: E402
from bench.scale_out import fresh_database  # noqa: E402

TOP = 25


def scope_for(method: str, path: str, headers: dict[str, str]) -> dict:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
        "query_string": b"", "root_path": "", "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in
                    {"host": "127.0.0.1:8000", **headers}.items()],
    }


async def call(app: object, method: str, path: str, headers: dict[str, str],
               body: bytes = b"") -> tuple[int, bytes]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope_for(method, path, headers), receive, send)  # type: ignore[operator]
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kinds", nargs="*", default=["poll", "card", "post"])
    parser.add_argument("--n", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = os.environ.get("BENCH_DATABASE_URL") or embedded_postgres_url(
            Path(tmp) / "pg", stop_at_exit=True)
        os.environ |= {"DATABASE_URL": await fresh_database(server), "STORYTELLER": "demo",
                       "DEMO_DELAY_S": "0", "QUEUE_MAX": "10000",
                       "DAILY_STORY_LIMIT": "100000"}
        os.environ.pop("HOUSEHOLD_PASSWORD", None)
        from app.main import create_app

        app = create_app()
        async with app.router.lifespan_context(app):
            status, body = await call(app, "POST", "/stories/generate",
                                      {"content-type": "application/json",
                                       "idempotency-key": "cprofile"},
                                      b'{"prompt": "a lantern fox", "length": "short"}')
            job_id = json.loads(body)["job_id"]
            store = app.state.services.store
            while (job := await store.get(job_id)) is None or not job.status.finished:
                await asyncio.sleep(0.05)
            app.state.services.worker.stop_taking_jobs()  # the POSTs' jobs stay waiting
            from bench.baselines import floor

            async with floor.router.lifespan_context(floor):
                for kind in args.kinds:
                    floor_us, floor_cpu = await timed(floor, request_for(kind, job_id), args.n)
                    print(f"\n=== {kind}: floor {floor_us:.0f} us a request"
                          f" ({floor_cpu:.0f} us of CPU)")
                    await profile(app, kind, job_id, args.n)


Request = Callable[[], tuple[str, str, dict[str, str], bytes]]


def request_for(kind: str, job_id: int) -> Request:
    if kind == "post":
        def post() -> tuple[str, str, dict[str, str], bytes]:
            return ("POST", "/stories/generate",
                    {"content-type": "application/json", "idempotency-key": uuid.uuid4().hex},
                    b'{"prompt": "a lantern fox", "length": "short"}')
        return post
    headers = ({"accept": "application/json"} if kind == "poll" else
               {"hx-request": "true", "accept": "*/*", "accept-encoding": "gzip, br"})
    return lambda: ("GET", f"/stories/jobs/{job_id}", headers, b"")


async def timed(app: object, request: Request, n: int) -> tuple[float, float]:
    """Mean microseconds a request, after a warm-up: wall clock, and this process's CPU
    (the app's own work, whatever else the machine is doing; the database's is not in it)."""
    await forget_waiting(app)
    for _ in range(200):
        await call(app, *request())
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        status, _ = await call(app, *request())
        assert status in (200, 202), status
    return ((time.perf_counter() - started) / n * 1e6, (time.process_time() - cpu) / n * 1e6)


async def forget_waiting(app: object) -> None:
    """The POSTs' jobs gone, so each intake counts an evening's queue, not the bench's."""
    services = getattr(app.state, "services", None)  # type: ignore[attr-defined]
    if services is not None:
        await services.db.execute("DELETE FROM story_jobs WHERE status = 'pending'")


async def profile(app: object, kind: str, job_id: int, n: int) -> None:
    request = request_for(kind, job_id)
    mean_us, cpu_us = await timed(app, request, n)
    await forget_waiting(app)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(n):
        await call(app, *request())
    profiler.disable()
    print(f"\n=== {kind}: {mean_us:.0f} us a request ({cpu_us:.0f} us of CPU; profiler off),"
          f" {n} requests")
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(TOP)
    # The app's own functions (and the middleware around them), by cumulative time.
    stats.sort_stats("cumulative").print_stats(r"/app/|starlette/(templating|responses)", TOP)
    if os.environ.get("CPROFILE_CALLERS"):  # who calls a function, e.g. _do_execute
        stats.print_callers(os.environ["CPROFILE_CALLERS"])


if __name__ == "__main__":
    asyncio.run(main())
