"""Benchmark: POST -> 202 latency and per-job overhead, with an instant fake LLM.

    .venv/bin/python bench/job_overhead.py [--jobs 200]

Runs the real app over real HTTP (uvicorn in a thread) against an embedded PostgreSQL and
the fake OpenAI-compatible server from the tests, which answers at once. Figures are
reported with a baseline measured in the same run, so they read as ratios:

- POST /stories/generate -> 202, against GET /healthz (same stack, one `SELECT 1`);
- job overhead = (completed_at - created_at) - the fake LLM call's own round trip, against
  that round trip made directly with the openai client.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import openai
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config import Settings  # noqa: E402
from app.db import connect_pool  # noqa: E402
from app.embedded import embedded_postgres_url  # noqa: E402
from app.main import create_app  # noqa: E402
from tests.helpers.fake_llm import FakeLLM, free_port  # noqa: E402
from tests.helpers.sql import fetch_all, fetch_val


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]


def summary(name: str, values_s: list[float], baseline_s: list[float] | None = None) -> str:
    median, p99 = statistics.median(values_s), percentile(values_s, 0.99)
    line = f"{name:<40} median {median * 1000:7.2f} ms   p99 {p99 * 1000:7.2f} ms"
    if baseline_s:
        line += (f"   = {median / statistics.median(baseline_s):5.2f}x / "
                 f"{p99 / percentile(baseline_s, 0.99):5.2f}x baseline")
    return line


async def main(jobs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        url = embedded_postgres_url(Path(tmp) / "pg", stop_at_exit=True)
        settings = Settings(database_url=url, data_dir=Path(tmp), storyteller="openai",
                            openai_api_key="bench", openai_base_url=fake.url,
                            story_model="fake", queue_max=8,
                            daily_story_limit=100_000)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1",
                                               port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            await asyncio.sleep(0.05)

        db = connect_pool(url)
        await db.connect()
        llm = openai.AsyncOpenAI(api_key="bench", base_url=fake.url, max_retries=0)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                for _ in range(20):  # warm up both paths
                    await client.get("/healthz")
                health_s, post_s, direct_llm_s, job_ids = [], [], [], []
                for i in range(jobs):
                    started = time.perf_counter()
                    await client.get("/healthz")
                    health_s.append(time.perf_counter() - started)

                    started = time.perf_counter()
                    await llm.chat.completions.create(
                        model="fake", messages=[{"role": "user", "content": "hi"}],
                        extra_headers={"X-Story-Job-Id": f"direct-{i}"})
                    direct_llm_s.append(time.perf_counter() - started)

                    started = time.perf_counter()
                    response = await client.post(
                        "/stories/generate", json={"prompt": f"bench story {i}"},
                        headers={"Idempotency-Key": uuid.uuid4().hex})
                    post_s.append(time.perf_counter() - started)
                    assert response.status_code == 202, response.text
                    job_ids.append(response.json()["job_id"])
                    while await fetch_val(db,
                        "SELECT status FROM story_jobs WHERE id = :id", {"id": job_ids[-1]}
                    ) not in ("completed", "failed"):
                        await asyncio.sleep(0.002)

            rows = await fetch_all(db,
                "SELECT status, extract(epoch FROM completed_at - created_at)::float8 AS total_s"
                " FROM story_jobs WHERE id = ANY(:ids)", {"ids": job_ids})
            assert all(row["status"] == "completed" for row in rows)
            llm_median = statistics.median(direct_llm_s)
            overhead_s = [row["total_s"] - llm_median for row in rows]
        finally:
            await llm.close()
            await db.close()
            server.should_exit = True
            thread.join(timeout=30)

    print(f"{jobs} jobs, one at a time, instant fake LLM over HTTP")
    print(summary("baseline: GET /healthz", health_s))
    print(summary("POST /stories/generate -> 202", post_s, health_s))
    print(summary("baseline: direct LLM call", direct_llm_s))
    print(summary("job overhead (submit->completed - LLM)", overhead_s, direct_llm_s))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    asyncio.run(main(parser.parse_args().jobs))
