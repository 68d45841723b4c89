"""Kid-safe screening with the provider's moderation endpoint (MODERATION=on).

    moderator = Moderator(openai.AsyncOpenAI(..., max_retries=0))
    await moderator.check_request(story_request)   # Invalid 422 `content_flagged`
    storyteller = ModeratedStoryteller(storyteller, moderator)   # a flagged story fails the job

The child's text is screened before the job is accepted, so a flagged request writes
nothing and never reaches the (paid) chat endpoint. The finished story is screened
before it is stored, so a flagged story is never shown: the job fails with a plain reason.
Moderation is free and never writes a story, so unlike the chat call it may be retried.
"""

from __future__ import annotations

import asyncio
import logging

import openai

from app.errors import Invalid, Unavailable
from app.logs import log
from app.storytellers import Story, StoryRequest, Storyteller, StorytellerError

MODERATION_TIMEOUT_S = 20.0
MODERATION_ATTEMPTS = 3  # for a finished story, which was already paid for
MODERATION_RETRY_DELAY_S = 1.0
UNAVAILABLE_RETRY_AFTER_S = 10


class ModerationUnavailable(Exception):
    """The moderation endpoint could not give an answer."""


class Moderator:
    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self.client = client

    async def aclose(self) -> None:
        await self.client.close()

    async def flagged(self, text: str, *, attempts: int = 1) -> bool:
        """Whether the provider flags this text; ModerationUnavailable when it cannot say."""
        for attempt in range(1, attempts + 1):
            try:
                result = await self.client.moderations.create(input=text)
                return any(item.flagged for item in result.results)
            except openai.APIError as error:
                log("moderation_failed", level=logging.WARNING, attempt=attempt,
                    error=repr(error))
                if attempt < attempts:
                    await asyncio.sleep(MODERATION_RETRY_DELAY_S * attempt)
        raise ModerationUnavailable("the safety check could not be reached")

    async def check_request(self, request: StoryRequest) -> None:
        """Refuse (422, nothing written) a request whose words the provider flags."""
        text = "\n".join(part for part in (request.prompt, request.child_name) if part)
        try:
            flagged = await self.flagged(text)
        except ModerationUnavailable:
            raise Unavailable(
                "The safety check can't be reached right now; please try again in a moment.",
                code="moderation_unavailable",
                retry_after_s=UNAVAILABLE_RETRY_AFTER_S,
            ) from None
        if flagged:
            log("request_flagged")
            raise Invalid(
                "Let's pick a gentler idea for a bedtime story. Could you try different words?",
                code="content_flagged",
                field="prompt",
            )


class ModeratedStoryteller:
    """Any storyteller, with its finished stories screened before they are stored."""

    def __init__(self, inner: Storyteller, moderator: Moderator) -> None:
        self.inner = inner
        self.moderator = moderator
        self.name = inner.name

    async def aclose(self) -> None:
        await self.inner.aclose()
        await self.moderator.aclose()

    async def write(self, request: StoryRequest, *, job_id: int) -> Story:
        story = await self.inner.write(request, job_id=job_id)
        try:
            flagged = await self.moderator.flagged(
                f"{story.title}\n\n{story.body}", attempts=MODERATION_ATTEMPTS
            )
        except ModerationUnavailable as error:
            raise StorytellerError(f"{error}, so the story was not shown") from None
        if flagged:
            log("story_flagged", level=logging.WARNING, job_id=job_id)
            raise StorytellerError("the story did not pass the safety check, so it was not shown")
        return story
