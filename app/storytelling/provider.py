"""The model provider's client, made on first use.

    client = ProviderClient(api_key=..., base_url=..., max_retries=0, timeout_s=120)
    await client().chat.completions.create(...)     # the openai.AsyncOpenAI, made once
    await warm_up()                                  # after start-up, in a thread
    await loaded()           # before `import openai` in a call: imported, off the loop
    await client.aclose()
    never_sent(error)                                # True: the request never left

Importing the `openai` library takes most of a second, longer than the rest of start-up
put together. A platform that stops idle apps starts this one on a family's first tap, so
start-up does not wait for it: once the app serves, `warm_up` imports it in a thread, and
the first story finds it loaded. A call asked for before then awaits `loaded()`: an
`import openai` on the event loop would wait there for the thread's import to end,
holding every request and heartbeat meanwhile (2.6 s on a busy machine: long enough for
a job's heartbeat to go stale and its own process's sweeper to end it).
"""

from __future__ import annotations

import asyncio
import enum
import importlib
import threading
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from app.failures import (
    ILLUSTRATOR_BUSY,
    ILLUSTRATOR_FAILED,
    ILLUSTRATOR_TIMEOUT,
    ILLUSTRATOR_UNREACHABLE,
    ILLUSTRATOR_UNREADABLE,
    KEY_REFUSED,
    NARRATION_MODEL_UNAVAILABLE,
    NARRATOR_BUSY,
    NARRATOR_FAILED,
    NARRATOR_TIMEOUT,
    NARRATOR_UNREACHABLE,
    NARRATOR_UNREADABLE,
    PICTURE_MODEL_UNAVAILABLE,
    STORYTELLER_BUSY,
    STORYTELLER_FAILED,
    STORYTELLER_TIMEOUT,
    STORYTELLER_UNREACHABLE,
    STORYTELLER_UNREADABLE,
    Failure,
)
from app.logs import log
from app.storytelling.capped import too_large

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


class Trouble(enum.Enum):
    """What went wrong with a provider call, whatever was asked of it (a story, a picture:
    FAILURES names the Failure each is)."""

    TOO_LARGE = "too_large"  # an answer past the body cap
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    BUSY = "busy"  # 429
    NOT_FOUND = "not_found"  # 404: a model or a route the server does not have
    KEY_REFUSED = "key_refused"  # 401, 403
    FAILED = "failed"  # any other error status
    UNREADABLE = "unreadable"  # an answer that is not what the API says it is


class Asked(NamedTuple):
    """The Failure a trouble is, by what the call asked for."""

    story: Failure
    picture: Failure
    narration: Failure


# Each way a provider call goes wrong, as a story's failure, a picture's and a narration
# part's (a 401/403 is the illustrator's or narrator's failing: the story, written with the
# same key, was not refused).
FAILURES = {
    Trouble.TOO_LARGE: Asked(STORYTELLER_UNREADABLE, ILLUSTRATOR_UNREADABLE,
                             NARRATOR_UNREADABLE),
    Trouble.TIMEOUT: Asked(STORYTELLER_TIMEOUT, ILLUSTRATOR_TIMEOUT, NARRATOR_TIMEOUT),
    Trouble.UNREACHABLE: Asked(STORYTELLER_UNREACHABLE, ILLUSTRATOR_UNREACHABLE,
                               NARRATOR_UNREACHABLE),
    Trouble.BUSY: Asked(STORYTELLER_BUSY, ILLUSTRATOR_BUSY, NARRATOR_BUSY),
    Trouble.NOT_FOUND: Asked(STORYTELLER_FAILED, PICTURE_MODEL_UNAVAILABLE,
                             NARRATION_MODEL_UNAVAILABLE),
    Trouble.KEY_REFUSED: Asked(KEY_REFUSED, ILLUSTRATOR_FAILED, NARRATOR_FAILED),
    Trouble.FAILED: Asked(STORYTELLER_FAILED, ILLUSTRATOR_FAILED, NARRATOR_FAILED),
    Trouble.UNREADABLE: Asked(STORYTELLER_UNREADABLE, ILLUSTRATOR_UNREADABLE,
                              NARRATOR_UNREADABLE),
}


def trouble_of(error: Exception) -> tuple[Trouble, str]:
    """What went wrong with a provider call, and the detail for the log."""
    import openai

    if too_large(error):
        return Trouble.TOO_LARGE, "an answer too large to read"
    if isinstance(error, openai.APITimeoutError):
        return Trouble.TIMEOUT, "the connection timed out"
    if isinstance(error, openai.APIConnectionError):
        return Trouble.UNREACHABLE, "no connection"
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        trouble = (Trouble.BUSY if status == 429 else Trouble.NOT_FOUND if status == 404
                   else Trouble.KEY_REFUSED if status in (401, 403) else Trouble.FAILED)
        return trouble, f"HTTP {status}"
    return Trouble.UNREADABLE, type(error).__name__


def billed_nothing(error: BaseException) -> bool:
    """Whether the provider billed nothing for the request that raised `error`: it answered
    with an error status (a 4xx or 5xx before any word), or never saw it (never_sent). The
    storyteller's and illustrator's errors keep the provider's error as their context."""
    import openai

    return (isinstance(error.__cause__ or error.__context__, openai.APIStatusError)
            or never_sent(error))


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


_IMPORTED = threading.Event()  # the library's import has ended, in whichever thread


def _import_library() -> None:
    importlib.import_module("openai")
    _IMPORTED.set()


async def loaded() -> None:
    """Once the openai library is imported: at once when it is, else after importing it in
    a thread (or waiting there while warm_up's thread imports it), never on the loop."""
    if not _IMPORTED.is_set():
        await asyncio.to_thread(_import_library)


async def warm_up() -> None:
    """Import the openai library off the event loop, so no request waits for it."""
    started = time.monotonic()
    await loaded()
    log("provider_loaded", library="openai", import_s=f"{time.monotonic() - started:.2f}")
