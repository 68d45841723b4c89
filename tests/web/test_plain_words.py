"""The family's pages speak plain words: no setting's name (MONTHLY_BUDGET, PRICES,
UI_LANGUAGE ...) and no path on the server. Those are for whoever runs the app, in the log
and the docs. (The contract's own exceptions, a model to replace and which variable mends
it, are tested where they are said.)"""

from __future__ import annotations

import html
import re

import pytest

from tests.helpers.app import serve
from tests.helpers.platform import ROOT
from tests.money.test_ledger import PRICES

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]

SETTINGS = sorted(set(re.findall(r'"([A-Z][A-Z0-9]*_[A-Z0-9_]+|PRICES|TZ|PORT)"',
                                 (ROOT / "app" / "config.py").read_text())))


def settings_named(page: str) -> list[str]:
    """The settings a reader sees named on `page` (its text, not its markup)."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(
        r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)))
    return [name for name in SETTINGS if re.search(rf"\b{name}\b", text)]


def test_the_settings_looked_for_are_the_app_s():
    assert {"MONTHLY_BUDGET", "UI_LANGUAGE", "PRICES", "BACKUP_DIR"} <= set(SETTINGS)


async def test_the_spending_page_names_no_setting_with_or_without_a_budget(make_app):
    # fake-model has no price: the page lists it as unpriced.
    async with serve(make_app()) as client:
        page = (await client.get("/spend")).text
        assert "There is no monthly budget" in page and "Models with no price" in page
        assert settings_named(page) == []
    async with serve(make_app(monthly_budget_micros=5_000_000)) as client:
        home = (await client.get("/")).text
        assert "does not count" in home
        assert settings_named(home) == []
        assert settings_named((await client.get("/spend")).text) == []
    async with serve(make_app(prices=PRICES, monthly_budget_micros=5_000_000)) as client:
        assert settings_named((await client.get("/spend")).text) == []


async def test_the_children_page_says_who_chose_the_language_not_the_setting(make_app):
    async with serve(make_app(ui_language="en"), from_own_pages=True) as client:
        page = (await client.get("/children", headers={"Accept": "text/html"})).text
    assert "set for this installation by whoever set up the app" in page
    assert settings_named(page) == []
