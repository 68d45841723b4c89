"""Reading a provider's stream a chunk at a time: silence timed from the last words, and the
words so far shown at a steady pace (the chat storyteller's loop, app/storytelling/openai.py).

    showing = Showing(reader, on_text)          # showing.add(raw) as chunks come
    chunk = await next_chunk(stream, 180, showing, since=words_at)  # None: ended;
                                    # TimeoutError: no words for 180 s since words_at
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from app.storytelling.reader import Reader

# While words pour in, the text so far is shaped and handed on at most this often.
SHOW_EVERY_S = 0.2
T = TypeVar("T")


class Showing:
    """Hands the text so far, shaped, to `sink`: at most every SHOW_EVERY_S while chunks pour
    in (shaping a long story each chunk would cost more than the rest of the call), and at
    once when they pause or end (`flush`), so the card and the words kept are never behind."""

    def __init__(self, reader: Reader, sink: Callable[[str], None] | None) -> None:
        self.reader = reader
        self.sink = sink
        self.raw = self._shown = ""
        self._at = time.monotonic()  # the first words, too, come together

    def add(self, raw: str) -> None:
        self.raw = raw
        if time.monotonic() - self._at >= SHOW_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if self.sink is not None and self.raw != self._shown:
            self.sink(self.reader.shown(self.raw))
            self._shown, self._at = self.raw, time.monotonic()


async def next_chunk(stream: AsyncIterator[T], silence_s: float, showing: Showing, *,
                     since: float | None = None) -> T | None:
    """The stream's next chunk (None: it ended); TimeoutError once `silence_s` have passed
    since `since` (a `time.monotonic()`: when the last words came; None: now) without one.
    The caller says what a word is: a chunk with none (an empty or role-only delta, a
    keep-alive) moves no clock, so `since` stays where the last words left it. The words
    so far are shown as soon as the stream pauses."""
    left_s = silence_s if since is None else silence_s - (time.monotonic() - since)
    if left_s <= 0:
        raise TimeoutError
    step = asyncio.ensure_future(_next_or_none(stream))
    try:
        done, _ = await asyncio.wait({step}, timeout=min(SHOW_EVERY_S, left_s))
        if not done:
            showing.flush()
            done, _ = await asyncio.wait({step}, timeout=max(left_s - SHOW_EVERY_S, 0))
        if not done:
            raise TimeoutError
        return step.result()
    finally:
        if not step.done():
            step.cancel()


async def _next_or_none(stream: AsyncIterator[T]) -> T | None:
    try:
        return await anext(stream)
    except StopAsyncIteration:
        return None
