"""Background generation: the story written at the provider (`LLM_API=responses`).

    storyteller = BackgroundStoryteller(ProviderClient(api_key=..., timeout_s=180),
                                        model="gpt-6-luna")
    response_id = await storyteller.start(request, job_id=17)      # the one billed request
    story = await storyteller.follow(response_id, request, job_id=17, text="", after=None,
                                     on_progress=sink)              # free, from any process
    await storyteller.cancel(response_id, job_id=17)

`start` is a Responses API create with `background: true`: the provider answers at once
with the response's id and writes the story on its own side, whatever happens to this
process. `follow` reads it by id as it is written (a streamed retrieve from the last
event seen, `starting_after`), again after a dropped stream, with a bounded back-off;
retrieves bill nothing. A response the provider no longer has raises ResponseGone.

Two ways a stream can fail a story that is in fact there: OpenAI refuses to stream a
response more than 5 minutes old (a 400), and a stream can go quiet while the response
goes on to the end. A refused stream is followed by plain retrieves instead, every
POLL_INTERVAL_S, until the response ends or brings no new words for `timeout_s`; a stream
that brings no words for `silence_s` is checked with a plain retrieve. Words (or reasoning)
are what move those clocks: events with none (an empty text delta, a `keepalive`, any other)
are silence, so they cannot hold a worker past `timeout_s`. The story is read to the app's
rules (reader.py; past its word cap the response is cancelled); a finished one as it is. A
create the provider answers with garbage fails the story as unreadable, in one line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.backoff import Backoff
from app.failures import (
    MODEL_UNAVAILABLE,
    STORYTELLER_FAILED,
    STORYTELLER_UNREADABLE,
    ResponseGone,
    StorytellerError,
)
from app.logs import log
from app.stories import ProgressSink, Story, StoryRequest
from app.storytelling.availability import (
    ModelAvailability,
    is_model_not_found,
    model_gone_detail,
)
from app.storytelling.endpoints import RESPONSES, Endpoints, no_endpoint_message
from app.storytelling.final_response import (
    FINAL_STATUSES,
    Followed,
    readable_text,
    story_in,
)
from app.storytelling.limits import RESPONSES_TOKEN_CAPS, RequestLimits
from app.storytelling.openai import provider_error
from app.storytelling.prompt import build_prompt
from app.storytelling.reader import Ending, Reader

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

# A dropped stream is followed again after this long, doubling up to the maximum.
FOLLOW_RETRY_S = 0.25
FOLLOW_RETRY_MAX_S = 5.0
# A response the provider will not stream (too old) is retrieved this often instead.
POLL_INTERVAL_S = 2.0
# A streamed retrieve that brings nothing this long is checked with a plain retrieve.
STREAM_SILENCE_S = 15.0
_FINAL_EVENTS = {"response.completed", "response.incomplete", "response.failed"}
# Events whose delta is the model's reasoning: words too, for the silence clocks.
_REASONING_EVENTS = {"response.reasoning_text.delta", "response.reasoning_summary_text.delta"}
_CAPPED = object()  # the stream read past the app's word cap


class _StreamRefused(Exception):
    """The provider will not stream this response (OpenAI: more than 5 minutes old)."""


class BackgroundStoryteller:
    name = "openai"
    background = True

    def __init__(self, client: ProviderClient, *, model: str, temperature: float | None = None,
                 availability: ModelAvailability | None = None,
                 silence_s: float = STREAM_SILENCE_S, limits: RequestLimits | None = None,
                 endpoints: Endpoints | None = None) -> None:
        self.client = client
        self.model = model
        self.limits = limits or RequestLimits(temperature=temperature)
        self.availability = availability or ModelAvailability(model)
        self.endpoints = endpoints or Endpoints()
        self.silence_s = silence_s

    async def aclose(self) -> None:
        await self.client.aclose()

    async def start(self, request: StoryRequest, *, job_id: int) -> str:
        import openai

        instructions, user_input = build_prompt(request)

        async def create(options: dict[str, Any]) -> Any:
            return await self.client().responses.create(
                model=self.model,
                instructions=instructions,
                input=user_input,
                background=True,
                store=True,  # background mode keeps the response at the provider a while
                metadata={"job_id": str(job_id)},
                extra_headers={"X-Story-Job-Id": str(job_id)},
                **options,
            )

        try:
            response = await self.limits.send(self.model, RESPONSES_TOKEN_CAPS, request.length,
                                              create, language=request.language)
        except openai.NotFoundError as error:
            if is_model_not_found(error, self.model):  # the model is gone, not the API
                self.availability.mark_gone(seen_by=f"job {job_id}")
                raise StorytellerError(MODEL_UNAVAILABLE,
                                       model_gone_detail(self.model)) from None
            self.endpoints.mark_missing(RESPONSES, seen_by=f"job {job_id}")
            raise StorytellerError(STORYTELLER_FAILED, no_endpoint_message(RESPONSES)) from None
        except (openai.APIError, ValueError) as error:  # ValueError: an answer not JSON
            raise provider_error(error) from None
        self.availability.mark_offered()
        if not getattr(response, "id", None):
            raise StorytellerError(STORYTELLER_UNREADABLE, "a create with no response id")
        response_id: str = response.id
        return response_id

    async def follow(
        self, response_id: str, request: StoryRequest, *, job_id: int, text: str,
        after: int | None, on_progress: ProgressSink, timeout_s: float | None = None,
        started_at: datetime | None = None,
    ) -> Story:
        """`timeout_s` (default: the client's) bounds each wait for new words: from the
        response's create (else `started_at`, the job's start, else now) to the first, and
        from each to the next. Past the app's word cap, the response is cancelled at the
        provider and the story kept to its last whole sentence."""
        import openai

        timeout_s = self.client.timeout_s if timeout_s is None else timeout_s
        reader = Reader(request, prompt=build_prompt(request), job_id=job_id)
        began = started_at.timestamp() if started_at is not None else time.time()
        followed = Followed(text=text, after=after, words_at=max(began, time.time()) if text
                            else began)

        def progress(raw: str, sequence: int | None) -> None:
            on_progress(reader.shown(raw), sequence)

        backoff = Backoff(FOLLOW_RETRY_S, max_s=FOLLOW_RETRY_MAX_S)
        streamable = True
        while True:
            try:
                if streamable:
                    final = await self._follow_once(response_id, job_id, followed, progress,
                                                    reader, min(self.silence_s, timeout_s))
                    if final is _CAPPED:
                        return await self._capped(response_id, job_id, followed, reader)
                    if final is None:  # the stream ended early, or went quiet: where is it?
                        final = await self._retrieve_if_final(response_id, job_id)
                else:
                    final = await self._poll(response_id, job_id, followed, progress,
                                             timeout_s=timeout_s)
            except _StreamRefused as refused:
                log("follow_by_retrieves", level=logging.WARNING, job_id=job_id,
                    response_id=response_id, reason=str(refused))
                streamable = False
                continue
            except openai.NotFoundError as error:
                if is_model_not_found(error, self.model):  # as at create: the model is named
                    self.availability.mark_gone(seen_by=f"job {job_id}")
                    raise StorytellerError(MODEL_UNAVAILABLE,
                                           model_gone_detail(self.model)) from None
                raise ResponseGone() from None
            except (openai.APIConnectionError, openai.InternalServerError,
                    openai.RateLimitError, ValueError) as error:
                # The stream dropped (or answered garbage): retrieves bill nothing, so
                # follow again from the last event seen, while new words come in time.
                log("follow_retry", level=logging.WARNING, job_id=job_id,
                    after=followed.after, retry_in_s=backoff.next_s, error=type(error).__name__)
                final = None
            except openai.APIError as error:
                raise provider_error(error) from None
            if final is not None:
                return story_in(final, followed, reader, job_id=job_id, model=self.model)
            if time.time() - followed.words_at > timeout_s:
                raise TimeoutError  # no new words for LLM_TIMEOUT_S
            await backoff.wait()

    async def _capped(self, response_id: str, job_id: int, followed: Followed,
                      reader: Reader) -> Story:
        """Past the app's word cap: the response stopped at the provider, the story kept."""
        try:
            await self.cancel(response_id, job_id=job_id)
        except StorytellerError as error:  # the story is kept whatever the provider says
            log("provider_cancel_failed", level=logging.WARNING, job_id=job_id,
                error=str(error))
        return reader.story(followed.text, ending=Ending.CAPPED, model=self.model,
                            prompt_tokens=None, completion_tokens=None)

    async def cancel(self, response_id: str, *, job_id: int) -> None:
        import openai

        try:
            await self.client().responses.cancel(
                response_id, extra_headers={"X-Story-Job-Id": str(job_id)}
            )
        except openai.NotFoundError:
            pass  # nothing left to stop
        except openai.APIError as error:
            raise provider_error(error) from None

    async def _follow_once(
        self, response_id: str, job_id: int, followed: Followed, on_progress: ProgressSink,
        reader: Reader, quiet_s: float,
    ) -> Any:
        """Read the stream from the last event seen; the final response, None when the
        stream ended before it or brought no words for `quiet_s` (events without any do
        not count), or _CAPPED past the app's word cap (the stream is closed then)."""
        import openai

        options: dict[str, Any] = {"stream": True,
                                   "extra_headers": {"X-Story-Job-Id": str(job_id)}}
        if followed.after is not None:
            options["starting_after"] = followed.after
        try:
            async with asyncio.timeout(quiet_s):
                stream = await self.client().responses.retrieve(response_id, **options)
        except openai.BadRequestError as error:
            # OpenAI's "can no longer be streamed because it is more than 5 minutes old":
            # a plain retrieve still has it, and bills nothing either.
            raise _StreamRefused(error.message) from None
        except TimeoutError:
            return self._silent(job_id, followed, quiet_s)
        heard_at = time.monotonic()  # when words last came on this stream
        async with stream:
            while True:
                try:
                    async with asyncio.timeout(quiet_s - (time.monotonic() - heard_at)):
                        event = await anext(stream)
                except StopAsyncIteration:
                    return None
                except TimeoutError:
                    return self._silent(job_id, followed, quiet_s)
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
                        return _CAPPED
                elif event.type in _FINAL_EVENTS:
                    followed.to_the_end = True
                    return event.response
                elif event.type == "error":
                    raise StorytellerError(STORYTELLER_FAILED, "an error event while writing")

    def _silent(self, job_id: int, followed: Followed, quiet_s: float) -> None:
        log("follow_silent", level=logging.WARNING, job_id=job_id, after=followed.after,
            silent_s=quiet_s)
        return None

    async def _retrieve_if_final(self, response_id: str, job_id: int) -> Any:
        response = await self.client().responses.retrieve(
            response_id, extra_headers={"X-Story-Job-Id": str(job_id)}
        )
        return response if response.status in FINAL_STATUSES else None

    async def _poll(
        self, response_id: str, job_id: int, followed: Followed, on_progress: ProgressSink,
        *, timeout_s: float,
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
                response = await self.client().responses.retrieve(
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
