"""Listen in a real browser, at the three sizes, in Night: a story read aloud by the app's
narrator (the fake's MP3, over real HTTP) plays when Listen is tapped (never before),
pauses, goes back 15 s, fades out with the sleep timer and pauses; then, with the network
gone, it plays again from the service worker's copy, Range requests and all. Debian's
chromium through Playwright, its clock driven by the test for the sleep timer; screenshots
go to test-artifacts/."""

from __future__ import annotations

import time
from dataclasses import replace

import httpx
import pytest

from tests.helpers.browser import ARTIFACTS, CARD_POLL_S, SIZES, needs_chromium, served_over_http
from tests.helpers.narrations import SHORT_STORY
from tests.helpers.waits import WAIT_S

pytestmark = needs_chromium

SECONDS = 60.0
CONTROLLED = """() => new Promise(resolve => {
  if (navigator.serviceWorker.controller) return resolve(true);
  navigator.serviceWorker.addEventListener("controllerchange", () => resolve(true));
})"""
PLAYING = "a => !a.paused && a.currentTime > 0.5"


def narrated_story(url: str) -> int:
    """A story written and read aloud, over the JSON API: its id."""
    with httpx.Client(base_url=url, timeout=10) as client:
        key = f"listen-{time.monotonic_ns()}"
        job = client.post("/stories/generate", json={"prompt": "a humming whale"},
                          headers={"Idempotency-Key": key}).json()
        story_id = until(lambda: client.get(f"/stories/jobs/{job['job_id']}",
                                            headers={"Accept": "application/json"}
                                            ).json().get("story_id"))
        asked = client.post(f"/stories/{story_id}/narration", json={},
                            headers={"Idempotency-Key": key})
        assert asked.status_code == 202, asked.text
        until(lambda: (client.get(f"/stories/{story_id}", headers={"Accept": "application/json"}
                                  ).json()["narration"] or {}).get("status") == "ready")
        return story_id


def until(found, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while not (value := found()):
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.05)
    return value


def audio_until(audio, check: str, timeout_s: float = WAIT_S) -> None:
    """Until `check` (a function of the <audio> element) holds, read on the element itself."""
    until(lambda: audio.evaluate(check), timeout_s)


@pytest.mark.parametrize("size", list(SIZES))
def test_listen_plays_pauses_goes_back_fades_to_sleep_and_plays_offline(
        browser, settings, fake_llm, size):
    fake_llm.story = SHORT_STORY
    fake_llm.audio.seconds = SECONDS
    narrating = replace(settings, narrator="openai", voice_model="fake-voice",
                        card_poll_s=CARD_POLL_S)
    with served_over_http(narrating) as url:
        story_id = narrated_story(url)
        context = browser.new_context(viewport=SIZES[size])
        context.add_cookies([{"name": "theme", "value": "night", "url": url}])
        problems: list[str] = []
        page = context.new_page()
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.clock.install()
        try:
            page.goto(f"{url}/stories/{story_id}", wait_until="networkidle")
            assert page.evaluate(CONTROLLED) is True
            page.reload(wait_until="networkidle")  # controlled: its audio goes through it
            audio = page.locator("audio[data-listen-audio]")
            bar = page.locator("[data-listen-bar]")
            assert page.locator("html").get_attribute("data-theme") == "night"
            assert audio.evaluate("a => a.paused && a.currentTime === 0")  # no autoplay
            assert bar.is_hidden()
            assert audio.get_attribute("data-title") == "The Whale Who Hummed"

            page.locator('button[data-listen="start"]').click()
            audio_until(audio, PLAYING)
            assert bar.get_attribute("data-state") == "playing" and bar.is_visible()
            assert page.evaluate("navigator.mediaSession.metadata.title") == (
                "The Whale Who Hummed")
            page.screenshot(path=str(ARTIFACTS / f"listen-{size}.png"))

            page.locator('button[data-listen="pause"]').click()
            assert audio.evaluate("a => a.paused")
            held = audio.evaluate("a => a.currentTime")
            time.sleep(0.3)
            assert audio.evaluate("a => a.currentTime") == held
            assert bar.get_attribute("data-state") == "paused"

            audio.evaluate("a => { a.currentTime = 40; }")
            page.locator('button[data-listen="play"]').click()
            audio_until(audio, "a => !a.paused && a.currentTime >= 40")
            page.locator('button[data-listen="back"]').click()
            back_to = audio.evaluate("a => a.currentTime")
            assert 24.5 <= back_to <= 27.5, back_to

            page.locator("select[data-listen-sleep]").select_option("5")
            page.clock.run_for(5 * 60_000 - 15_000)  # 15 s before the timer: half as loud
            assert audio.evaluate("a => a.volume") == pytest.approx(0.5, abs=0.05)
            assert audio.evaluate("a => !a.paused")
            page.screenshot(path=str(ARTIFACTS / f"listen-sleep-{size}.png"))
            page.clock.run_for(16_000)
            assert audio.evaluate("a => a.paused")
            assert bar.get_attribute("data-state") == "paused"
            assert bar.get_attribute("data-slept") is not None

            context.set_offline(True)
            page.reload(wait_until="load")
            audio = page.locator("audio[data-listen-audio]")
            page.locator('button[data-listen="start"]').click()
            audio_until(audio, PLAYING)
            audio.evaluate("a => { a.currentTime = 50; }")  # a seek: a Range from the copy
            audio_until(audio, "a => !a.paused && a.currentTime > 50.2")
            page.screenshot(path=str(ARTIFACTS / f"listen-offline-{size}.png"))
            assert problems == []
        finally:
            context.close()
