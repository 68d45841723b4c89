"""Compressed pages and JSON, and validators on pages: a pure ASGI middleware.

    Starlette(..., middleware=[Middleware(CompressionMiddleware), Middleware(SecurityMiddleware)])
    validate_as(request.scope, masked_token, raw_token)   # a render's per-response bytes

What it touches: a `text/html` or `application/json` response that arrives whole (a
Content-Length, one body message) with no Content-Encoding. Everything else passes as it
came: streamed bodies, anything already encoded, and /static/ (app/web/assets.py compresses
those files once, ahead of time) without even a look at its headers.

- A GET/HEAD 200 page gets a weak ETag (a hash of its body) and, unless it says otherwise
  (the home page's `no-store`), `Cache-Control: no-cache`: the browser keeps it but asks
  first, and an If-None-Match that matches is answered 304 with no body.
- A body of COMPRESS_MIN_BYTES or more goes out gzip-compressed when the client's
  Accept-Encoding allows it, and says `Vary: Accept-Encoding` whichever it got.

BREACH: a compressed page holding a constant secret next to text an attacker chooses (the
library search) leaks the secret through its compressed length. The one secret a page
holds is the CSRF token, and every render masks it afresh (app.web.access.page_context),
so no compressed page holds a constant secret.

The cost when there is nothing to do is a look at the response's headers: no copy, no
hash (about 2 us a request). Compression runs inline, on the event loop: our bodies are
tens of KB at most, and a 9 KB story page takes about 0.15 ms at GZIP_LEVEL. Not Starlette's
GZipMiddleware: it only compresses, so the ETag would need a second buffering layer, and it
builds a GzipFile for every compressed response where one zlib call does.
"""

from __future__ import annotations

import hashlib
import zlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.assets import choose_encoding, etag_matches

PASS_THROUGH_PREFIX = "/static/"  # app/web/assets.py's own, precompressed, with its own ETags
COMPRESS_MIN_BYTES = 1024  # below about one packet, compressing saves no round trip
# Measured on our own pages (story 7-11 KB, library 40 KB, home 15 KB): level 5 is as small
# as 6 (within 0.2%) for up to 15% less CPU; 9 is no smaller. brotli at quality 4 saves 2%
# on a story page (12-15% on library and home) for 10-20% more CPU on a story page, and
# quality 5 saves 8% for 1.6 times the CPU; browsers offer br only over https anyway. So
# gzip alone, which every client takes: one code path, and the cheaper one.
GZIP_LEVEL = 5
# zlib's gzip container is 16 + the window's bits. A window as large as the body, no
# larger, and a hash table in proportion (zlib's default pairs 15 bits with memLevel 8):
# the same bytes out, but a 3 KB poll answer no longer sets up (and zeroes) the 256 KB a
# 32 KB window takes, which cost two thirds of its compression time (bench/profile.py).
GZIP = 16
WINDOW_BITS = range(9, 16)  # what zlib's deflate takes
ENCODINGS = ("gzip",)
# sha256, cut to 128 bits: no two pages of ours will ever share one. Not blake2b, meant to
# be the faster: OpenSSL's sha256 uses the SHA instructions of current x86 servers, and on
# a 4 KB page measured about 4 us against blake2b's 7-10.
ETAG_HEX_CHARS = 32
NO_CACHE = b"no-cache"
# Where a render records bytes that differ on every response but are not content.
VALIDATE_AS = "validate_as"
HTML = b"text/html"
JSON = b"application/json"


def validate_as(scope: Scope, shown: str, stable: str) -> None:
    """Compute this response's ETag as if `shown` read `stable` wherever it appears.

        validate_as(request.scope, masked_token, raw_token)

    For bytes that change on every render without the page changing (a masked CSRF token):
    without this, such a page would never revalidate to a 304.
    """
    swaps = scope.setdefault("state", {}).setdefault(VALIDATE_AS, {})
    swaps[shown.encode()] = stable.encode()


def page_etag(body: bytes, swaps: dict[bytes, bytes] | None = None) -> str:
    """`W/"<32 hex>"`: weak, as the gzip and identity forms of a page share it."""
    for shown, stable in (swaps or {}).items():
        body = body.replace(shown, stable)
    return f'W/"{hashlib.sha256(body).hexdigest()[:ETAG_HEX_CHARS]}"'


def compress(body: bytes, encoding: str) -> bytes:
    assert encoding == "gzip", encoding
    bits = min(max((len(body) - 1).bit_length(), WINDOW_BITS[0]), WINDOW_BITS[-1])
    deflate = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP + bits, bits - 7)
    return deflate.compress(body) + deflate.flush()


def merge_vary(headers: list[tuple[bytes, bytes]], field: bytes) -> list[tuple[bytes, bytes]]:
    """The headers with `field` in their Vary: one Vary header, no name twice.

        merge_vary([(b"vary", b"Accept, HX-Request")], b"Accept-Encoding")
        # [(b"vary", b"Accept, HX-Request, Accept-Encoding")]
    """
    merged = list(headers)  # a copy: the list may be a Response's own raw_headers
    for index, (name, value) in enumerate(merged):
        if name.lower() == b"vary":
            present = {part.strip().lower() for part in value.split(b",")}
            if field.lower() not in present and b"*" not in present:
                merged[index] = (name, value + b", " + field)
            return merged
    merged.append((b"vary", field))
    return merged


def request_header(scope: Scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            header: str = value.decode("latin-1")
            return header
    return ""


class CompressionMiddleware:
    """ETags on pages and gzip on HTML and JSON, as the module's docstring says."""

    def __init__(self, app: ASGIApp, *, minimum_bytes: int = COMPRESS_MIN_BYTES) -> None:
        self.app = app
        self.minimum_bytes = minimum_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(PASS_THROUGH_PREFIX):
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Reply(scope, send, self.minimum_bytes).send)


class _Reply:
    """One response on its way out: passed straight on, or its start held until its body
    comes, when there is an ETag to compute or a body to compress."""

    __slots__ = ("scope", "downstream", "minimum_bytes", "held", "passing", "validate",
                 "encoding", "etag", "cache_control")

    def __init__(self, scope: Scope, send: Send, minimum_bytes: int) -> None:
        self.scope = scope
        self.downstream = send
        self.minimum_bytes = minimum_bytes
        self.held: Message | None = None
        self.passing = False
        self.validate = False  # a page: give it an ETag, answer If-None-Match
        self.encoding: str | None = None
        self.etag: bytes | None = None  # the app's own, if it set one
        self.cache_control = False  # the app set its own

    async def send(self, message: Message) -> None:
        if self.passing:
            await self.downstream(message)
        elif message["type"] == "http.response.start":
            if self._worth_holding(message):
                self.held = message
            else:
                self.passing = True
                await self.downstream(message)
        elif self.held is None:  # e.g. Starlette's http.response.debug, before the start
            await self.downstream(message)
        elif message["type"] != "http.response.body" or message.get("more_body", False):
            # Streamed after all (or a pathsend): it goes as it comes.
            self.passing = True
            await self.downstream(self.held)
            await self.downstream(message)
        else:
            self.passing = True  # nothing more is ours to shape
            await self._finish(self.held, message.get("body", b""))

    def _worth_holding(self, start: Message) -> bool:
        """Decide from the headers alone; add Vary now (a pass-through keeps it too)."""
        content_type = length = None
        for name, value in start["headers"]:
            name = name.lower()
            if name == b"content-type":
                content_type = value.lower()
            elif name == b"content-length":
                length = value
            elif name == b"content-encoding":
                return False
            elif name == b"etag":
                self.etag = value
            elif name == b"cache-control":
                self.cache_control = True
        if length is None or content_type is None:  # streamed, or not ours to touch
            return False
        html = content_type.startswith(HTML)
        if not html and not content_type.startswith(JSON):
            return False
        self.validate = html and start["status"] == 200 and self.scope["method"] in (
            "GET", "HEAD")
        if length.isdigit() and int(length) >= self.minimum_bytes:
            # The response depends on Accept-Encoding whether or not this client takes gzip.
            start["headers"] = merge_vary(start["headers"], b"Accept-Encoding")
            self.encoding = choose_encoding(
                request_header(self.scope, b"accept-encoding"), ENCODINGS)
        return self.validate or self.encoding is not None

    async def _finish(self, start: Message, body: bytes) -> None:
        # Plain list operations, not MutableHeaders: this runs for every page.
        headers = list(start["headers"])
        if self.validate:
            etag = self.etag
            if etag is None:
                swaps = self.scope.get("state", {}).get(VALIDATE_AS)
                etag = page_etag(body, swaps).encode()
                headers.append((b"etag", etag))
            if not self.cache_control:
                headers.append((b"cache-control", NO_CACHE))
            if etag_matches(request_header(self.scope, b"if-none-match"),
                            etag.decode("latin-1").removeprefix("W/")):
                # Not modified: the validators, Vary and the security headers stay.
                headers = [(name, value) for name, value in headers
                           if name.lower() not in (b"content-length", b"content-type")]
                await self.downstream({**start, "status": 304, "headers": headers})
                await self.downstream({"type": "http.response.body", "body": b""})
                return
        if self.encoding is not None:
            compressed = compress(body, self.encoding)
            if len(compressed) < len(body):
                body = compressed
                headers = [(name, value) for name, value in headers
                           if name.lower() != b"content-length"]
                headers += [(b"content-length", str(len(body)).encode()),
                            (b"content-encoding", self.encoding.encode())]
        await self.downstream({**start, "headers": headers})
        await self.downstream({"type": "http.response.body", "body": body})
