"""Benchmark: a story's picture, from the story stored to the picture ready, and what pages
with pictures weigh on the wire.

    .venv/bin/python bench/pictures.py [--stories 15]     # make bench-pictures; ~2 minutes

The app runs as bench/perf.py runs it (uvicorn with the Procfile's flags, an embedded
PostgreSQL), with ILLUSTRATOR=openai against the tests' fake provider, whose Images API
answers after DRAW_S with a heavy, painted-looking 768 x 512 WebP (about 70 KB: a real low
quality picture weighs less). Figures, each against a baseline or target of the same run:

- picture overhead: (the picture stored - its story stored) - the fake's own drawing time,
  measured directly with the openai client (images.generate, the same answer); one story
  at a time. Target: at most 1.2 s beyond the drawing, p50;
- the story page with its picture, first visit, in Debian's Chromium (service workers
  blocked): target 120 KB; the library of 50 stories with their thumbnails, scrolled to
  the end so every lazy thumbnail loads, most of them drawn from pure noise (the heaviest
  thumbnails there can be): target 600 KB.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
import httpx
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.job_overhead import percentile  # noqa: E402
from bench.perf import (  # noqa: E402
    STORY,
    Server,
    app_env,
    embedded_postgres_url,
    fresh_database,
    page_bytes,
    print_table,
    wait_for,
)
from tests.helpers.fake_images import painted  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402

DRAW_S = 1.0  # the fake's drawing time (a real one takes 10-60 s: the overhead is the same)
DIRECT_CALLS = 10
LIBRARY = 50  # one page of the library


def noise_png() -> bytes:
    """A picture of pure noise: what compresses worst, so the heaviest small version."""
    from PIL import Image

    out = io.BytesIO()
    Image.effect_noise((768, 512), 120).convert("RGB").save(out, "PNG")
    return out.getvalue()


async def direct_draw_s(fake: FakeLLM) -> list[float]:
    """The fake's drawing, asked for directly: the baseline the overhead is taken from."""
    client = openai.AsyncOpenAI(api_key="bench", base_url=fake.url, max_retries=0)
    times = []
    try:
        for i in range(DIRECT_CALLS):
            started = time.perf_counter()
            await client.images.generate(model="fake-image", prompt="a moon", n=1,
                                         size="768x512", quality="low", output_format="webp",
                                         extra_headers={"X-Story-Job-Id": f"direct-{i}"})
            times.append(time.perf_counter() - started)
    finally:
        await client.close()
    return times


async def one_story(client: httpx.AsyncClient, conn: asyncpg.Connection) -> int:
    response = await client.post("/stories/generate", json={"prompt": "a sleepy comet"},
                                 headers={"Idempotency-Key": uuid.uuid4().hex})
    response.raise_for_status()
    job_id = response.json()["job_id"]
    await wait_for(conn, "SELECT status = 'completed' FROM story_jobs WHERE id = $1", job_id)
    story_id: int = await conn.fetchval("SELECT story_id FROM story_jobs WHERE id = $1", job_id)
    return story_id


async def picture_ready(conn: asyncpg.Connection, story_id: int) -> None:
    await wait_for(conn, "SELECT count(*) > 0 FROM story_pictures WHERE story_id = $1", story_id)


async def run(tmp: Path, stories: int) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    server_url = embedded_postgres_url(tmp / "pg", stop_at_exit=True)
    database_url = await fresh_database(server_url)
    with FakeLLM() as fake:
        fake.story = STORY
        fake.images.picture = painted((768, 512), "WEBP")
        fake.images.delay_s = DRAW_S
        app = Server("app.main:app", app_env(database_url, fake.url, ILLUSTRATOR="openai"),
                     tmp / "app.log")
        conn = await asyncpg.connect(database_url)
        try:
            app.start()
            direct = await direct_draw_s(fake)
            overhead = []
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                for _ in range(stories):
                    story_id = await one_story(client, conn)
                    await picture_ready(conn, story_id)
                    stored_to_ready = await conn.fetchval(
                        "SELECT extract(epoch FROM p.created_at - s.created_at)::float8"
                        " FROM story_pictures p JOIN stories s ON s.id = p.story_id"
                        " WHERE s.id = $1", story_id)
                    overhead.append(stored_to_ready - statistics.median(direct))
                draw = statistics.median(direct)
                rows.append(("story stored -> picture ready, beyond the drawing, p50",
                             f"{statistics.median(overhead) * 1000:.0f} ms",
                             f"the fake's drawing {draw * 1000:.0f} ms",
                             f"{statistics.median(overhead) / 1.2:.2f}x of the 1.2 s target"))
                rows.append(("  (the same, p90)", f"{percentile(overhead, 0.9) * 1000:.0f} ms",
                             f"{stories} stories, one at a time", ""))

                first, _, fetched = await page_bytes(f"{app.url}/stories/{story_id}")
                picture_kb = len(fake.images.picture) / 1000
                rows.append(("story page + its picture, first visit", f"{first / 1000:.1f} KB",
                             f"target 120 KB (picture {picture_kb:.0f} KB)",
                             f"{first / 120_000:.2f}x of target"))
                print(f"Story page, first visit fetched (bytes): {fetched[0]}")

                fake.images.delay_s = 0.0
                fake.images.picture = noise_png()  # the heaviest a thumbnail can be
                for _ in range(LIBRARY - stories):
                    story_id = await one_story(client, conn)
                await picture_ready(conn, story_id)
                await wait_for(conn, "SELECT count(*) = $1 FROM story_pictures", LIBRARY)
                first, _, fetched = await page_bytes(f"{app.url}/stories", scroll=True)
                thumbs = fetched[0].count("size=small")
                rows.append((f"library of {LIBRARY} + thumbnails, first visit",
                             f"{first / 1000:.1f} KB",
                             f"target 600 KB ({thumbs} thumbnails, {LIBRARY - stories} of noise)",
                             f"{first / 600_000:.2f}x of target"))
        finally:
            await conn.close()
            app.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=15)
    stories = parser.parse_args().stories
    with tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(run(Path(tmp), stories))
    print_table(rows)


if __name__ == "__main__":
    main()
