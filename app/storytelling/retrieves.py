"""Following a background response by id, which bills nothing: streamed from the last
event seen, or by plain retrieves where the provider will not stream it (OpenAI: a response
more than 5 minutes old). BackgroundStoryteller.follow (app/storytelling/responses.py)
decides which, and what to do when either stops.

    final = await stream_once(client, response_id, 17, followed, on_progress, reader, 15.0)
    # the final response; None: the stream ended early or went quiet; CAPPED: past the cap
    final = await poll(client, response_id, 17, followed, on_progress, timeout_s=180)

Only words (or reasoning) move the silence clocks: an event with none is silence.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from app.failures import STORYTELLER_FAILED, StorytellerError
from app.logs import log
from app.stories import ProgressSink
from app.storytelling.final_response import FINAL_STATUSES, Followed, readable_text
from app.storytelling.reader import Reader

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

# A response the provider will not stream (too old) is retrieved this often instead.
POLL_INTERVAL_S = 2.0
_FINAL_EVENTS = {"response.completed", "response.incomplete", "response.failed"}
# Events whose delta is the model's reasoning: words too, for the silence clocks.
_REASONING_EVENTS = {"response.reasoning_text.delta", "response.reasoning_summary_text.delta"}
CAPPED = object()  # the stream read past the app's word cap


class StreamRefused(Exception):
    """The provider will not stream this response (OpenAI: more than 5 minutes old)."""


async def stream_once(
    client: ProviderClient, response_id: str, job_id: int, followed: Followed,
    on_progress: ProgressSink, reader: Reader, quiet_s: float,
) -> Any:
    """Read the stream from the last event seen; the final response, None when the
    stream ended before it or brought no words for `quiet_s` (events without any do
    not count), or CAPPED past the app's word cap (the stream is closed then)."""
    import openai

    options: dict[str, Any] = {"stream": True,
                               "extra_headers": {"X-Story-Job-Id": str(job_id)}}
    if followed.after is not None:
        options["starting_after"] = followed.after
    try:
        async with asyncio.timeout(quiet_s):
            stream = await client().responses.retrieve(response_id, **options)
    except openai.BadRequestError as error:
        # OpenAI's "can no longer be streamed because it is more than 5 minutes old":
        # a plain retrieve still has it, and bills nothing either.
        raise StreamRefused(error.message) from None
    except TimeoutError:
        return _silent(job_id, followed, quiet_s)
    heard_at = time.monotonic()  # when words last came on this stream
    async with stream:
        while True:
            try:
                async with asyncio.timeout(quiet_s - (time.monotonic() - heard_at)):
                    event = await anext(stream)
            except StopAsyncIteration:
                return None
            except TimeoutError:
                return _silent(job_id, followed, quiet_s)
            number = getattr(event, "sequence_number", None)
            if event.type == "response.output_text.delta":
                followed.text += event.delta
            elif event.type == "response.output_text.done":
                followed.done_text = getattr(event, "text", None)
            delta = getattr(event, "delta", None)
            if (event.type == "response.output_text.delta" or event.type in
                    _REASONING_EVENTS) and isinstance(delta, str) and delta.strip():
                # words: the silence clocks start again (no other event moves them)
                heard_at, followed.words_at = time.monotonic(), time.time()
            if isinstance(number, int):
                followed.after = number
            if event.type == "response.output_text.delta":
                on_progress(followed.text, followed.after)
                if reader.past_cap(followed.text):
                    return CAPPED
            elif event.type in _FINAL_EVENTS:
                followed.to_the_end = True
                return event.response
            elif event.type == "error":
                raise StorytellerError(STORYTELLER_FAILED, "an error event while writing")


def _silent(job_id: int, followed: Followed, quiet_s: float) -> None:
    log("follow_silent", level=logging.WARNING, job_id=job_id, after=followed.after,
        silent_s=quiet_s)
    return None


async def retrieve_if_final(client: ProviderClient, response_id: str, job_id: int) -> Any:
    """The response, once it is final (None while it is still being written)."""
    response = await client().responses.retrieve(
        response_id, extra_headers={"X-Story-Job-Id": str(job_id)}
    )
    return response if response.status in FINAL_STATUSES else None


async def poll(
    client: ProviderClient, response_id: str, job_id: int, followed: Followed,
    on_progress: ProgressSink, *, timeout_s: float,
) -> Any:
    """Follow the response by plain retrieves until it ends: the final response, taken
    as it is however late; TimeoutError once `timeout_s` has passed with no new words
    (from its create to the first), after one retrieve at least. The card shows the
    words so far from each retrieve (a response the provider will not stream is never
    streamed again, so those words need not match an event number)."""
    import openai

    dated = False
    while True:
        try:
            response = await client().responses.retrieve(
                response_id, extra_headers={"X-Story-Job-Id": str(job_id)}
            )
        except (openai.APIConnectionError, openai.InternalServerError,
                openai.RateLimitError, ValueError) as error:
            log("follow_retry", level=logging.WARNING, job_id=job_id,
                retry_in_s=POLL_INTERVAL_S, error=type(error).__name__)
            response = None
        if response is not None:
            if response.status in FINAL_STATUSES:
                return response
            created = getattr(response, "created_at", None)
            if not dated and isinstance(created, int | float) and created > 0:
                dated = True
                if not followed.text:  # the wait for its first word began at its create
                    followed.words_at = created
            words = readable_text(response)
            if words and words != followed.text:
                followed.text, followed.done_text = words, None
                followed.words_at = time.time()
                on_progress(words, followed.after)
        left_s = followed.words_at + timeout_s - time.time()
        if left_s <= 0:
            raise TimeoutError
        await asyncio.sleep(min(POLL_INTERVAL_S, left_s))
