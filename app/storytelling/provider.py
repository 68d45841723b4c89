"""The model provider's client, made on first use.

    client = ProviderClient(api_key=..., base_url=..., max_retries=0, timeout_s=120)
    await client().chat.completions.create(...)     # the openai.AsyncOpenAI, made once
    await warm_up()                                  # after start-up, in a thread
    await client.aclose()
    never_sent(error)                                # True: the request never left

Importing the `openai` library takes most of a second, longer than the rest of start-up
put together. A platform that stops idle apps starts this one on a family's first tap, so
start-up does not wait for it: once the app serves, `warm_up` imports it in a thread, and
the first story finds it loaded.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from typing import TYPE_CHECKING, Any

from app.logs import log

if TYPE_CHECKING:
    import openai

# A provider that does not even accept the connection in this long is down: said at once,
# not after the whole call's limit.
CONNECT_TIMEOUT_S = 10.0


class ProviderClient:
    """`timeout_s` bounds a whole call; connecting has CONNECT_TIMEOUT_S of it."""

    def __init__(self, *, timeout_s: float, **options: Any) -> None:
        self.timeout_s = timeout_s
        self.options = options
        self._client: openai.AsyncOpenAI | None = None

    def __call__(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai

            from app.storytelling.capped_transport import capped_http_client

            timeout = openai.Timeout(self.timeout_s, connect=min(CONNECT_TIMEOUT_S, self.timeout_s))
            # Every body read with a limit (app/storytelling/capped.py).
            self._client = openai.AsyncOpenAI(timeout=timeout, http_client=capped_http_client(),
                                              **self.options)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


def never_sent(error: BaseException) -> bool:
    """Whether the error is (or was caused by: the library wraps it) a connection that
    never opened, refused or timed out while connecting: httpcore raises these before a
    byte of the request is written, so the provider never saw it and billed nothing (the
    capped transport has sent it once more already: app/storytelling/capped_transport.py)."""
    import httpx2 as httpx

    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, httpx.ConnectError | httpx.ConnectTimeout):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


async def warm_up() -> None:
    """Import the openai library off the event loop, so no request waits for it."""
    started = time.monotonic()
    await asyncio.to_thread(importlib.import_module, "openai")
    log("provider_loaded", library="openai", import_s=f"{time.monotonic() - started:.2f}")
