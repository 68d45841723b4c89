"""Bytes on the wire, resource by resource: home, a story and the library after an evening
of 10 stories, on a first visit and a repeat visit, as Debian's Chromium counts them
(headers included; service workers blocked, so a repeat visit is what HTTP caching does).

    .venv/bin/python bench/bytes.py            # make bench-bytes; about a minute

The app is served as bench/perf.py serves it (uvicorn, the Procfile's flags, an embedded
PostgreSQL, the tests' fake model). Targets: a first visit to home at most 30 KB, a repeat
visit at most 5 KB (tests/browser/test_browser_first_visit.py holds home to both).
BYTES_PAGES=home (or home,story,library) measures only those.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.perf import (  # noqa: E402
    CHROMIUM,
    STORY,
    Server,
    app_env,
    embedded_postgres_url,
    fresh_database,
    submit,
    wait_for,
)
from tests.helpers.fake_llm import FakeLLM  # noqa: E402

EVENING = 10  # stories written before measuring
FIRST_VISIT_TARGET_BYTES = 30_000
REPEAT_VISIT_TARGET_BYTES = 5_000
PAGES = [name for name in os.environ.get("BYTES_PAGES", "").split(",") if name]


async def visits(url: str) -> list[dict[str, int]]:
    """Bytes received per resource (path -> bytes) on a first visit, then a repeat visit
    in the same browser profile."""
    from playwright.async_api import async_playwright

    from tests.helpers.browser import CHROMIUM_ARGS, byte_counters

    origin = url.split("/", 3)[:3]
    prefix = "/".join(origin)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                   args=CHROMIUM_ARGS)
        context = await browser.new_context(service_workers="block",
                                            viewport={"width": 390, "height": 844})
        page = await context.new_page()
        cdp = await context.new_cdp_session(page)
        urls, received = byte_counters(cdp)
        await cdp.send("Network.enable")
        results = []
        for _ in range(2):
            urls.clear()
            received.clear()
            await page.goto(url, wait_until="networkidle")
            await page.wait_for_timeout(500)  # anything loaded once the page is idle
            per_path: dict[str, int] = {}
            for request_id, size in received.items():
                path = urls.get(request_id, "?").removeprefix(prefix).split("?")[0]
                if path.startswith("data:"):
                    continue  # in the page already: no bytes of its own
                per_path[path] = per_path.get(path, 0) + size
            results.append(per_path)
        await browser.close()
    return results


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        database_url = await fresh_database(embedded_postgres_url(Path(tmp) / "pg",
                                                                  stop_at_exit=True))
        app = Server("app.main:app", app_env(database_url, fake.url, ILLUSTRATOR="off"),
                     Path(tmp) / "app.log")
        app.start()
        import asyncpg

        conn = await asyncpg.connect(database_url)
        try:
            fake.story = STORY
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                for job_id in await submit(client, EVENING):
                    await wait_for(conn, "SELECT status = 'completed' FROM story_jobs"
                                   " WHERE id = $1", job_id)
            story_id = await conn.fetchval("SELECT max(id) FROM stories")
            pages = {"home": "/", "story": f"/stories/{story_id}", "library": "/stories"}
            measured = {name: await visits(app.url + path) for name, path in pages.items()
                        if not PAGES or name in PAGES}
        finally:
            await conn.close()
            app.stop()
    for name, (first, repeat) in measured.items():
        print(f"\n{name}: first visit {sum(first.values()):,} bytes, "
              f"repeat visit {sum(repeat.values()):,} bytes")
        print("| resource | first visit | repeat visit |")
        print("| --- | --- | --- |")
        for path in sorted(first.keys() | repeat.keys(), key=lambda p: -first.get(p, 0)):
            print(f"| {path} | {first.get(path, 0):,} | {repeat.get(path, 0):,} |")
    if "home" in measured:
        first, repeat = (sum(visit.values()) for visit in measured["home"])
        print(f"\nhome: first visit {first / FIRST_VISIT_TARGET_BYTES:.2f}x of its "
              f"{FIRST_VISIT_TARGET_BYTES:,}-byte target, repeat visit "
              f"{repeat / REPEAT_VISIT_TARGET_BYTES:.2f}x of {REPEAT_VISIT_TARGET_BYTES:,}")


if __name__ == "__main__":
    asyncio.run(main())
