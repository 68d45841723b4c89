"""Screenshots of an evening as a parent has it, at the three sizes (a tablet upright
820 x 1180, on its side 1180 x 820, a phone 390 x 844), into test-artifacts/evening/:

    .venv/bin/python tools/evening_screenshots.py      # about two minutes

The app runs as bench/perf.py runs it (uvicorn, an embedded PostgreSQL, the tests' fake
model, pictures drawn by the fake's Images API), with a monthly budget. Eight stories are
written first; then, at each size in a browser of its own (a first visit): home as it
opens, a story asked for with the form and written while the Wi-Fi drops and comes back
(the note floating, the words where they were), another stopped half-way (kept under "Not
finished yet"), the library, a story page and its Share… menu. Last, the month's budget is
spent and home is shown with the form closed, at each size. Nothing is checked here: the
pictures are for a person to look at (the browser tests check what can be checked).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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
from tests.helpers.browser import CHROMIUM_ARGS, SIZES  # noqa: E402
from tests.helpers.fake_images import painted  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402

OUT = ROOT / "test-artifacts" / "evening"
BEFORE = 8  # stories written before the browser opens: with two per size, an evening's 10+
HELD_CHUNKS = 60  # words streamed before the fake model waits: a story half-written
BUDGET_ENV = {"MONTHLY_BUDGET": "2", "DAILY_STORY_LIMIT": "20", "STORY_MODEL": "fake-story",
              "IMAGE_MODEL": "fake-image",
              "PRICES": '{"fake-story": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},'
                        ' "fake-image": {"per_image": 0.01}}'}
WAIT_MS = 30_000


async def shoot(page, name: str) -> None:
    await page.wait_for_timeout(400)  # transitions settle (the bar, the card's focus ring)
    await page.screenshot(path=str(OUT / f"{name}.png"))


async def evening_at(browser, url: str, size: str, fake: FakeLLM, conn) -> None:
    context = await browser.new_context(viewport=SIZES[size])
    page = await context.new_page()
    try:
        await page.goto(url + "/", wait_until="networkidle")
        await shoot(page, f"{size}-01-home")

        # A story asked for with the form, half-written when the Wi-Fi drops.
        fake.hold_after_chunks = HELD_CHUNKS
        fake.hold()
        await page.fill("#prompt", "a lighthouse keeper's cat who guides the boats home")
        await page.get_by_role("button", name="Write the story").click()
        card = page.locator("#jobs .job-card").last
        await card.locator(".story-text p").first.wait_for(timeout=WAIT_MS)
        await page.wait_for_timeout(1500)
        await shoot(page, f"{size}-02-writing")
        await context.set_offline(True)
        await page.locator("[data-connection-lost]").first.wait_for(timeout=WAIT_MS)
        await shoot(page, f"{size}-03-offline")
        await context.set_offline(False)
        await page.locator("[data-connection-lost]").first.wait_for(state="detached",
                                                                     timeout=WAIT_MS)
        fake.release()
        await card.get_by_text("Read the story").wait_for(timeout=WAIT_MS)
        await shoot(page, f"{size}-04-written")

        # Another, stopped half-way: it waits under "Not finished yet".
        fake.hold()
        await page.fill("#prompt", "a snail who races the moon")
        await page.get_by_role("button", name="Write the story").click()
        card = page.locator("#jobs .job-card").last
        await card.locator(".story-text p").first.wait_for(timeout=WAIT_MS)
        await card.get_by_text("Stop…").click()
        await shoot(page, f"{size}-05-stop-asks")
        await card.get_by_role("button", name="Yes, stop it").click()
        await page.get_by_role("button", name="Finish this story").last.wait_for(timeout=WAIT_MS)
        fake.release()
        fake.hold_after_chunks = None
        await shoot(page, f"{size}-06-stopped")
        await page.goto(url + "/", wait_until="networkidle")
        await page.screenshot(path=str(OUT / f"{size}-07-home-later.png"), full_page=True)

        await page.goto(url + "/stories", wait_until="networkidle")
        await shoot(page, f"{size}-08-library")
        story_id = await conn.fetchval("SELECT max(id) FROM stories")
        await page.goto(f"{url}/stories/{story_id}", wait_until="networkidle")
        await shoot(page, f"{size}-09-story")
        await page.locator(".share-menu > summary").click()
        await page.get_by_role("button", name="Make a link").click()
        await page.locator("[data-share-url]").wait_for()
        await shoot(page, f"{size}-10-shared")
    finally:
        await context.close()


async def budget_spent(browser, url: str, conn) -> None:
    await conn.execute(
        "INSERT INTO spend (kind, model, output_tokens, cost_micros, created_at)"
        " VALUES ('story', 'fake-story', 1, 2000000, now())")
    for size in SIZES:
        context = await browser.new_context(viewport=SIZES[size])
        try:
            page = await context.new_page()
            await page.goto(url + "/", wait_until="networkidle")
            await shoot(page, f"{size}-11-budget-spent")
        finally:
            await context.close()


async def main() -> None:
    from playwright.async_api import async_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        database_url = await fresh_database(embedded_postgres_url(Path(tmp) / "pg",
                                                                  stop_at_exit=True))
        fake.images.picture = painted((768, 512), "WEBP")
        fake.story = STORY
        app = Server("app.main:app", app_env(database_url, fake.url, ILLUSTRATOR="openai",
                                             **BUDGET_ENV), Path(tmp) / "app.log")
        app.start()
        conn = await asyncpg.connect(database_url)
        try:
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                for job_id in await submit(client, BEFORE):
                    await wait_for(conn, "SELECT status = 'completed' FROM story_jobs"
                                   " WHERE id = $1", job_id)
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                           args=CHROMIUM_ARGS)
                try:
                    for size in SIZES:
                        await evening_at(browser, app.url, size, fake, conn)
                    await budget_spent(browser, app.url, conn)
                finally:
                    await browser.close()
        finally:
            await conn.close()
            app.stop()
    print(f"screenshots in {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    asyncio.run(main())
