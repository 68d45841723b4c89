"""What the browser test modules here share: Debian's Chromium, launched once a module (a
browser kept for the whole session would keep Playwright's event loop running in the main
thread while other modules' fixtures call asyncio.run), and pages opened in it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.browser import ARTIFACTS, REPORT_CSP, SIZES, Watched, launched_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    ARTIFACTS.mkdir(exist_ok=True)
    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture
def open_page(browser):
    """Pages in fresh browser contexts (closed however the test ends), each watched for
    console errors, CSP violations, failed loads and off-site requests; `viewport` is one
    of SIZES."""
    opened = []

    def open_one(url: str, viewport: str = "phone", **options) -> Watched:
        opened.append(browser.new_context(viewport=SIZES[viewport], **options))
        watched = Watched(opened[-1], url)
        watched.page.add_init_script(REPORT_CSP)
        return watched

    yield open_one
    for context in opened:
        context.close()
