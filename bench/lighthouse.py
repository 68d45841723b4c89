"""Lighthouse's performance score for the home page, the library and a story, on a phone
and on a tablet, against the app served as bench/perf.py serves it, with every story's
picture drawn (the fake's Images API, a 70 KB painted-looking WebP each).

    .venv/bin/python bench/lighthouse.py            # make bench-lighthouse; about two minutes

Needs Node (`npx lighthouse`, or LIGHTHOUSE=/path/to/lighthouse) and Debian's Chromium
(CHROME_PATH, /usr/bin/chromium by default). The phone is Lighthouse's own mobile profile
(a Moto G Power on slow 4G, the CPU slowed four times); the tablet is the same network and
CPU at 820 x 1180, two device pixels a CSS pixel. Each page is measured RUNS times
(LIGHTHOUSE_RUNS, 3) and the median score kept; LIGHTHOUSE_PAGES=story (or home,library)
measures only those, LIGHTHOUSE_DEVICES=phone (or tablet) only that device. Reports go to
test-artifacts/lighthouse/.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.perf import (  # noqa: E402
    ROOT,
    STORY,
    Server,
    app_env,
    embedded_postgres_url,
    fresh_database,
    submit,
    wait_for,
)
from tests.helpers.fake_images import painted  # noqa: E402
from tests.helpers.fake_llm import FakeLLM  # noqa: E402

RUNS = int(os.environ.get("LIGHTHOUSE_RUNS", "3"))
PAGES = [name for name in os.environ.get("LIGHTHOUSE_PAGES", "").split(",") if name]
EVENING = 10  # stories written before measuring: the home page as after an evening
OUT = ROOT / "test-artifacts" / "lighthouse"
DEVICES = {
    "phone": ["--form-factor=mobile"],
    "tablet": ["--form-factor=mobile", "--screenEmulation.mobile", "--screenEmulation.width=820",
               "--screenEmulation.height=1180", "--screenEmulation.deviceScaleFactor=2"],
}
DEVICES = {name: flags for name, flags in DEVICES.items()
           if name in (os.environ.get("LIGHTHOUSE_DEVICES") or ",".join(DEVICES)).split(",")}


def lighthouse_command() -> list[str]:
    return shlex.split(os.environ.get("LIGHTHOUSE", "npx --yes lighthouse"))


ATTEMPTS = 3  # Lighthouse now and then loses its own trace (NO_NAVSTART): run it again


def score(url: str, device: str, report: Path) -> tuple[float, dict[str, float]]:
    """One run's performance score (0-100) and its main metrics (ms)."""
    for attempt in range(ATTEMPTS):
        finished = subprocess.run(
            [*lighthouse_command(), url, "--only-categories=performance", "--output=json",
             f"--output-path={report}", "--quiet",
             "--chrome-flags=--headless=new --no-sandbox", *DEVICES[device]],
            check=attempt == ATTEMPTS - 1,
            env={**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
        if finished.returncode == 0:
            break
    result = json.loads(report.read_text())
    audits = result["audits"]
    metrics = {name: audits[key]["numericValue"] for name, key in (
        ("FCP", "first-contentful-paint"), ("LCP", "largest-contentful-paint"),
        ("TBT", "total-blocking-time"), ("CLS", "cumulative-layout-shift"))}
    return result["categories"]["performance"]["score"] * 100, metrics


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        database_url = await fresh_database(embedded_postgres_url(Path(tmp) / "pg",
                                                                  stop_at_exit=True))
        # With pictures: each story's drawn by the fake, as heavy as a painted one (70 KB).
        fake.images.picture = painted((768, 512), "WEBP")
        app = Server("app.main:app", app_env(database_url, fake.url, ILLUSTRATOR="openai"),
                     Path(tmp) / "app.log")
        app.start()
        import asyncpg

        conn = await asyncpg.connect(database_url)
        try:
            fake.story = STORY
            async with httpx.AsyncClient(base_url=app.url, timeout=30) as client:
                for job_id in await submit(client, EVENING):  # an evening's stories
                    await wait_for(conn, "SELECT status = 'completed' FROM story_jobs"
                                   " WHERE id = $1", job_id)
            await wait_for(conn, "SELECT count(*) = $1 FROM story_pictures", EVENING)
            story_id = await conn.fetchval("SELECT max(id) FROM stories")
            pages = {"home": "/", "library": "/stories", "story": f"/stories/{story_id}"}
            if PAGES:
                pages = {name: path for name, path in pages.items() if name in PAGES}
            rows = []
            for page, path in pages.items():
                for device in DEVICES:
                    runs = [await asyncio.to_thread(score, app.url + path, device,
                                                    OUT / f"{page}-{device}-{n}.json")
                            for n in range(RUNS)]
                    best = statistics.median(s for s, _ in runs)
                    median_run = min(runs, key=lambda run: abs(run[0] - best))[1]
                    rows.append((page, device, best, median_run))
        finally:
            await conn.close()
            app.stop()
    print("| page | device | performance | FCP ms | LCP ms | TBT ms | CLS |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for page, device, best, m in rows:
        print(f"| {page} | {device} | {best:.0f} | {m['FCP']:.0f} | {m['LCP']:.0f} | "
              f"{m['TBT']:.0f} | {m['CLS']:.3f} |")


if __name__ == "__main__":
    asyncio.run(main())
