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
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.logs import log
from app.stories import ProgressSink, ResponseGone, Story, StoryRequest, StorytellerError
from app.storytelling.availability import (
    ModelAvailability,
    is_model_not_found,
    model_gone_message,
)
from app.storytelling.limits import RESPONSES_TOKEN_CAPS, RequestLimits
from app.storytelling.openai import build_messages, provider_error, story_from_text

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

# A dropped stream is followed again after this long, doubling up to the maximum.
FOLLOW_RETRY_S = 0.25
FOLLOW_RETRY_MAX_S = 5.0
# The provider's words for a response that will not change any more.
FINAL_STATUSES = ("completed", "incomplete", "failed", "cancelled")
_FINAL_EVENTS = {"response.completed", "response.incomplete", "response.failed"}


@dataclass
class _Followed:
    """How far a story has been read: the model's text, and the last event's number."""

    text: str
    after: int | None


class BackgroundStoryteller:
    name = "openai"
    background = True

    def __init__(self, client: ProviderClient, *, model: str, temperature: float | None = None,
                 availability: ModelAvailability | None = None) -> None:
        self.client = client
        self.model = model
        self.limits = RequestLimits(temperature=temperature)
        self.availability = availability or ModelAvailability(model)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def start(self, request: StoryRequest, *, job_id: int) -> str:
        import openai

        system, user = build_messages(request)

        async def create(options: dict[str, Any]) -> Any:
            return await self.client().responses.create(
                model=self.model,
                instructions=system["content"],
                input=user["content"],
                background=True,
                store=True,  # background mode keeps the response at the provider a while
                metadata={"job_id": str(job_id)},
                extra_headers={"X-Story-Job-Id": str(job_id)},
                **options,
            )

        try:
            response = await self.limits.send(self.model, RESPONSES_TOKEN_CAPS, request.length,
                                              create)
        except openai.NotFoundError as error:
            if is_model_not_found(error, self.model):  # the model is gone, not the API
                self.availability.mark_gone(seen_by=f"job {job_id}")
                raise StorytellerError(model_gone_message(self.model)) from None
            raise StorytellerError(
                "the storyteller has no background mode (set LLM_API=chat)"
            ) from None
        except openai.APIError as error:
            raise provider_error(error) from None
        self.availability.mark_offered()
        if not getattr(response, "id", None):
            raise StorytellerError("the storyteller sent an unreadable answer")
        return response.id

    async def follow(
        self, response_id: str, request: StoryRequest, *, job_id: int, text: str,
        after: int | None, on_progress: ProgressSink,
    ) -> Story:
        import openai

        followed = _Followed(text=text, after=after)
        delay_s = FOLLOW_RETRY_S
        while True:
            try:
                final = await self._follow_once(response_id, job_id, followed, on_progress)
                if final is None:  # the stream ended early: where does the response stand?
                    final = await self._retrieve_if_final(response_id, job_id)
            except openai.NotFoundError:
                raise ResponseGone("the storyteller no longer has this story") from None
            except (openai.APIConnectionError, openai.InternalServerError,
                    openai.RateLimitError, ValueError) as error:
                # The stream dropped (or answered garbage): retrieves bill nothing, so
                # follow again from the last event seen. llm_timeout_s bounds it all.
                log("follow_retry", level=logging.WARNING, job_id=job_id,
                    after=followed.after, retry_in_s=delay_s, error=type(error).__name__)
                final = None
            except openai.APIError as error:
                raise provider_error(error) from None
            if final is not None:
                return self._story(final, followed.text, request, job_id)
            await asyncio.sleep(delay_s)
            delay_s = min(delay_s * 2, FOLLOW_RETRY_MAX_S)

    async def cancel(self, response_id: str, *, job_id: int) -> None:
        import openai

        try:
            await self.client().responses.cancel(
                response_id, extra_headers={"X-Story-Job-Id": str(job_id)}
            )
        except openai.NotFoundError:
            pass  # nothing left to stop

    async def _follow_once(
        self, response_id: str, job_id: int, followed: _Followed, on_progress: ProgressSink
    ) -> Any:
        """Read the stream from the last event seen; the final response, or None when the
        stream ended before it."""
        options: dict[str, Any] = {"stream": True}
        if followed.after is not None:
            options["starting_after"] = followed.after
        stream = await self.client().responses.retrieve(
            response_id, extra_headers={"X-Story-Job-Id": str(job_id)}, **options
        )
        async with stream:
            async for event in stream:
                number = getattr(event, "sequence_number", None)
                if event.type == "response.output_text.delta":
                    followed.text += event.delta
                if isinstance(number, int):
                    followed.after = number
                if event.type == "response.output_text.delta":
                    on_progress(followed.text, followed.after if followed.after is not None else 0)
                elif event.type in _FINAL_EVENTS:
                    return event.response
                elif event.type == "error":
                    raise StorytellerError("the storyteller failed while writing")
        return None

    async def _retrieve_if_final(self, response_id: str, job_id: int) -> Any:
        response = await self.client().responses.retrieve(
            response_id, extra_headers={"X-Story-Job-Id": str(job_id)}
        )
        return response if response.status in FINAL_STATUSES else None

    def _story(self, response: Any, followed_text: str, request: StoryRequest,
               job_id: int) -> Story:
        """The story in a final response: completed, or cut off by its token budget."""
        status = response.status
        if status == "failed":
            code = getattr(response.error, "code", None) if response.error else None
            raise StorytellerError(f"the storyteller failed ({code or 'no reason given'})")
        if status == "cancelled":
            raise StorytellerError("the story was stopped at the storyteller")
        reason = getattr(response.incomplete_details, "reason", None)
        if _refused(response) or reason == "content_filter":
            raise StorytellerError("the storyteller declined to write this story")
        usage = response.usage
        return story_from_text(
            response.output_text or followed_text, request,
            cut_off=status == "incomplete", job_id=job_id, model=response.model or self.model,
            prompt_tokens=usage.input_tokens if usage else None,
            completion_tokens=usage.output_tokens if usage else None,
        )


def _refused(response: Any) -> bool:
    return any(getattr(part, "type", None) == "refusal"
               for item in response.output or [] for part in getattr(item, "content", None) or [])
