"""Screenshots of an evening as a parent has it, at the three sizes (a tablet upright
820 x 1180, on its side 1180 x 820, a phone 390 x 844), into test-artifacts/evening/:

    .venv/bin/python tools/evening_screenshots.py                 # English, about 3 minutes
    .venv/bin/python tools/evening_screenshots.py --language ar   # the Arabic evening

The app runs as bench/perf.py runs it (uvicorn, an embedded PostgreSQL, the tests' fake
model, pictures drawn by the fake's Images API), with a monthly budget, in a time zone where
it is 8 p.m. (the pages in Night, as at bedtime); the household's language (the default for
new devices) is the other one. Eight stories are written first,
in the evening's language (the fake model writes an Arabic story for the Arabic evening).
Then, at each size in a browser of its own (a first visit): the device chooses its own
language on the Children page; home as it opens; two stories asked 4 s apart, the first
half-written, the second waiting its turn, while the Wi-Fi drops and comes back (the note
floating, the words where they were); another stopped half-way, then dismissed from
home's "Not finished yet" (Undo, and dismissed again), found in the library's
"Dismissed (N)" and brought back; the library, a story page and its Share… menu; and a
second device (a browser of its own) opened on home, in the household's language, not the
first device's. Last, the month's budget is spent and home is shown with the form closed,
at each size. Files are named <language>-<size>-<step>.png. Nothing is checked here: the
pictures are for a person to look at (the browser tests check what can be checked).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.i18n import gettext, speaking  # noqa: E402
from app.stories import StoryRequest  # noqa: E402
from app.storytelling.demo_arabic import compose_arabic  # noqa: E402
from bench.perf import (  # noqa: E402
    CHROMIUM,
    STORY,
    Server,
    app_env,
    embedded_postgres_url,
    fresh_database,
    wait_for,
)
from tests.helpers.browser import CHROMIUM_ARGS, SIZES  # noqa: E402
from tests.helpers.fake_images import painted  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402

OUT = ROOT / "test-artifacts" / "evening"
BEFORE = 8  # stories written before the browser opens: with three per size, an evening's 10+
HELD_CHUNKS = 60  # words streamed before the fake model waits: a story half-written
SECOND_AFTER_S = 4  # the second story of two is asked this long after the first
BUDGET_ENV = {"MONTHLY_BUDGET": "2", "DAILY_STORY_LIMIT": "20", "STORY_MODEL": "fake-story",
              "IMAGE_MODEL": "fake-image",
              "PRICES": '{"fake-story": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},'
                        ' "fake-image": {"per_image": 0.01}}'}
WAIT_MS = 30_000
# What a parent types, in the evening's language: the stories before, the two asked at
# once, the one stopped half-way.
IDEAS = {
    "en": ("a sleepy comet", "a lighthouse keeper's cat who guides the boats home",
           "an owl who counts the stars", "a snail who races the moon"),
    "ar": ("مذنّب نعسان", "قطة حارس المنارة ترشد القوارب إلى البيت",
           "بومة تعدّ النجوم", "حلزون يسابق القمر"),
}
# The rows' buttons, named for their story ("Dismiss “The Lantern Fox”"): by their forms.
DISMISS = "form[action$='/dismiss'] button"
BRING_BACK = "form[action$='/undismiss'] button"
EVENING_HOUR = 20  # the household's clock while the pictures are taken: Night, by bedtime


def evening_zone(now: datetime) -> str:
    """A time zone in which `now` is in EVENING_HOUR: the pages are in Night, as they are
    at bedtime, and say the evening's times, whenever the tool runs."""
    offset = (EVENING_HOUR - now.hour + 12) % 24 - 12  # hours ahead of UTC, -12 to 11
    return f"Etc/GMT{-offset:+d}"  # the Etc zones' signs are POSIX's, the other way round


# The household's language, the default for a device that has not chosen: the other one.
HOUSEHOLD = {"en": "ar", "ar": "en"}


def arabic_story() -> str:
    """A story as the fake model writes it for the Arabic evening: a title, then
    paragraphs long enough to be half-written when it is held (the demo's own sentences)."""
    title, paragraphs = compose_arabic(
        StoryRequest("قطة صغيرة تبحث عن القمر", child_name="ليلى", length="long",
                     language="ar"), random.Random(7))
    return "\n\n".join([title, *paragraphs])


async def scrolled_through(page) -> None:
    """Down to the page's end and back, as a parent scrolls: the thumbnails that load as
    their rows come into view are in a full-page picture."""
    height = await page.evaluate("document.documentElement.scrollHeight")
    for top in range(0, height, 400):
        await page.evaluate("top => window.scrollTo(0, top)", top)
        await page.wait_for_timeout(100)
    await page.wait_for_timeout(500)
    await page.evaluate("window.scrollTo(0, 0)")


def words_of(language: str) -> Callable[[str], str]:
    """The page's words for a control, in `language` (its catalogue): what a parent taps."""

    def said(message: str) -> str:
        with speaking(language):
            return gettext(message)

    return said


class Evening:
    def __init__(self, language: str, url: str, fake: FakeLLM,
                 conn: asyncpg.Connection) -> None:
        self.language, self.url, self.fake, self.conn = language, url, fake, conn
        self.said = words_of(language)
        self.ideas = IDEAS[language]

    async def shoot(self, page, size: str, step: str, *, full_page: bool = False) -> None:
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        # Pictures and fonts in: a moment of quiet on the network, or at most a few seconds
        # (a page that polls, or one opened after the Wi-Fi came back, is never idle).
        try:
            await page.wait_for_load_state("networkidle", timeout=3000)
        except PlaywrightTimeout:
            pass
        await page.wait_for_timeout(400)  # transitions settle (the bar, the card's focus ring)
        await page.screenshot(path=str(OUT / f"{self.language}-{size}-{step}.png"),
                              full_page=full_page)

    async def choose_language(self, page, size: str) -> None:
        """This device's own language, as a parent chooses it on the Children page."""
        await page.goto(self.url + "/children#language", wait_until="load")
        await page.select_option("#device-language", self.language)
        await page.locator("#language form[action='/preferences'] button[type=submit]").click()
        await page.wait_for_url("**/children#language")
        await page.locator("#language").scroll_into_view_if_needed()
        await self.shoot(page, size, "00-language")

    async def ask(self, page, idea: str):
        """The form filled and sent; the new card."""
        before = await page.locator("#jobs .job-card").evaluate_all(
            "cards => cards.map(c => c.id)")
        await page.fill("#prompt", idea)
        await page.get_by_role("button", name=self.said("Write the story")).click()
        card = page.locator("#jobs .job-card" + "".join(f":not(#{id})" for id in before)).first
        await card.wait_for(state="attached", timeout=WAIT_MS)
        return page.locator("#" + (await card.get_attribute("id") or ""))

    async def evening_at(self, browser, size: str) -> None:
        context = await browser.new_context(viewport=SIZES[size])
        page = await context.new_page()
        said, fake = self.said, self.fake
        try:
            await self.choose_language(page, size)
            await page.goto(self.url + "/", wait_until="load")
            await self.shoot(page, size, "01-home")

            # Two stories at once: the first half-written, the second asked 4 s later, and
            # the Wi-Fi dropping while the first is written.
            fake.hold_after_chunks = HELD_CHUNKS
            fake.hold()
            asked = time.monotonic()
            first = await self.ask(page, self.ideas[1])
            await first.locator(".story-text p").first.wait_for(timeout=WAIT_MS)
            await page.wait_for_timeout(max(0, SECOND_AFTER_S - (time.monotonic() - asked)) * 1000)
            second = await self.ask(page, self.ideas[2])
            await page.wait_for_timeout(1500)
            await self.shoot(page, size, "02-two-at-once")
            await first.scroll_into_view_if_needed()
            await self.shoot(page, size, "03-writing")
            await context.set_offline(True)
            await page.locator("[data-connection-lost]").first.wait_for(timeout=WAIT_MS)
            await self.shoot(page, size, "04-offline")
            await context.set_offline(False)
            await page.locator("[data-connection-lost]").first.wait_for(state="detached",
                                                                         timeout=WAIT_MS)
            fake.release()
            await first.get_by_text(said("Read the story")).wait_for(timeout=WAIT_MS)
            await self.shoot(page, size, "05-first-written")
            await second.get_by_text(said("Read the story")).wait_for(timeout=WAIT_MS)
            await second.get_by_text(said("Read the story")).scroll_into_view_if_needed()
            await self.shoot(page, size, "06-both-written")

            # Another, stopped half-way: it waits under "Not finished yet".
            fake.hold()
            card = await self.ask(page, self.ideas[3])
            await card.locator(".story-text p").first.wait_for(timeout=WAIT_MS)
            await card.get_by_text(said("Stop…")).click()
            await self.shoot(page, size, "07-stop-asks")
            await card.get_by_role("button", name=said("Yes, stop it")).click()
            await page.get_by_role("button", name=said("Finish this story")).last.wait_for(
                timeout=WAIT_MS)
            fake.release()
            fake.hold_after_chunks = None
            await self.shoot(page, size, "08-stopped")

            # In the library's "Not finished yet": dismissed, undone, dismissed again.
            await page.goto(self.url + "/stories", wait_until="load")
            listed = page.locator(".unfinished > .unfinished-list")
            row = listed.locator("li", has_text=self.ideas[3]).first
            await row.scroll_into_view_if_needed()
            await self.shoot(page, size, "09-not-finished")
            await row.locator(DISMISS).click()
            undo = listed.locator(".unfinished-dismissed").get_by_role("button",
                                                                       name=said("Undo"))
            await undo.wait_for(timeout=WAIT_MS)
            await self.shoot(page, size, "10-dismissed")
            await undo.click()
            await row.locator(DISMISS).wait_for(
                timeout=WAIT_MS)
            await self.shoot(page, size, "11-undone")
            await row.locator(DISMISS).click()
            await undo.wait_for(timeout=WAIT_MS)

            # Found again, after a reload, under "Dismissed (N)", and brought back.
            await page.goto(self.url + "/stories", wait_until="load")
            put_away = page.locator("details.unfinished-put-away")
            await put_away.locator("summary").click()
            kept = put_away.locator("li", has_text=self.ideas[3]).first
            await kept.scroll_into_view_if_needed()
            await self.shoot(page, size, "12-dismissed-found")
            await kept.locator(BRING_BACK).click()
            await page.wait_for_url("**/stories#unfinished-*")
            await self.shoot(page, size, "13-brought-back")

            await page.goto(self.url + "/", wait_until="load")
            await scrolled_through(page)
            await self.shoot(page, size, "14-home-later", full_page=True)

            story_id = await self.conn.fetchval("SELECT max(id) FROM stories")
            await page.goto(f"{self.url}/stories/{story_id}", wait_until="load")
            await self.shoot(page, size, "15-story")
            await page.locator(".share-menu > summary").click()
            await page.get_by_role("button", name=said("Make a link")).click()
            await page.locator("[data-share-url]").wait_for()
            await self.shoot(page, size, "16-shared")
        finally:
            await context.close()

    async def second_device(self, browser, size: str) -> None:
        """A device that has chosen nothing: the household's language, not the first's."""
        context = await browser.new_context(viewport=SIZES[size])
        try:
            page = await context.new_page()
            await page.goto(self.url + "/", wait_until="load")
            shown = await page.locator("html").get_attribute("lang")
            if shown != HOUSEHOLD[self.language]:
                print(f"{size}: a second device opened in {shown!r}, not the household's "
                      f"{HOUSEHOLD[self.language]!r}")
            await self.shoot(page, size, "17-second-device")
        finally:
            await context.close()

    async def budget_spent(self, browser) -> None:
        await self.conn.execute(
            "INSERT INTO spend (kind, model, output_tokens, cost_micros, created_at)"
            " VALUES ('story', 'fake-story', 1, 2000000, now())")
        for size in SIZES:
            context = await browser.new_context(viewport=SIZES[size])
            try:
                # The device's own choice, as POST /preferences keeps it.
                await context.add_cookies([{"name": "language", "value": self.language,
                                            "url": self.url}])
                page = await context.new_page()
                await page.goto(self.url + "/", wait_until="load")
                await self.shoot(page, size, "18-budget-spent")
            finally:
                await context.close()


async def written_before(client: httpx.AsyncClient, conn: asyncpg.Connection,
                         language: str) -> None:
    for _ in range(BEFORE):
        response = await client.post(
            "/stories/generate", json={"prompt": IDEAS[language][0], "language": language},
            headers={"Idempotency-Key": uuid.uuid4().hex})
        response.raise_for_status()
        await wait_for(conn, "SELECT status = 'completed' FROM story_jobs WHERE id = $1",
                       response.json()["job_id"])


async def main(language: str) -> None:
    from playwright.async_api import async_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        database_url = await fresh_database(embedded_postgres_url(Path(tmp) / "pg",
                                                                  stop_at_exit=True))
        fake.images.picture = painted((768, 512), "WEBP")
        fake.story = arabic_story() if language == "ar" else STORY
        app = Server("app.main:app", app_env(database_url, fake.url, ILLUSTRATOR="openai",
                                             TZ=evening_zone(datetime.now(UTC)),
                                             **BUDGET_ENV), Path(tmp) / "app.log")
        app.start()
        conn = await asyncpg.connect(database_url)
        try:
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                chosen = await client.post("/children/language",
                                           json={"language": HOUSEHOLD[language]})
                chosen.raise_for_status()
                await written_before(client, conn, language)
            evening = Evening(language, app.url, fake, conn)
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                           args=CHROMIUM_ARGS)
                try:
                    for size in SIZES:
                        await evening.evening_at(browser, size)
                        await evening.second_device(browser, size)
                    await evening.budget_spent(browser)
                finally:
                    await browser.close()
        finally:
            await conn.close()
            app.stop()
    print(f"screenshots in {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", choices=sorted(IDEAS), default="en",
                        help="the evening's language, chosen by each device for itself")
    asyncio.run(main(parser.parse_args().language))
