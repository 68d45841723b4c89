"""Benchmark: bench/perf.py's cold start and POST -> 202 alone (no wrk, no Chromium), for
judging a start-up or intake change on a busy machine: run it a few times, before and after,
and compare the ratios.

    .venv/bin/python bench/startup.py            # about a minute

Each measure as perf.py takes it, against its baseline from the same run: the cold start
(spawn -> first /healthz 200, median of perf.COLD_STARTS) against bare Starlette's, and
POST /stories/generate -> 202 (p50, by turns) against the DB floor, with the worker idle
(one story held mid-way) and busy (writing stories streamed at 100 chunks a second).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench.perf as perf  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402


async def run(tmp: Path, server_url: str) -> list[tuple[str, str, str, str]]:
    database_url = await perf.fresh_database(server_url)
    rows: list[tuple[str, str, str, str]] = []
    with FakeLLM() as fake:
        env = perf.app_env(database_url, fake.url)
        app = perf.Server("app.main:app", env, tmp / "app.log")
        bare = perf.Server("bench.baselines:bare", env, tmp / "bare.log")
        floor = perf.Server("bench.baselines:floor", env, tmp / "floor.log")
        stack = perf.Server("bench.baselines:stack", env, tmp / "stack.log")
        conn = await asyncpg.connect(database_url)
        try:
            app.start().stop()  # migrate once, outside the timing
            rows += perf.cold_start_rows(app, bare, stack)
            app.start()
            floor.start()
            fake.story = perf.STORY
            fake.hold_after_chunks = perf.HELD_CHUNKS
            fake.hold()
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                running, = await perf.submit(client, 1)
            await perf.wait_for(conn, "SELECT length(text_so_far) > 1000 FROM story_jobs"
                                " WHERE id = $1", running)
            for busy in (False, True):
                if busy:
                    fake.hold_after_chunks = None
                    fake.release()
                    fake.chunk_delay_s = perf.BUSY_CHUNK_S
                    async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                        await perf.submit(client, perf.BUSY_JOBS)
                app_p50, floor_p50 = await perf.post_p50s(app.url, floor.url, conn)
                rows.append((f"POST /stories/generate -> 202, p50, worker "
                             f"{'busy' if busy else 'idle'}", f"{app_p50 * 1000:.2f} ms",
                             f"DB floor {floor_p50 * 1000:.2f} ms",
                             f"{app_p50 / floor_p50:.2f}x (<= 1.5x)"))
        finally:
            await conn.close()
            for server in (app, bare, floor, stack):
                server.stop()
    return rows


async def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    perf.compile_ahead()
    with tempfile.TemporaryDirectory() as tmp:
        server_url = perf.embedded_postgres_url(Path(tmp) / "pg", stop_at_exit=True)
        perf.print_table(await run(Path(tmp), server_url))


if __name__ == "__main__":
    asyncio.run(main())
