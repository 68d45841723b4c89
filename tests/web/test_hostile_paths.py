"""Paths and bodies no page expects: NUL and non-ASCII in any path, ids past bigint, a
client that leaves mid-body. Each gets a clear answer (404, 200, one INFO line), never a
5xx, a dropped connection or a traceback in the log."""

from __future__ import annotations

import logging
import re

import pytest

from tests.helpers.app import PASSWORD, serve

pytestmark = pytest.mark.anyio

PATHS = ["/%00", "/stories/%00", "/stories/1%00", "/stories/jobs/%00", "/static/%00",
         "/static/style.css%00", "/stories/%E2%98%83", "/static/%E2%98%83", "/%E2%98%83",
         "/stories/jobs/%E2%98%83/cancel", "/sw.js%00", "/stories/1/markdown%00",
         "/children/%00", "/children/9223372036854775808", "/children/1%00/delete"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.slow
async def test_nul_and_non_ascii_in_a_path_is_not_found(client, path):
    response = await client.get(path)
    assert response.status_code in (404, 405), (path, response.status_code)
    posted = await client.post(path, json={"name": "Mia"})
    assert posted.status_code in (404, 405), (path, posted.status_code)


async def test_an_id_past_bigint_in_a_query_is_ignored(client):
    response = await client.get("/stories?deleted=9223372036854775808")
    assert response.status_code == 200
    assert (await client.get("/stories?deleted=%00")).status_code == 200


async def test_a_client_that_leaves_mid_body_is_one_info_line(make_app, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    app = make_app()
    async with serve(app):
        await _post_then_leave(app, "/stories/generate")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    assert "Traceback" not in caplog.text
    assert "event=client_disconnected" in caplog.text


@pytest.mark.parametrize("path", ["/stories/%E2%98%83", "/%00", "/stories/%0D%0Aset-cookie:x",
                                  "/stories/1%00/markdown"])
async def test_signed_out_htmx_gets_an_encoded_redirect_for_any_path(make_app, path):
    async with serve(make_app(household_password=PASSWORD, allow_open=False)) as http:
        page = await http.get(path)
        htmx = await http.get(path, headers={"HX-Request": "true"})
    assert page.status_code == 303
    assert htmx.status_code == 401
    redirect = htmx.headers["hx-redirect"]
    # What a header can carry (h11 refuses NUL and line breaks; Latin-1 only): plain ASCII.
    assert re.fullmatch(r"[\x21-\x7e]+", redirect), redirect
    assert redirect.startswith("/login?next=/") and "set-cookie" not in htmx.headers
    assert redirect == page.headers["location"]


async def test_signed_out_a_form_cut_short_is_no_error(make_app, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    app = make_app(household_password=PASSWORD, allow_open=False)
    async with serve(app):
        await _post_then_leave(app, "/login")
        await _post_then_leave(app, "/stories/generate")
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert "Traceback" not in caplog.text
    assert "event=client_disconnected path=/login" in caplog.text


async def _post_then_leave(app, path: str) -> None:
    messages = [{"type": "http.request", "body": b"password=abc", "more_body": True}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        pass

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
             "server": ("testserver", 80), "state": {},
             "headers": [(b"host", b"testserver"), (b"origin", b"http://testserver"),
                         (b"content-type", b"application/x-www-form-urlencoded"),
                         (b"content-length", b"400")]}
    await app(scope, receive, send)
