"""Benchmark: how much a story adds to the database, with and without its picture, and so
how long a household's database plan lasts.

    .venv/bin/python bench/growth.py [--stories 100]        # about a minute

The app runs as bench/perf.py runs it (uvicorn, an embedded PostgreSQL, a fresh database
each run), writing with the tests' fake provider a story of a "medium" length (480
words, in paragraphs, with a child's name and a prompt as a family writes them), three
ways: no picture (ILLUSTRATOR=off), the app's own drawn picture (demo, an SVG), and the
provider's (ILLUSTRATOR=openai, a painted 768 x 512 WebP of about 70 KB, under the app's
80 KB cap for a page picture). Each run writes N stories one after another, waits for
each story and picture to be stored, runs VACUUM, then reads every table's rows and
pg_total_relation_size (table, indexes and TOAST): the growth per story is the
difference from the empty database, divided by N. Then: ten years of two stories a night.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.perf import (  # noqa: E402
    Server,
    app_env,
    embedded_postgres_url,
    fresh_database,
    print_table,
    wait_for,
)
from tests.helpers.fake_images import painted  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402

STORIES_A_NIGHT = 2
YEARS = 10
STORIES = STORIES_A_NIGHT * 365 * YEARS  # 7,300
MEDIUM_WORDS = 480
STORY = "The Lantern Fox\n\n" + "\n\n".join(
    " ".join(f"softly{p}w{w}" for w in range(MEDIUM_WORDS // 8)) + "." for p in range(8))
WAYS = (("no picture", {"ILLUSTRATOR": "off"}),
        ("the app's drawn picture (SVG)", {"ILLUSTRATOR": "demo"}),
        ("the provider's picture (WebP)", {"ILLUSTRATOR": "openai"}))
SIZES = """SELECT c.relname, pg_total_relation_size(c.oid)::bigint AS bytes
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind = 'r'"""


async def sizes(conn: asyncpg.Connection) -> dict[str, tuple[int, int]]:
    """{table: (rows, bytes)} after a VACUUM, as autovacuum leaves a table in time."""
    await conn.execute("VACUUM")
    found = {}
    for row in await conn.fetch(SIZES):
        rows = await conn.fetchval(f'SELECT count(*) FROM "{row["relname"]}"')
        found[row["relname"]] = (rows, row["bytes"])
    return found


async def write(app_url: str, conn: asyncpg.Connection, count: int, pictures: bool) -> None:
    async with httpx.AsyncClient(base_url=app_url, timeout=30) as client:
        for n in range(count):
            answer = await client.post(
                "/stories/generate", headers={"Idempotency-Key": uuid.uuid4().hex},
                json={"prompt": f"a lantern fox who lights the way home, night {n}",
                      "child_name": "Mia", "age": 5, "length": "medium"})
            answer.raise_for_status()
            job_id = answer.json()["job_id"]
            await wait_for(conn, "SELECT status = 'completed' FROM story_jobs WHERE id = $1",
                           job_id)
            if pictures:
                await wait_for(conn, "SELECT count(*) = 1 FROM story_pictures p JOIN stories s"
                               " ON s.id = p.story_id WHERE s.job_id = $1", job_id)


async def one_way(tmp: Path, server_url: str, fake: FakeLLM, env: dict[str, str],
                  count: int) -> dict[str, tuple[float, float]]:
    """{table: (rows, bytes) per story}."""
    database_url = await fresh_database(server_url)
    app = Server("app.main:app", app_env(database_url, fake.url, **env), tmp / "app.log")
    conn = await asyncpg.connect(database_url)
    try:
        app.start()
        before = await sizes(conn)
        await write(app.url, conn, count, pictures=env["ILLUSTRATOR"] != "off")
        after = await sizes(conn)
    finally:
        app.stop()
        await conn.close()
    return {table: ((rows - before[table][0]) / count, (size - before[table][1]) / count)
            for table, (rows, size) in after.items()}


def megabytes(size: float) -> str:
    return f"{size / 1e6:,.1f} MB" if size < 1e9 else f"{size / 1e9:,.2f} GB"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=100)
    count = parser.parse_args().stories
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory() as folder, FakeLLM() as fake:
        tmp = Path(folder)
        server_url = embedded_postgres_url(tmp / "pg", stop_at_exit=True)
        fake.story = STORY
        fake.images.picture = painted((768, 512), "WEBP")
        print(f"the provider's picture: {len(fake.images.picture) / 1000:.0f} KB; "
              f"{count} stories each way\n")
        for name, env in WAYS:
            growth = await one_way(tmp, server_url, fake, env, count)
            grown = {table: g for table, g in growth.items() if g[0] or g[1] > 0}
            per_rows = sum(rows_ for rows_, _ in grown.values())
            per_bytes = sum(size for _, size in grown.values())
            print(f"{name}: " + ", ".join(
                f"{table} {r:g} rows {s / 1000:.1f} KB" for table, (r, s) in sorted(grown.items())))
            rows.append((name, f"{per_rows:g}", f"{per_bytes / 1000:,.1f} KB",
                         f"{per_rows * STORIES:,.0f}", megabytes(per_bytes * STORIES)))
    print()
    print_table(rows, ("a story with", "rows", "bytes",
                       f"rows in {YEARS} years", f"size in {YEARS} years"))
    print(f"\n({YEARS} years of {STORIES_A_NIGHT} stories a night: {STORIES:,} stories; "
          "sizes after VACUUM, indexes and TOAST included)")


if __name__ == "__main__":
    asyncio.run(main())
