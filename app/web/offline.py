"""Offline: the service worker, stamped with this deploy's version.

    GET  /sw.js                    the service worker, in the request's language
    GET  /offline                  the page it shows with no network (and at the old
                                   /static/offline.html, for a worker installed before)

It is served from the site's root so that its scope is the whole site, with
`Cache-Control: no-cache` so a browser always asks whether it changed. Its version is a
hash of the static files, so every deploy that changes them installs a new worker, which
replaces the old caches. Its few words (the offline fallback) are the request's language:
a household that changes language gets a new worker, which keeps the offline page anew.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from pathlib import PurePosixPath

from starlette.requests import Request
from starlette.responses import Response

from app.i18n import page_words
from app.web.assets import Assets
from app.web.templates import render

# What the service worker keeps from the first visit on (the app shell): every static file
# a page may need, but not the worker's own source.
SHELL_SUFFIXES = (".css", ".js", ".svg", ".png", ".webmanifest")
OFFLINE_PAGE = "/offline"
OFFLINE_ALIAS = "/static/offline.html"  # where it was a static file, for workers kept since
_WORDS = '{"__WORDS__": 0}'
SERVICE_WORKER = "sw.js"


def static_version(assets: Assets) -> str:
    """A hash over every static file's name and content hash: changes whenever a deploy
    changes any of them."""
    digest = hashlib.sha256()
    for name, file in sorted(assets.files.items()):
        digest.update(f"{name}\0{file.digest}\n".encode())
    return digest.hexdigest()[:16]


def shell_urls(assets: Assets) -> list[str]:
    """The app shell the service worker keeps: the static files a page may need, at the
    fingerprinted URLs the pages use, so `cache.addAll` finds them in the HTTP cache."""
    return [
        url for name, url in sorted(assets.urls.items())
        if PurePosixPath(name).suffix in SHELL_SUFFIXES and name != SERVICE_WORKER
    ]


def service_worker_source(assets: Assets) -> str:
    """static/sw.js with its version and shell filled in."""
    source = assets.files[SERVICE_WORKER].body.decode()
    return source.replace('"__VERSION__"', json.dumps(static_version(assets))).replace(
        '["__SHELL__"]', json.dumps(shell_urls(assets))
    )


def service_worker(assets: Assets) -> Callable[[Request], Awaitable[Response]]:
    """GET /sw.js, its source made once per app (the static files change only by deploy)."""
    source = service_worker_source(assets)

    async def serve(request: Request) -> Response:
        return Response(source.replace(_WORDS, page_words() or "{}"),
                        media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    return serve


async def offline_page(request: Request) -> Response:
    """GET /offline: the page the service worker keeps for when there is no network, in the
    request's language (the worker fetches it at install)."""
    return render(request, "offline.html", headers={"Cache-Control": "no-cache"})
