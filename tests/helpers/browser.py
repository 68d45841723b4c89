"""What the browser tests share: Debian's Chromium, and the app served over real HTTP.

    pytestmark = needs_chromium
    with served_over_http(settings) as url: ...

The browser is Debian's `chromium` package driven through Playwright with
`executable_path`, never a downloaded build. `make test` installs it where it can
(tools/system-packages, as root with apt); where it is missing the tests are skipped with
the reason, except in CI (CI=true), where a missing browser fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn

from app.config import Settings
from app.main import create_app
from tests.helpers.database import TEMPLATE_DB, admin, with_database
from tests.helpers.fake_llm import free_port
from tests.helpers.waits import WAIT_S

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
_MISSING = ("needs Debian's chromium: make test installs it as root with apt; "
            "else sudo apt-get install chromium")

needs_chromium = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason=_MISSING),
]


def byte_counters(cdp: Any) -> tuple[dict[str, str], dict[str, int]]:
    """Listeners on a page's CDP session (sync or async Playwright): request id -> URL, and
    request id -> bytes received on the wire (headers and compressed body), filled as the
    page loads."""
    urls: dict[str, str] = {}
    received: dict[str, int] = {}
    cdp.on("Network.requestWillBeSent",
           lambda event: urls.__setitem__(event["requestId"], event["request"]["url"]))
    cdp.on("Network.loadingFinished", lambda event: received.__setitem__(
        event["requestId"], int(event["encodedDataLength"])))
    return urls, received


@contextlib.contextmanager
def served_over_http(settings: Settings) -> Iterator[str]:
    """The app under uvicorn on a free loopback port, in a thread with its own event loop."""
    if not CHROMIUM.exists():
        pytest.fail(_MISSING)  # only reached in CI, where .ci/run should have installed it
    port = free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port,
                            log_level="warning", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the app did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


class SharedChromium:
    """Debian's Chromium, headless, through Playwright (never a downloaded browser), kept
    open from one test module to the next while the tests that follow need it.

        chromium = SharedChromium()
        browser = chromium.launched()   # launched now, or the one already open
        chromium.let_go()               # closed, unless `keep_open` says a test needs it next
        chromium.close()

    Playwright's sync API marks its event loop as running in the launching thread for as
    long as the browser is open, so nothing else may run asyncio there meanwhile: the
    browser is closed before any test that does not drive it (tests/browser/conftest.py
    sets `keep_open` by the test that comes next). Launching the driver and the browser
    costs about a second and a half of CPU, paid once a run of browser tests, not once a
    module."""

    def __init__(self) -> None:
        self.keep_open = False
        self._playwright: Any = None
        self._browser: Any = None

    def launched(self) -> Any:
        if self._browser is not None and not self._browser.is_connected():
            self.close()  # it crashed: a new one, rather than every test after failing
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        return self._browser

    def let_go(self) -> None:
        if not self.keep_open:
            self.close()

    def close(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        try:
            if browser is not None and browser.is_connected():
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


AXE = Path(__file__).resolve().parents[1] / "vendor" / "axe.min.js"


ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


VIEWPORTS = {"tablet": {"width": 820, "height": 1180}, "phone": {"width": 390, "height": 844}}


# Issue 21's three sizes: a tablet held upright, the same tablet on its side, a phone.
SIZES = {"tablet": VIEWPORTS["tablet"], "tablet-landscape": {"width": 1180, "height": 820},
         "phone": VIEWPORTS["phone"]}


STORY_WAIT_MS = int(WAIT_S * 1000)
# The browser tests' cards poll every second, not every 3 s: a test waiting on a card
# waits a third as long. The tests of the pace itself (tests/web/) keep the 3 s default.
CARD_POLL_S = 1.0


# Script errors and CSP violations reach the console, where Watched collects them.
REPORT_CSP = (
    "document.addEventListener('securitypolicyviolation', e => "
    "console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))"
)
# Headless Chromium has no voices: two made-up ones, and a synthesizer that "speaks" each
# utterance for 120 ms, noting its text, voice, volume and the paragraph lit meanwhile.
# A wake lock that notes each request and release in window.__wake, says on <html> whether
# one is held (data-wake: a locator can wait on it), and lets the test hide the page as the
# browser would: the lock dropped, then "visibilitychange" (window.__hide / __show).
WAKE_LOCK_STUB = """
  window.__wake = [];
  let held = null;
  let visibility = "visible";
  const mark = () => document.documentElement.setAttribute(
    "data-wake", held && !held.released ? "held" : "free");
  Object.defineProperty(document, "visibilityState", {configurable: true, get: () => visibility});
  Object.defineProperty(navigator, "wakeLock", {configurable: true, value: {
    request(type) {
      window.__wake.push("request " + type);
      const listeners = [];
      const sentinel = {
        type, released: false,
        addEventListener(name, listener) { if (name === "release") listeners.push(listener); },
        release() {
          if (!this.released) {
            this.released = true;
            window.__wake.push("release");
            listeners.forEach((listener) => listener(new Event("release")));
            mark();
          }
          return Promise.resolve();
        },
      };
      held = sentinel;
      setTimeout(mark, 0);
      return Promise.resolve(sentinel);
    },
  }});
  window.__hide = () => {
    visibility = "hidden";
    if (held) held.release();
    document.dispatchEvent(new Event("visibilitychange"));
  };
  window.__show = () => {
    visibility = "visible";
    document.dispatchEvent(new Event("visibilitychange"));
  };
"""
SPEECH_STUB = """
  const voices = [
    {name: "Calm (English)", lang: "en-GB", voiceURI: "calm", localService: true},
    {name: "Bright, a voice with a very long name indeed (English, United States)",
     lang: "en-US", voiceURI: "bright", localService: false},
  ];
  Object.defineProperty(SpeechSynthesisUtterance.prototype, "voice", {
    configurable: true, get() { return this.__voice || null; }, set(v) { this.__voice = v; },
  });
  const synth = window.speechSynthesis;
  let current = null;
  let timer = 0;
  window.__spoken = [];
  synth.getVoices = () => voices.slice();
  synth.speak = (utterance) => {
    current = utterance;
    setTimeout(() => {
      utterance.dispatchEvent(new Event("start"));
      const lit = document.querySelector(".is-reading");
      window.__spoken.push({text: utterance.text, volume: utterance.volume,
                            voice: utterance.voice && utterance.voice.voiceURI,
                            lit: lit && lit.textContent.trim()});
      timer = setTimeout(() => {
        if (current !== utterance) return;
        current = null;
        utterance.dispatchEvent(new Event("end"));
      }, 120);
    }, 10);
  };
  synth.cancel = () => {
    clearTimeout(timer);
    const utterance = current;
    current = null;
    if (utterance) utterance.dispatchEvent(new Event("error"));
  };
  synth.pause = () => {};
  synth.resume = () => {};
"""
# The first paragraph (the title) "spoken" until the test ends: the voice never moves on,
# so a story scrolled or measured meanwhile is not scrolled back to the next paragraph,
# however slow a busy machine is.
SLOW_SPEECH = SPEECH_STUB.replace("}, 120);", "}, 3_600_000);")


class Watched:
    """A page whose console errors, failed loads and off-site requests are collected."""

    def __init__(self, context, base_url: str) -> None:
        self.page = context.new_page()
        self.problems: list[str] = []
        host = urlsplit(base_url).netloc
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(m.text))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: r.failure == "net::ERR_ABORTED"  # navigated on
                     or self.problems.append(f"failed: {r.url} {r.failure}"))
        self.page.on("request", lambda r: urlsplit(r.url).netloc in (host, "")
                     or self.problems.append(f"off-site request: {r.url}"))

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        assert not overflows(self.page), f"{name} is wider than the screen"


# A card being written is replaced at every poll: an element found in one step and read in
# the next may be the one just swapped out (detached: no style, a rectangle of zeros). These
# read it in one turn of the page's script, so they read the card on the page.
def read_attached(locator, script: str) -> Any:
    """`script` (a function of the element) run on what `locator` finds, in the same turn
    of the page's script as a check that the element is still on the page: Playwright finds
    the element and runs the script in two steps, between which a poll may swap it out.
    Read again until it was read attached."""
    deadline = time.monotonic() + WAIT_S
    while True:
        attached, value = locator.evaluate(f"e => [e.isConnected, ({script})(e)]")
        if attached:
            return value
        assert time.monotonic() < deadline, f"{locator} was replaced at every read"


def box_of(locator) -> dict[str, float] | None:
    """The element's box on the screen, as Playwright's bounding_box() has it (None: not
    laid out), read attached."""
    return read_attached(locator, "e => { if (!e.getClientRects().length) return null;"
                                  " const r = e.getBoundingClientRect();"
                                  " return {x: r.x, y: r.y, width: r.width, height: r.height}; }")


def font_of(page, selector: str) -> str:
    return page.evaluate("s => getComputedStyle(document.querySelector(s)).fontFamily",
                         selector)


def top_of_paragraph(page, selector: str, text: str) -> float:
    """The screen top of the paragraph under `selector` holding `text`."""
    return page.evaluate(
        """([s, text]) => [...document.querySelectorAll(s + " p")]
            .find(p => p.textContent.includes(text)).getBoundingClientRect().top""",
        [selector, text])


def overflows(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth > window.innerWidth")


def open_reading_menu(page) -> None:
    """The header's theme and text size menu (a <details>), on every page."""
    page.locator("details[data-reading-menu] > summary").click()


def picture_loaded(page, selector: str = "figure.picture img") -> None:
    """Wait until the picture's bytes are decoded. A property wait on the element, not
    wait_for_function: that one evaluates a string when it polls, which the CSP forbids."""
    from playwright.sync_api import expect

    img = page.locator(selector)
    expect(img).to_have_js_property("complete", True, timeout=WAIT_S * 1000)
    expect(img).not_to_have_js_property("naturalWidth", 0, timeout=WAIT_S * 1000)


def request_story(page) -> str:
    """Tap "Write the story"; the id of the job whose card then appears, without a reload."""
    # By the cards' ids, not their count: the earlier stories' cards leave as one is asked.
    before = page.locator("#jobs .job-card").evaluate_all("cards => cards.map(c => c.id)")
    page.get_by_role("button", name="Write the story").click()
    # A locator wait, not wait_for_function: that one evaluates a string, which the CSP forbids.
    new = page.locator("#jobs .job-card" + "".join(f":not(#{id})" for id in before)).first
    new.wait_for(state="attached")
    return new.get_attribute("id").removeprefix("job-")


@contextlib.contextmanager
def app_of_its_own(pg_url: str, data_dir: Path, **overrides: object) -> Iterator[str]:
    name = f"bedtime_{uuid.uuid4().hex[:12]}"
    admin(pg_url, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')
    settings = Settings(
        database_url=with_database(pg_url, name),
        data_dir=data_dir,
        shutdown_grace_s=2,
        **{"storyteller": "demo", "demo_delay_s": 1.5, "card_poll_s": CARD_POLL_S, **overrides},
    )
    try:
        with served_over_http(settings) as url:
            yield url
    finally:
        admin(pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def app_writing_with(pg_url: str, data_dir: Path,
                     fake_llm_url: str) -> contextlib.AbstractContextManager[str]:
    """app_of_its_own, writing with the fake LLM at `fake_llm_url`, with a day's limit no
    test reaches."""
    return app_of_its_own(pg_url, data_dir, allow_open=True, storyteller="openai",
                          openai_api_key="test-key", openai_base_url=fake_llm_url,
                          story_model="fake-model", llm_timeout_s=60, daily_story_limit=1000)


def settled_scroll(page) -> float:
    """window.scrollY once a smooth scroll has come to rest."""
    last, since = page.evaluate("window.scrollY"), time.monotonic()
    deadline = since + 5
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = page.evaluate("window.scrollY")
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > 0.4:
            return now
    return last


def story_bar(card):
    """The card's story-progress bar; a finished card also holds the read-aloud one."""
    return card.get_by_role("progressbar", name="Story progress", exact=True)
