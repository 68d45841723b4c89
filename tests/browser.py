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
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from app.config import Settings
from app.main import create_app
from tests.fake_llm import free_port

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


@contextlib.contextmanager
def launched_chromium() -> Iterator[object]:
    """Debian's Chromium, headless, through Playwright (never a downloaded browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
