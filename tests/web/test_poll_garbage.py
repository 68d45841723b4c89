"""A poll leaves nothing for the garbage collector: every open page asks every 3 s, and a
render that left a reference cycle (a Jinja macro holds its template's context, and the
context the macro) kept the whole request (its scope, headers, middleware and card)
alive until a collection, which then ran every few dozen polls and cost the card poll a
fifth of its time against its floor (bench/cprofile_app.py, docs/performance.md). Held
by what the collector finds, not by a timing."""

from __future__ import annotations

import gc

import pytest
from jinja2.runtime import Context
from starlette.requests import Request

from tests.helpers.app import ACCEPT_JSON, serve
from tests.helpers.pictures import STORY_TEXT, picture_when, story_of

pytestmark = pytest.mark.anyio

POLLS = 20


async def asgi_get(app, path: str, headers: dict[str, str]) -> int:
    """One GET through the whole app (its middleware and all), with hand-made ASGI
    messages: nothing of a test client's own in what is left behind."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
        "headers": [(b"host", b"testserver"),
                    *((k.lower().encode(), v.encode()) for k, v in headers.items())],
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"]


@pytest.mark.parametrize("headers", [
    {"HX-Request": "true", "Accept-Encoding": "gzip"},  # the card an open page polls
    {"Accept": "application/json"},  # a client's poll
    {"Accept": "text/html"},  # the job's page
], ids=["card", "json", "page"])
async def test_a_poll_leaves_no_cycle_behind(make_app, fake_llm, headers):
    """A finished job's card, its story and picture in place: the card at its fullest."""
    fake_llm.story = STORY_TEXT
    app = make_app(illustrator="openai", image_model="fake-image")
    async with serve(app) as http:
        story_id = await story_of(http, {"prompt": "a humming whale", "child_name": "Mia"})
        assert (await picture_when(http, story_id))["status"] == "ready"
        story = (await http.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        path = f"/stories/jobs/{story['job_id']}"
        assert await asgi_get(app, path, headers) == 200  # templates compiled, caches warm
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(POLLS):
                assert await asgi_get(app, path, headers) == 200
            gc.collect()
            left = [type(thing) for thing in gc.garbage]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert Context not in left and Request not in left, {t.__qualname__ for t in left}
