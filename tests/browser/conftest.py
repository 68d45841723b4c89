"""The browser every test module here shares: Debian's Chromium, launched once a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.browser import ARTIFACTS, launched_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    ARTIFACTS.mkdir(exist_ok=True)
    with launched_chromium() as chromium:
        yield chromium
