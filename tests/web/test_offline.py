"""On the home screen and offline, over HTTP: the web app manifest and its icons, linked from
every page; the service worker at /sw.js, versioned by the static files; the CSP allows
both. (In a real browser: tests/browser/test_browser_offline.py.)"""

from __future__ import annotations

import json
import re
import shutil
import struct

import pytest

from app.web.assets import Assets
from app.web.offline import service_worker_source, shell_urls, static_version
from app.web.templates import STATIC_DIR
from tests.helpers.app import serve, wait_for_job
from tests.helpers.forms import finished_story

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages

MANIFEST = "/static/manifest.webmanifest"
PASSWORD = "moonbeam"


def links(page: str, tag: str) -> bool:
    """`tag` is in the page, its /static/ URL fingerprinted (`?v=...`, the templates) or
    plain (a page from an earlier deploy)."""
    before, url, after = re.split(r'(?<=")(/static/[^"]+)(?=")', tag, maxsplit=1)
    pattern = re.escape(before + url) + r"(\?v=[0-9a-f]+)?" + re.escape(after)
    return re.search(pattern, page) is not None


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


async def test_the_manifest_is_valid_with_its_icons(client):
    response = await client.get(MANIFEST)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/manifest+json")
    manifest = json.loads(response.text)
    assert manifest["name"] == "Bedtime Stories" and manifest["short_name"]
    assert manifest["start_url"] == "/" and manifest["scope"] == "/"
    assert manifest["display"] == "standalone"
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"])
    assert manifest["theme_color"] == manifest["background_color"] == "#16120e"  # dark
    sizes = set()
    for icon in manifest["icons"]:
        image = await client.get(icon["src"])
        assert image.status_code == 200, icon
        if icon["type"] == "image/png":
            width, height = png_size(image.content)
            assert icon["sizes"] == f"{width}x{height}"
            sizes.add((width, icon.get("purpose", "any")))
    assert {(192, "any"), (512, "any"), (512, "maskable")} <= sizes
    touch = await client.get("/static/icons/apple-touch-icon.png")
    assert png_size(touch.content) == (180, 180)


async def test_every_page_links_the_manifest_and_the_touch_icon(make_app, client):
    story_id = await finished_story(client)
    job_id = (await client.get(f"/stories/{story_id}", headers={"Accept": "application/json"})
              ).json()["job_id"]
    assert (await wait_for_job(client, job_id))["status"] == "completed"
    pages = ["/", "/stories", f"/stories/{story_id}", f"/stories/jobs/{job_id}",
             "/stories/deleted", "/nowhere", "/offline", "/static/offline.html"]
    for path in pages:
        page = (await client.get(path)).text
        assert links(page, f'<link rel="manifest" href="{MANIFEST}">'), path
        touch_icon = '<link rel="apple-touch-icon" href="/static/icons/apple-touch-icon.png">'
        assert links(page, touch_icon), path
        assert links(page, '<script src="/static/shelf.js" defer></script>'), path
    async with serve(make_app(household_password=PASSWORD, allow_open=False)) as signed_out:
        login = (await signed_out.get("/login")).text
        assert links(login, f'<link rel="manifest" href="{MANIFEST}">')
        # What a browser fetches without the session is served before signing in.
        for path in (MANIFEST, "/sw.js", "/static/icons/icon-192.png"):
            assert (await signed_out.get(path)).status_code == 200, path


async def test_the_service_worker_is_served_from_the_root_fresh_and_versioned(client):
    response = await client.get("/sw.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert response.headers["cache-control"] == "no-cache"
    source = response.text
    assert "__VERSION__" not in source and "__SHELL__" not in source
    version = re.search(r'var VERSION = "([0-9a-f]{16})";', source).group(1)
    assets = Assets(STATIC_DIR)
    assert version == static_version(assets)
    shell = json.loads(re.search(r"var SHELL = (\[.*?\]);", source).group(1))
    assert assets.urls["style.css"] in shell and 'var OFFLINE_PAGE = "/offline";' in source
    assert (await client.get("/offline")).status_code == 200  # kept at install, beside the shell
    assert not [url for url in shell if url.startswith("/static/sw.js")]
    for url in shell:
        assert (await client.get(url)).status_code == 200, url
    csp = response.headers["content-security-policy"]
    assert "worker-src 'self'" in csp and "manifest-src 'self'" in csp
    assert "script-src 'self'" in csp and "unsafe" not in csp


def test_a_deploy_that_changes_a_static_file_changes_the_version(tmp_path):
    copy = tmp_path / "static"
    shutil.copytree(STATIC_DIR, copy)
    before = static_version(Assets(copy))
    assert before == static_version(Assets(STATIC_DIR))
    (copy / "style.css").write_text((copy / "style.css").read_text() + "\n.new { margin: 0; }\n")
    after = static_version(Assets(copy))
    assert after != before
    assert f'"{after}"' in service_worker_source(Assets(copy))
    # The same files, but style.css at a new URL (its new content's hash).
    changed = [url for url in shell_urls(Assets(STATIC_DIR)) if url not in shell_urls(Assets(copy))]
    assert [url.split("?")[0] for url in changed] == ["/static/style.css"]


def test_the_service_worker_never_keeps_posts_job_cards_or_fragments():
    source = (STATIC_DIR / "sw.js").read_text()
    assert 'if (request.method !== "GET") return;' in source
    assert 'if (request.headers.get("HX-Request")) return;' in source
    assert "STORY_PAGE = /^\\/stories\\/\\d+$/" in source  # job pages are /stories/jobs/N
    assert "no-store" in source  # a page that says not to be stored (the form) is not
