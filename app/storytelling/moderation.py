"""Kid-safe screening with the provider's moderation endpoint (MODERATION=on).

    moderator = Moderator(ProviderClient(api_key=..., max_retries=0, timeout_s=10))
    await moderator.check_request(story_request)   # Invalid 422 `content_flagged`
    flagged = await moderator.flagged(text, attempts=3)  # or ModerationUnavailable

The child's text is screened before the job is accepted, so a flagged request writes
nothing and never reaches the (paid) chat endpoint. The finished story was paid for, so
it is stored first, hidden (`stories.screening = 'pending'`), and its job completes;
then it is screened, outside the storyteller's time limit (LLM_TIMEOUT_S is the model's
alone). It passes: it is shown. It is flagged: it stays hidden for good, and its card
says it could not be shown. The endpoint cannot answer: it stays hidden, its card says
it is being checked, and app/queue/screener.py asks again every little while until it
can say.
Moderation is free and never writes a story, so unlike the chat call it may be retried.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from app.errors import Invalid, Unavailable
from app.i18n import gettext
from app.logs import log
from app.stories import StoryRequest
from app.storytelling.endpoints import MODERATIONS, Endpoints, is_missing_route, no_endpoint_message
from app.storytelling.provider import loaded

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

MODERATION_TIMEOUT_S = 20.0
MODERATION_RETRY_DELAY_S = 1.0
UNAVAILABLE_RETRY_AFTER_S = 10


class ModerationUnavailable(Exception):
    """The moderation endpoint could not give an answer."""


class Moderator:
    def __init__(self, client: ProviderClient, endpoints: Endpoints | None = None) -> None:
        self.client = client
        self.endpoints = endpoints or Endpoints()

    async def aclose(self) -> None:
        await self.client.aclose()

    async def flagged(self, text: str, *, attempts: int = 1) -> bool:
        """Whether the provider flags this text; ModerationUnavailable when it cannot say."""
        await loaded()  # off the event loop (app/storytelling/provider.py)
        import openai

        for attempt in range(1, attempts + 1):
            try:
                result = await self.client().moderations.create(input=text)
                return any(item.flagged for item in result.results)
            except openai.APIError as error:
                if is_missing_route(error, ""):  # no such endpoint: asking again cannot help
                    self.endpoints.mark_missing(MODERATIONS, seen_by="a safety check")
                    raise ModerationUnavailable(no_endpoint_message(MODERATIONS)) from None
                log("moderation_failed", level=logging.WARNING, attempt=attempt,
                    error=repr(error))
                if attempt < attempts:
                    await asyncio.sleep(MODERATION_RETRY_DELAY_S * attempt)
        raise ModerationUnavailable("the safety check could not be reached")

    async def check_request(self, request: StoryRequest) -> None:
        """Refuse (422, nothing written) a request whose words the provider flags."""
        asked = (request.prompt, request.child_name, request.sibling_name, request.likes,
                 request.companions)
        text = "\n".join(part for part in asked if part)
        try:
            flagged = await self.flagged(text)
        except ModerationUnavailable:
            if self.endpoints.lacks(MODERATIONS):
                raise Unavailable(f"The safety check can't be made: "
                                  f"{no_endpoint_message(MODERATIONS)}.",
                                  code="moderation_unavailable",
                                  retry_after_s=UNAVAILABLE_RETRY_AFTER_S) from None
            raise Unavailable(
                gettext("The safety check can't be reached right now; please try again in "
                        "a moment."),
                code="moderation_unavailable",
                retry_after_s=UNAVAILABLE_RETRY_AFTER_S,
            ) from None
        if flagged:
            log("request_flagged")
            raise Invalid(
                gettext("Let's pick a gentler idea for a bedtime story. Could you try "
                        "different words?"),
                code="content_flagged",
                field="prompt",
            )
