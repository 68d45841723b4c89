"""Benchmark: how long a share link that opens nothing takes to answer, by why it opens
nothing (never made, stopped, expired, its story deleted), against a link that opens, in
the same run: the first four must not tell themselves apart.

    .venv/bin/python bench/shares.py [--rounds 300]

The app runs in process (httpx's ASGI transport: no network noise) on an embedded
PostgreSQL, open to everyone, each look-up from an address of its own (so the per-address
count never waits), taking the kinds by turns.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config import Settings  # noqa: E402
from app.embedded import embedded_postgres_url  # noqa: E402
from app.main import create_app  # noqa: E402
from app.shelf.shares import TOKEN_CHARS  # noqa: E402
from bench.scale_out import fresh_database  # noqa: E402


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = await fresh_database(embedded_postgres_url(Path(tmp) / "pg", stop_at_exit=True))
        settings = Settings(database_url=url, data_dir=Path(tmp), allow_open=True,
                            storyteller="demo", demo_delay_s=0)
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            links = await make_links(app)
            times: dict[str, list[float]] = {kind: [] for kind in links}
            kinds = list(links.items())
            for n in range(rounds):  # each round starts with the next kind: no kind first
                for kind, path in kinds[n % len(kinds):] + kinds[:n % len(kinds)]:
                    address = f"10.{n % 250}.{n // 250}.1"  # its own: never held up
                    transport = httpx.ASGITransport(app=app, client=(address, 1))
                    async with httpx.AsyncClient(transport=transport,
                                                 base_url="http://testserver") as client:
                        started = time.perf_counter()
                        await client.get(path)
                        times[kind].append(time.perf_counter() - started)
    base = statistics.median(times["never made"])
    print(f"{rounds} look-ups of each, by turns (median, and against a link never made):")
    for kind, values in times.items():
        median = statistics.median(values)
        print(f"  {kind:<22} {median * 1000:6.2f} ms  {median / base:5.2f}x")


async def make_links(app) -> dict[str, str]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        async def story() -> int:
            job = (await client.post("/stories/generate", json={"prompt": "a fox"},
                                     headers={"Idempotency-Key": str(time.monotonic_ns())})).json()
            while (state := (await client.get(f"/stories/jobs/{job['job_id']}",
                                              headers={"Accept": "application/json"})).json()
                   )["status"] != "completed":
                await asyncio.sleep(0.05)
            return int(state["story_id"])

        async def share(story_id: int) -> dict:
            return (await client.post(f"/stories/{story_id}/share", json={})).json()

        kept, other = await story(), await story()
        opens, stopped, expired = [await share(kept) for _ in range(3)]
        deleted = await share(other)
        await client.post(f"/stories/{kept}/shares/{stopped['share_id']}/revoke", json={})
        await client.post(f"/stories/{other}/delete", json={})
        db = app.state.services.db
        await db.execute("UPDATE story_shares SET expires_at = now() WHERE id = $1",
                         expired["share_id"])
    return {"never made": "/shared/" + "A" * TOKEN_CHARS, "stopped": stopped["url"],
            "expired": expired["url"], "story deleted": deleted["url"], "opens": opens["url"]}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    asyncio.run(main(parser.parse_args().rounds))
