"""Every body the provider sends, read with a limit: past BODY_MAX_BYTES the reading stops,
before the rest is ever held in memory.

    client = openai.AsyncOpenAI(http_client=capped_http_client())
    # a body over the limit: BodyTooLarge while it is read (the connection is dropped)

A picture is 4 MB at most (base64 in JSON: about 5.4 MB), a whole story's stream well under
1 MB: a server that sends 50 MB is not answering, and is not read to the end. Bodies come
uncompressed (`Accept-Encoding: identity`), so the limit counts what would be held; a
compressed one, sent anyway, is refused too (its size once unpacked is unknown).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx  # the HTTP library the openai library is built on

BODY_MAX_BYTES = 8 * 1024 * 1024


class BodyTooLarge(ValueError):
    """The provider's answer is over BODY_MAX_BYTES (or compressed, against what was asked)."""


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


class CappedTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, each response's body read through the limit."""

    def __init__(self, limit: int = BODY_MAX_BYTES, **options: Any) -> None:
        self.inner = httpx.AsyncHTTPTransport(**options)
        self.limit = limit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "identity"
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


def too_large(error: BaseException) -> bool:
    """The error, or what caused it (the library wraps it), is a body over the limit."""
    while error is not None:
        if isinstance(error, BodyTooLarge):
            return True
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return False
