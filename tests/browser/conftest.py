"""What the browser test modules here share: Debian's Chromium, kept open from one module
to the next while the next test drives it too (SharedChromium in tests/helpers/browser.py:
closed before any other test, since Playwright keeps its event loop marked as running in
the main thread while other tests' fixtures call asyncio.run), and pages opened in it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.browser import ARTIFACTS, REPORT_CSP, SIZES, SharedChromium, Watched


@pytest.fixture(scope="session")
def chromium() -> Iterator[SharedChromium]:
    chromium = SharedChromium()
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def browser(chromium: SharedChromium) -> Iterator[object]:
    ARTIFACTS.mkdir(exist_ok=True)
    yield chromium.launched()
    chromium.let_go()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Before a module's fixtures are torn down: whether the test that comes next (in this
    worker) drives the browser too, so that the module's `browser` leaves it open."""
    chromium = (getattr(item, "funcargs", None) or {}).get("chromium")
    if isinstance(chromium, SharedChromium):
        chromium.keep_open = "browser" in getattr(nextitem, "fixturenames", ())
    return (yield)


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
