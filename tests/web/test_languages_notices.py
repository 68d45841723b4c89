"""The home page's notices speak the household's language: a storyteller without an
endpoint (who can mend it) and a model the budget cannot price, in Spanish and in Arabic;
and an Arabic page shows no English a family would read."""

from __future__ import annotations

import asyncio
import html
import time

import pytest

from app.i18n import gettext, ngettext, speaking
from app.i18n.formats import names
from tests.helpers.app import serve
from tests.helpers.languages import english_left
from tests.helpers.waits import WAIT_S

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]

UNPRICED = ("The budget does not count calls to %(models)s: no price is known for it. "
            "Whoever set up the app can add one.",
            "The budget does not count calls to %(models)s: no price is known for them. "
            "Whoever set up the app can add them.")
UNPRICED_MODEL = "SmolLM2-135M-Instruct"  # a local server's: no price in the pinned table


async def home_when(client, says: str, language: str) -> str:
    """The home page in `language` once it says `says` (the checks run once the app serves)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        page = html.unescape((await client.get("/", headers={"Accept-Language": language})).text)
        if says in page or time.monotonic() > deadline:
            return page
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("language", ["es", "ar"])
async def test_the_home_page_s_notices_are_in_the_household_s_language(
        make_app, fake_llm, monkeypatch, language):
    monkeypatch.setattr("app.runtime.WARM_PRICES_AFTER_S", 0.0)
    fake_llm.responses_api = False
    app = make_app(llm_api="responses", story_model=UNPRICED_MODEL,
                   monthly_budget_micros=5_000_000)
    with speaking(language):
        missing = gettext("This storyteller has no %(endpoint)s (set %(setting)s).") % {
            "endpoint": "/responses", "setting": "LLM_API=chat"}
        unpriced = ngettext(*UNPRICED, 1) % {"models": names([UNPRICED_MODEL])}
    async with serve(app, from_own_pages=True) as client:
        await home_when(client, missing, language)
        home = await home_when(client, unpriced, language)
    assert missing in home and unpriced in home
    assert "has no /responses" not in home and "does not count" not in home
    if language == "ar":
        assert english_left(home) == []


def test_english_left_finds_english_where_a_reader_sees_it():
    page = ('<html lang="ar"><body><p>مرحبا this storyteller has no <code>some code '
            'here ok</code></p><bdi>Mia and the Moon</bdi><div lang="en"><p>Once upon a '
            'time</p></div><button aria-label="Read it aloud">١</button>'
            '<p>LLM_API=chat gpt-6.2-sol /responses</p><br><p>still seen here</p></body></html>')
    assert english_left(page) == ["this storyteller has no", "Read it aloud", "still seen here"]
