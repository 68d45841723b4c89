"""The HTTP client that reads every provider body through capped.py's limit: httpx's own
transport, each response's body counted as it streams. Apart from capped.py so that start-up,
which needs only its error, does not load httpx (the provider's library loads it later).

    client = openai.AsyncOpenAI(http_client=capped_http_client())

It also sends again, once, a request that provably never left: one whose connection was
refused (or whose TLS handshake failed). httpcore raises ConnectError only while it
connects, before a byte of the request is written, so no provider saw it and nothing was
billed (`event=provider_reconnect`). Nothing else is sent again: a read timeout, a
connection reset or closed after the request was written, a 5xx may each have reached the
provider (the client's own retries stay off, `max_retries=0`). A kept-alive connection the
server closed while it was idle is not one of them: httpcore finds it closed (readable at
EOF) before it writes a request on it, and opens a new one.
"""

from __future__ import annotations

import functools
import logging
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx  # the HTTP library the openai library is built on

from app.logs import log
from app.storytelling.capped import BODY_MAX_BYTES, BodyTooLarge


class _CappedStream(httpx.AsyncByteStream):
    def __init__(self, stream: httpx.AsyncByteStream, limit: int) -> None:
        self.stream = stream
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self.stream:
            read += len(chunk)
            if read > self.limit:
                raise BodyTooLarge(f"the answer is over {self.limit // 2**20} MB")
            yield chunk

    async def aclose(self) -> None:
        await self.stream.aclose()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (its trusted certificates, SSL_CERT_FILE), made once per
    process: loading the certificates costs some 60 ms of CPU, which every client made its
    own copy of (an app's start-up check makes one, its provider another)."""
    return httpx.create_ssl_context()


class CappedTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, each response's body read through the limit."""

    def __init__(self, limit: int = BODY_MAX_BYTES, **options: Any) -> None:
        self.inner = httpx.AsyncHTTPTransport(**{"verify": tls_context(), **options})
        self.limit = limit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "identity"
        try:
            response = await self.inner.handle_async_request(request)
        except httpx.ConnectError as error:  # never left (the module's docstring): once more
            log("provider_reconnect", level=logging.WARNING, path=request.url.path,
                job_id=request.headers.get("x-story-job-id", "none"), error=repr(error))
            response = await self.inner.handle_async_request(request)
        declared = response.headers.get("content-length", "")
        encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
        if encoded or (declared.isdigit() and int(declared) > self.limit):
            await response.aclose()
            raise BodyTooLarge("the answer is compressed" if encoded else
                               f"the answer is over {self.limit // 2**20} MB")
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _CappedStream(response.stream, self.limit)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def capped_http_client(limit: int = BODY_MAX_BYTES) -> httpx.AsyncClient:
    """The openai library's own default client (its limits, redirects), reading capped."""
    import openai

    return openai.DefaultAsyncHttpxClient(transport=CappedTransport(limit))
