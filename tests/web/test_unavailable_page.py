"""The app's own 503 page: it says when to come back, and comes back by itself."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from app.web.errors import DATABASE_RETRY_AFTER_S
from tests.helpers.app import ACCEPT_JSON
from tests.helpers.database import database_outage

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages

HX = {"HX-Request": "true"}
REFRESH = re.compile(r'<meta http-equiv="refresh" content="(\d+)">')


async def pool_notices_the_outage(client: httpx.AsyncClient) -> None:
    """Let the app's pooled connections read the server's goodbye before the next request.

    A connection that has read "terminating connection" but not yet the end of its socket
    answers the next query with asyncpg's InternalClientError, which app.db does not count
    as the database being unavailable (a 500, not a 503; left for app.db to decide).
    """
    await asyncio.sleep(0.5)
    assert (await asyncio.wait_for(client.get("/healthz"), 10)).status_code == 503


def head_of(html: str) -> str:
    return html.split("</head>", 1)[0]


@pytest.mark.slow
async def test_the_503_page_says_when_to_come_back_and_refreshes_itself(client, database_url):
    async with database_outage(database_url):
        await pool_notices_the_outage(client)
        page = await asyncio.wait_for(client.get("/stories"), 10)
        poll = await asyncio.wait_for(client.get("/stories/jobs/1", headers=HX), 10)
        as_json = await asyncio.wait_for(client.get("/stories", headers=ACCEPT_JSON), 10)
    assert page.status_code == 503
    assert page.headers["retry-after"] == str(DATABASE_RETRY_AFTER_S)
    refresh = REFRESH.search(head_of(page.text))  # in the head, so it works without JavaScript
    assert refresh and int(refresh.group(1)) == DATABASE_RETRY_AFTER_S
    assert "be reached right now" in page.text
    # A card's poll meets the same page (app.js leaves the card as it is) and the same header.
    assert poll.status_code == 503 and poll.headers["retry-after"] == str(DATABASE_RETRY_AFTER_S)
    assert as_json.status_code == 503
    assert as_json.headers["retry-after"] == str(DATABASE_RETRY_AFTER_S)


@pytest.mark.slow
async def test_a_503_answer_to_a_form_post_does_not_refresh_into_a_get(client, database_url):
    async with database_outage(database_url):
        await pool_notices_the_outage(client)
        page = await asyncio.wait_for(
            client.post("/stories/1/favourite", data={"favourite": "1"}), 10
        )
    assert page.status_code == 503
    assert page.headers["retry-after"] == str(DATABASE_RETRY_AFTER_S)
    assert 'http-equiv="refresh"' not in page.text  # it would reload a POST's address with a GET


@pytest.mark.slow
async def test_pages_that_are_fine_do_not_refresh(client):
    page = await client.get("/stories")
    assert page.status_code == 200 and 'http-equiv="refresh"' not in page.text
    missing = await client.get("/stories/999999")
    assert missing.status_code == 404
    assert "retry-after" not in missing.headers and 'http-equiv="refresh"' not in missing.text
