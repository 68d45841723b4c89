"""The demo storyteller's note, on every household page: said in the family's words, with
no setting's name (OPENAI_API_KEY is for whoever set the app up: the setup guide)."""

from __future__ import annotations

import pytest

from tests.helpers.app import serve

pytestmark = pytest.mark.anyio


async def test_the_demo_note_names_no_setting(make_app):
    async with serve(make_app(storyteller="demo")) as client:
        page = (await client.get("/")).text
    assert "Demo storyteller:" in page
    for setting in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "<code>"):
        assert setting not in page.split('class="demo-note"')[1].split("</p>")[0], setting
