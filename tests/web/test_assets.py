"""Static files from memory (app/web/assets.py): fingerprinted URLs cached for a year, brotli or
gzip as the client accepts, ETag revalidation, nothing read from disk by a request's path;
and every page linking only URLs that answer. Over HTTP through the real app, plus the
Assets object on its own for what needs a static directory of the test's making."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import shutil
import threading

import brotli
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request

import app.web.assets
from app.web.assets import (
    IMMUTABLE,
    Assets,
    as_served,
    choose_encoding,
    script_without_comments,
    without_comments,
)
from app.web.templates import STATIC_DIR
from tests.helpers.app import serve
from tests.helpers.forms import finished_story

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages

TEXT_FILES = ("style.css", "app.js", "shelf.js", "htmx-2.0.11.min.js", "moon.svg")
FINGERPRINTED = re.compile(r"^/static/[\w./-]+\?v=[0-9a-f]{10}$")
# data-htmx: the htmx app.js fetches when the page needs it.
STATIC_LINK = re.compile(r'(?:href|src|data-htmx)="(/static/[^"]*)"')


def served(name: str) -> bytes:
    """A static file as it is sent: our stylesheet and scripts without their comments,
    else as it is."""
    return as_served(name, (STATIC_DIR / name).read_bytes())


@pytest.fixture
def assets() -> Assets:
    """What the app builds from the same directory: the same URLs and hashes."""
    return Assets(STATIC_DIR)


async def raw_get(
    client: httpx.AsyncClient, url: str, accept_encoding: str | None, **headers: str
) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent, not decoded (httpx would undo br and gzip).
    `accept_encoding=None` sends no Accept-Encoding at all."""
    request = client.build_request("GET", url, headers=headers)
    del request.headers["accept-encoding"]
    if accept_encoding is not None:
        request.headers["accept-encoding"] = accept_encoding
    response = await client.send(request, stream=True)
    try:
        return response, b"".join([chunk async for chunk in response.aiter_raw()])
    finally:
        await response.aclose()


# -- compression --------------------------------------------------------------------------


@pytest.mark.parametrize("name", TEXT_FILES)
async def test_text_is_sent_brotli_or_gzip_as_the_client_accepts(client, assets, name):
    original = served(name)
    for accept, encoding, decompress in [
        ("gzip, deflate, br, zstd", "br", brotli.decompress),  # what Chromium sends
        ("gzip, deflate", "gzip", gzip.decompress),
        ("br;q=0, gzip", "gzip", gzip.decompress),
    ]:
        response, sent = await raw_get(client, assets.urls[name], accept)
        assert response.status_code == 200
        assert response.headers["content-encoding"] == encoding, accept
        assert response.headers["vary"] == "Accept-Encoding"
        assert int(response.headers["content-length"]) == len(sent) < len(original)
        assert decompress(sent) == original


@pytest.mark.parametrize("accept", [None, "identity", "", "br;q=0, gzip;q=0", "zstd"])
async def test_text_is_sent_as_is_to_a_client_that_takes_no_compression(client, assets, accept):
    original = served("style.css")
    response, sent = await raw_get(client, assets.urls["style.css"], accept)
    assert "content-encoding" not in response.headers
    assert response.headers["vary"] == "Accept-Encoding"  # another client may get br
    assert sent == original and int(response.headers["content-length"]) == len(original)
    assert response.headers["content-type"] == "text/css; charset=utf-8"


async def test_png_is_never_compressed(client, assets):
    name = "icons/icon-512.png"
    response, sent = await raw_get(client, assets.urls[name], "gzip, deflate, br")
    assert response.headers["content-type"] == "image/png"
    assert "content-encoding" not in response.headers and "vary" not in response.headers
    assert sent == served(name)


@pytest.mark.parametrize("header, expected", [
    ("gzip, deflate, br", "br"),
    ("br;q=0.5, gzip", "gzip"),  # the client's preference first
    ("BR;Q=1.0", "br"),
    ("*", "br"),
    ("br;q=0, *", "gzip"),
    ("*;q=0", None),
    ("x-gzip", "gzip"),
    ("identity, gzip;q=0.5", None),  # ranked below the plain file
    ("gzip;q=nonsense, br;q=2", None),
    ("", None),
])
def test_accept_encoding_is_read_with_its_weights(header, expected):
    assert choose_encoding(header, ("br", "gzip")) == expected


def test_without_brotli_it_is_gzip(monkeypatch):
    monkeypatch.setattr(app.web.assets, "brotli", None)
    assert Assets(STATIC_DIR).encodings == ("gzip",)
    assert choose_encoding("gzip, deflate, br", ("gzip",)) == "gzip"
    assert choose_encoding("br", ("gzip",)) is None


async def test_a_compressed_copy_no_smaller_than_the_file_is_not_sent(tmp_path):
    (tmp_path / "tiny.js").write_bytes(b"a()")  # gzip's header alone is longer
    assets = Assets(tmp_path)
    async with serve(Starlette(routes=assets.routes())) as http:
        response, sent = await raw_get(http, assets.urls["tiny.js"], "gzip")
    assert sent == b"a()" and "content-encoding" not in response.headers
    assert response.headers["content-length"] == "3"
    assert response.headers["vary"] == "Accept-Encoding"


async def test_each_file_is_compressed_once_in_a_thread_when_first_asked(monkeypatch):
    calls: list[tuple[str, bool]] = []
    real = app.web.assets.compress

    def counting(body: bytes, encoding: str) -> bytes:
        calls.append((encoding, threading.current_thread() is threading.main_thread()))
        return real(body, encoding)

    monkeypatch.setattr(app.web.assets, "compress", counting)
    assets = Assets(STATIC_DIR)
    assert calls == []  # nothing at start-up
    first = await asyncio.gather(*(assets.encoded("app.js", "br") for _ in range(5)))
    again = await assets.encoded("app.js", "br")
    assert calls == [("br", False)]  # once for five at a time, and off the event loop
    assert again == first[0] and brotli.decompress(again) == served("app.js")
    await assets.encoded("app.js", "gzip")
    assert calls == [("br", False), ("gzip", False)]


# -- fingerprints and caching ---------------------------------------------------------------


def test_a_files_url_changes_with_its_content_and_only_then(tmp_path):
    copy = tmp_path / "static"
    shutil.copytree(STATIC_DIR, copy)
    before = Assets(copy).urls
    assert before == Assets(STATIC_DIR).urls  # the hash is of the content, not the place
    assert Assets(copy).urls == before  # rebuilt, nothing changed: the same URLs
    (copy / "style.css").write_text((copy / "style.css").read_text() + "\n.new { margin: 0; }\n")
    after = Assets(copy).urls
    assert after["style.css"] != before["style.css"]
    assert after["style.css"].split("?")[0] == before["style.css"].split("?")[0]
    assert {name: url for name, url in after.items() if name != "style.css"} == {
        name: url for name, url in before.items() if name != "style.css"
    }


async def test_only_the_current_fingerprint_is_cached_for_a_year(client, assets):
    url = assets.urls["style.css"]
    assert FINGERPRINTED.match(url)
    current = await client.get(url)
    assert current.headers["cache-control"] == IMMUTABLE
    assert "max-age=31536000" in IMMUTABLE and "immutable" in IMMUTABLE
    bare = await client.get("/static/style.css")
    stale = await client.get("/static/style.css?v=0123456789")  # the last deploy's page
    for response in (bare, stale):
        assert response.status_code == 200
        assert response.headers["cache-control"] == "no-cache"
        assert response.content == current.content == served("style.css")
        assert response.headers["etag"] == current.headers["etag"]


async def test_a_revalidation_with_the_etag_answers_304_without_a_body(client, assets):
    url = assets.urls["app.js"]
    etag = (await client.get(url)).headers["etag"]
    assert etag == '"' + url.rsplit("=", 1)[1] + '"'  # strong: the content hash, quoted
    for if_none_match in (etag, f"W/{etag}", f'"0000000000", {etag}', "*"):
        for path in (url, "/static/app.js"):
            response, sent = await raw_get(client, path, "br", **{"If-None-Match": if_none_match})
            assert response.status_code == 304, if_none_match
            assert sent == b"" and "content-length" not in response.headers
            assert response.headers["etag"] == etag
            assert response.headers["vary"] == "Accept-Encoding"
            expected = IMMUTABLE if path == url else "no-cache"
            assert response.headers["cache-control"] == expected
    other = await client.get(url, headers={"If-None-Match": '"0000000000"'})
    assert other.status_code == 200 and other.content == served("app.js")


async def test_head_answers_the_headers_without_the_body(client, assets):
    url = assets.urls["htmx-2.0.11.min.js"]
    _, sent = await raw_get(client, url, "br")
    head = await client.head(url, headers={"Accept-Encoding": "br"})
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-encoding"] == "br"
    assert head.headers["content-length"] == str(len(sent))
    assert head.headers["cache-control"] == IMMUTABLE
    refused = await client.post(url)
    assert refused.status_code == 405
    # httpx drops a HEAD's body on its own, so look at what the app itself would send.
    scope = {"type": "http", "method": "HEAD", "path": "/static/app.js", "query_string": b"",
             "headers": [(b"accept-encoding", b"gzip")], "path_params": {"path": "app.js"}}
    response = await assets.serve(Request(scope))
    assert response.body == b"" and response.headers["content-encoding"] == "gzip"
    assert response.headers["content-length"] == str(len(await assets.encoded("app.js", "gzip")))


@pytest.mark.parametrize("path", [
    "/static/nothing.css",
    "/static/",
    "/static/icons",
    "/static/%2E%2E/pyproject.toml",  # reaches the app as /static/../pyproject.toml
    "/static/icons/%2E%2E/%2E%2E/app/main.py",
    "/static/%2Fetc%2Fpasswd",
])
async def test_unknown_files_and_paths_out_of_the_directory_are_404(client, path):
    response = await client.get(path, headers={"Accept": "application/json"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"  # the app's own 404


# -- the pages and the service worker ---------------------------------------------------------


@pytest.mark.slow
async def test_every_page_links_only_fingerprinted_urls_that_answer(client, assets):
    story_id = await finished_story(client)
    checked: set[str] = set()
    for path in ("/", "/stories", f"/stories/{story_id}", "/stories/deleted", "/nowhere"):
        links = STATIC_LINK.findall((await client.get(path)).text)
        # Stylesheet, touch icon, manifest, two scripts and htmx for app.js to fetch (the
        # moon is a data: URL).
        assert len(links) >= 6, path
        assert 'src="data:image/svg+xml;base64,' in (await client.get(path)).text, path
        for url in links:
            assert FINGERPRINTED.match(url), (path, url)
            assert url in assets.urls.values(), url
            checked.add(url)
    for url in checked:
        response = await client.get(url)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == IMMUTABLE, url


async def test_the_service_worker_lists_the_fingerprinted_shell(client, assets):
    source = (await client.get("/sw.js")).text
    shell = json.loads(re.search(r"var SHELL = (\[.*?\]);", source).group(1))
    assert shell and all(FINGERPRINTED.match(url) for url in shell), shell
    assert assets.urls["style.css"] in shell and 'var OFFLINE_PAGE = "/offline";' in source
    for url in shell:
        response = await client.get(url)
        assert response.status_code == 200 and response.headers["cache-control"] == IMMUTABLE
    # Looked up whatever the ?v= (a page from an earlier deploy links another).
    assert source.count("SHELL_MATCH") == 3 and "ignoreSearch: true" in source


def test_a_stylesheet_is_sent_without_its_comments_and_with_every_rule():
    source = (STATIC_DIR / "style.css").read_bytes()
    sent = Assets(STATIC_DIR).files["style.css"].body
    assert b"/*" not in sent and b"*/" not in sent and len(sent) < len(source)
    assert sent.count(b"{") == source.count(b"{") and sent.count(b";") <= source.count(b";")
    assert without_comments(b"a {\n  /* why */\n  color: red; /* and\n  more */\n}\n") == (
        b"a {\ncolor: red;\n}\n")


def test_our_scripts_are_sent_without_their_comments_and_htmx_as_it_is():
    for name in ("app.js", "shelf.js", "wake.js", "reading.js", "sw.js"):
        source = (STATIC_DIR / name).read_bytes()
        sent = Assets(STATIC_DIR).files[name].body
        assert b"/*" not in sent and len(sent) < len(source), name
        assert b"`" not in source and b"\\\n" not in source, name  # what the stripping assumes
    htmx = "htmx-2.0.11.min.js"
    assert Assets(STATIC_DIR).files[htmx].body == (STATIC_DIR / htmx).read_bytes()
    # A comment over lines keeps a line break: `return` then `x` stays two statements.
    assert script_without_comments(b"  // why\nreturn /* a\n b */ x;  // why\n") == (
        b"return\nx;\n")
    # A `//` inside a string stays, and so does the rest of its line.
    assert script_without_comments(b'a("http://x");  // why\nb("  // x");\n') == (
        b'a("http://x");\nb("  // x");\n')


def theme_colours(theme: str) -> dict[str, str]:
    """A theme's custom properties (`--text: #b89a78`) as style.css sets them."""
    css = (STATIC_DIR / "style.css").read_text()
    block = re.search(r'\[data-theme="' + theme + r'"\][^{]*\{([^}]*)\}', css)
    assert block, theme
    return dict(re.findall(r"--([\w-]+):\s*(#[0-9a-f]{6})", block.group(1)))


def contrast(one: str, other: str) -> float:
    """WCAG 2's contrast ratio of two #rrggbb colours."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    lighter, darker = sorted((luminance(one), luminance(other)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_night_is_calmer_than_dark_and_still_readable_on_every_surface():
    night, dark = theme_colours("night"), theme_colours("dark")
    # Book-like: the story's text 7:1 or more on the page, but well below Dark's glare.
    assert 7 <= contrast(night["text"], night["bg"]) < 8 < contrast(dark["text"], dark["bg"])
    for surface in ("bg", "surface", "surface-2"):
        for ink in ("text", "muted", "accent", "danger"):
            assert contrast(night[ink], night[surface]) >= 4.5, (ink, surface)
    # One dim accent: no brighter than the text it sits beside.
    assert contrast(night["accent"], night["bg"]) <= contrast(night["text"], night["bg"])


def test_nights_primary_buttons_are_a_dim_outline_not_a_slab():
    css = (STATIC_DIR / "style.css").read_text()
    rule = re.search(r'\[data-theme="night"\] \.button\.primary[^{]*\{([^}]*)\}', css)
    assert rule and "background: none" in rule.group(1)
    assert "color: var(--accent)" in rule.group(1)
    assert '[data-theme="dark"] .button.primary' in rule.group(0)  # Dark's outlined too
