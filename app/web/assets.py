"""The static files, served from memory: fingerprinted URLs, a year's caching, br/gzip, ETags.

    assets = Assets(STATIC_DIR)          # once per app: reads every file (about 150 KB)
    assets.urls["style.css"]             # "/static/style.css?v=3f2a1b9c0d"
    Starlette(routes=[*assets.routes()]) # GET/HEAD /static/{path}
    {{ static["style.css"] }}            # in a template (make_templates adds the dict)
    {{ inline["moon.svg"] }}             # a small image as a data: URL, in the page itself

The `v` in a URL is the file's content hash, so a URL names one content for ever: asked
with the current `v`, a file is `immutable` for a year; asked without one, or with another
(a page from the previous deploy, static/offline.html's plain links), it is the current
content with `no-cache`. Either way the ETag (the same hash) makes a revalidation a 304.

Text files go out as brotli or gzip, as the client's Accept-Encoding allows, compressed the
first time each is asked for and kept: in a thread, so a slow brotli of htmx never holds
the event loop, and never at start-up, whose time is measured. The ETag is the same for
every encoding: `Vary: Accept-Encoding` keeps caches apart, If-None-Match compares weakly
anyway, and no Range requests are served that could splice two encodings.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import gzip
import hashlib
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.errors import NotFound
from app.i18n import N_

try:  # optional: without it, gzip alone (which every browser takes)
    import brotli
except ImportError:  # pragma: no cover - exercised by uninstalling brotli
    brotli = None

URL_PREFIX = "/static"
HASH_CHARS = 10  # of sha256 hex: plenty to tell one deploy's file from the next
CACHE_MAX_AGE_S = 365 * 24 * 3600
IMMUTABLE = f"public, max-age={CACHE_MAX_AGE_S}, immutable"
REVALIDATE = "no-cache"  # keep it, but ask (a 304 with the ETag) before each use
GZIP_LEVEL = 9  # the files are static and compressed once per process: the best is cheap
BROTLI_QUALITY = 11
# Named here rather than guessed from the machine's /etc/mime.types, which varies by host.
CONTENT_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
}
INLINE_MAX_BYTES = 512  # an SVG this small goes in the page as a data: URL (Assets.inline)
CSS_COMMENT = re.compile(rb"/\*.*?\*/", re.DOTALL)
JS_COMMENT = CSS_COMMENT  # /* ... */, the same in both
# Text compresses; PNG is compressed already.
COMPRESSIBLE_TYPES = (
    "text/", "image/svg+xml", "application/json", "application/manifest+json",
    "application/javascript",
)


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    content_type: str
    digest: str  # sha256 of the body, hex

    @property
    def hash(self) -> str:
        return self.digest[:HASH_CHARS]

    @property
    def etag(self) -> str:
        return f'"{self.hash}"'

    @property
    def compressible(self) -> bool:
        return self.content_type.startswith(COMPRESSIBLE_TYPES)


def without_comments(css: bytes) -> bytes:
    """A stylesheet as browsers need it: without its comments, indentation and blank lines
    (a sixth of style.css after compression). Ours has no `/*` inside a string or url()."""
    text = CSS_COMMENT.sub(b"", css)
    return b"\n".join(line.strip() for line in text.splitlines() if line.strip()) + b"\n"


def script_without_comments(js: bytes) -> bytes:
    """One of our own scripts as browsers need it: without its comments, indentation and
    blank lines (a third of app.js and shelf.js after compression). What goes: `/* */`
    comments, whole-line `//` ones, and a `//` one after code (two spaces before it, as
    ours are written) when the code before it closes every quote it opens. Ours have no
    `/*` inside a string or a regex, and no template literal or line continued by a
    backslash that a line could be part of. A comment that spanned lines leaves a line
    break, which JavaScript's semicolon insertion may count on."""
    text = JS_COMMENT.sub(lambda m: b"\n" if b"\n" in m.group() else b" ", js)
    kept = []
    for line in text.splitlines():
        line = line.strip()
        code, mark, _ = line.partition(b"  // ")
        if mark and code.count(b'"') % 2 == 0 and code.count(b"'") % 2 == 0:
            line = code.rstrip()
        if line and not line.startswith(b"//"):
            kept.append(line)
    return b"\n".join(kept) + (b"\n" if js.endswith(b"\n") else b"")


def as_served(name: str, body: bytes) -> bytes:
    """A static file's bytes as they are sent: our stylesheet and scripts made lean, the
    vendored (already minified) htmx and everything else as they are."""
    if name.endswith(".css"):
        return without_comments(body)
    if name.endswith(".js") and not name.endswith(".min.js"):
        return script_without_comments(body)
    return body


def content_type(name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix in CONTENT_TYPES:
        return CONTENT_TYPES[suffix]
    guessed = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return f"{guessed}; charset=utf-8" if guessed.startswith("text/") else guessed


def available_encodings() -> tuple[str, ...]:
    """What this process can send, best first."""
    return ("br", "gzip") if brotli is not None else ("gzip",)


# Kept per process, not per app: each app a process makes (the tests make hundreds) serves
# the same files, and brotli at its best quality is the costliest thing an app does once.
@functools.lru_cache(maxsize=64)
def compress(body: bytes, encoding: str) -> bytes:
    if encoding == "br":
        compressed: bytes = brotli.compress(body, quality=BROTLI_QUALITY)
        return compressed
    # mtime=0: the same bytes on every process and every deploy of the same file.
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)


def choose_encoding(accept_encoding: str, available: tuple[str, ...]) -> str | None:
    """The coding to send (None: identity), from an Accept-Encoding header.

        choose_encoding("gzip, deflate, br", ("br", "gzip"))   # "br"
        choose_encoding("br;q=0, *", ("br", "gzip"))           # "gzip"
        choose_encoding("identity", ("br", "gzip"))            # None

    The client's highest q wins; on a tie, `available`'s order (brotli is smaller). `q=0`
    refuses a coding, `*` stands for any not named, and a coding ranked below an explicit
    `identity` is not sent.
    """
    weights: dict[str, float] = {}
    for part in accept_encoding.split(","):
        coding, _, params = part.partition(";")
        coding = coding.strip().lower()
        if not coding:
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        weights["gzip" if coding == "x-gzip" else coding] = q if 0.0 <= q <= 1.0 else 0.0
    best, best_q = None, 0.0
    for coding in available:
        q = weights.get(coding, weights.get("*", 0.0))
        if q > best_q and q >= weights.get("identity", 0.0):
            best, best_q = coding, q
    return best


def etag_matches(if_none_match: str, etag: str) -> bool:
    """If-None-Match against our ETag: a list, `*`, and weak tags (`W/"..."`) all count."""
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == etag:
            return True
    return False


class Assets:
    """Every file under a directory, in memory, and the route that serves them."""

    def __init__(self, directory: Path, *, prefix: str = URL_PREFIX) -> None:
        self.prefix = prefix
        self.files: dict[str, StaticFile] = {}
        for path in sorted(p for p in directory.rglob("*") if p.is_file()):
            name = path.relative_to(directory).as_posix()
            body = as_served(name, path.read_bytes())
            self.files[name] = StaticFile(
                body, content_type(name), hashlib.sha256(body).hexdigest()
            )
        # Data, not a function, for the templates: {{ static["style.css"] }}.
        self.urls: dict[str, str] = {
            name: f"{prefix}/{name}?v={file.hash}" for name, file in self.files.items()
        }
        # A small image costs a page more as a response of its own (headers and all, a
        # third of a KB) than as a data: URL in the page (the CSP allows data: images):
        # {{ inline["moon.svg"] }}, for the icon every page shows.
        self.inline: dict[str, str] = {
            name: f"data:{file.content_type};base64,{base64.b64encode(file.body).decode()}"
            for name, file in self.files.items()
            if file.content_type == "image/svg+xml" and len(file.body) <= INLINE_MAX_BYTES
        }
        self.encodings = available_encodings()
        # (name, encoding) -> the compressed body, or None when it is no smaller.
        self._encoded: dict[tuple[str, str], bytes | None] = {}
        self._compressing: dict[tuple[str, str], asyncio.Task[bytes]] = {}

    def routes(self) -> list[Route]:
        # Named "static", as the Mount it replaces was: url_for("static", path=...) still works.
        return [Route(f"{self.prefix}/{{path:path}}", self.serve, methods=["GET", "HEAD"],
                      name="static")]

    async def serve(self, request: Request) -> Response:
        name = request.path_params["path"]
        # A dictionary lookup, never the filesystem: `../` can name nothing outside it.
        file = self.files.get(name)
        if file is None:
            raise NotFound(N_("Nothing here by that address."))
        current = request.query_params.get("v") == file.hash
        headers = {"ETag": file.etag, "Cache-Control": IMMUTABLE if current else REVALIDATE}
        if file.compressible:
            headers["Vary"] = "Accept-Encoding"
        if etag_matches(request.headers.get("if-none-match", ""), file.etag):
            return Response(status_code=304, headers=headers)
        body = file.body
        encoding = None
        if file.compressible:
            encoding = choose_encoding(request.headers.get("accept-encoding", ""), self.encodings)
        if encoding is not None:
            encoded = await self.encoded(name, encoding)
            if encoded is not None:
                body = encoded
                headers["Content-Encoding"] = encoding
        headers["Content-Type"] = file.content_type
        headers["Content-Length"] = str(len(body))
        return Response(b"" if request.method == "HEAD" else body, headers=headers)

    async def encoded(self, name: str, encoding: str) -> bytes | None:
        """The file compressed, or None if that is no smaller: compressed once, then kept."""
        key = (name, encoding)
        if key in self._encoded:
            return self._encoded[key]
        task = self._compressing.get(key)
        if task is None:
            body = self.files[name].body
            task = asyncio.create_task(asyncio.to_thread(compress, body, encoding))
            self._compressing[key] = task
            task.add_done_callback(lambda done: self._keep(key, done))
        # Shielded: a client that leaves mid-compression must not cancel it for the others
        # waiting on it (the callback keeps the result even if every one of them left).
        compressed = await asyncio.shield(task)
        return compressed if len(compressed) < len(self.files[name].body) else None

    def _keep(self, key: tuple[str, str], task: asyncio.Task[bytes]) -> None:
        self._compressing.pop(key, None)
        if not task.cancelled() and task.exception() is None:  # else: tried again next time
            compressed = task.result()
            smaller = len(compressed) < len(self.files[key[0]].body)
            self._encoded[key] = compressed if smaller else None
