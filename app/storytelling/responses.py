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
that brings no words for `silence_s` is checked with a plain retrieve (both ways of reading
it: app/storytelling/retrieves.py). Words (or reasoning) are what move those clocks: events
with none (an empty text delta, a `keepalive`, any other) are silence, so they cannot hold
a worker past `timeout_s`. The story is read to the app's
rules (reader.py; past its word cap the response is cancelled); a finished one as it is. A
create the provider answers with garbage fails the story as unreadable, in one line.
"""

from __future__ import annotations

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
from app.storytelling.final_response import Followed, story_in
from app.storytelling.limits import RESPONSES_TOKEN_CAPS, RequestLimits
from app.storytelling.openai import provider_error
from app.storytelling.prompt import build_prompt
from app.storytelling.provider import loaded
from app.storytelling.reader import Ending, Reader
from app.storytelling.retrieves import (
    CAPPED,
    StreamRefused,
    poll,
    retrieve_if_final,
    stream_once,
)

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

# A dropped stream is followed again after this long, doubling up to the maximum.
FOLLOW_RETRY_S = 0.25
FOLLOW_RETRY_MAX_S = 5.0
# A streamed retrieve that brings nothing this long is checked with a plain retrieve.
STREAM_SILENCE_S = 15.0


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
        await loaded()  # off the event loop (app/storytelling/provider.py)
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
        await loaded()  # off the event loop (app/storytelling/provider.py)
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
                    final = await stream_once(self.client, response_id, job_id, followed,
                                              progress, reader, min(self.silence_s, timeout_s))
                    if final is CAPPED:
                        return await self._capped(response_id, job_id, followed, reader)
                    if final is None:  # the stream ended early, or went quiet: where is it?
                        final = await retrieve_if_final(self.client, response_id, job_id)
                else:
                    final = await poll(self.client, response_id, job_id, followed, progress,
                                       timeout_s=timeout_s)
            except StreamRefused as refused:
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
        await loaded()  # off the event loop (app/storytelling/provider.py)
        import openai

        try:
            await self.client().responses.cancel(
                response_id, extra_headers={"X-Story-Job-Id": str(job_id)}
            )
        except openai.NotFoundError:
            pass  # nothing left to stop
        except openai.APIError as error:
            raise provider_error(error) from None
