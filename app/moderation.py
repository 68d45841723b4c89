"""Kid-safe screening with the provider's moderation endpoint (MODERATION=on).

    moderator = Moderator(ProviderClient(api_key=..., max_retries=0, timeout_s=10))
    await moderator.check_request(story_request)   # Invalid 422 `content_flagged`
    screener = StoryScreener(store, moderator)
    await screener.screen(story_id, text, job_id=17)   # right after the story is stored
    task = asyncio.create_task(screener.run())         # again later, for those it could not

The child's text is screened before the job is accepted, so a flagged request writes
nothing and never reaches the (paid) chat endpoint. The finished story was paid for, so
it is stored first, hidden (`stories.screening = 'pending'`), and its job completes;
then it is screened, outside the storyteller's time limit (LLM_TIMEOUT_S is the model's
alone). It passes: it is shown. It is flagged: it stays hidden for good, and its card
says it could not be shown. The endpoint cannot answer: it stays hidden, its card says
it is being checked, and `run()` asks again every little while until it can say.
Moderation is free and never writes a story, so unlike the chat call it may be retried.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from app.errors import Invalid, Unavailable
from app.jobs import JobStore
from app.logs import log
from app.storytellers import StoryRequest

if TYPE_CHECKING:
    from app.provider import ProviderClient

MODERATION_TIMEOUT_S = 20.0
MODERATION_ATTEMPTS = 3  # for a finished story, right after it is stored
MODERATION_RETRY_DELAY_S = 1.0
UNAVAILABLE_RETRY_AFTER_S = 10
# Stories the endpoint could not screen are asked about again this often (or as often as
# the sweeper runs, if that is more often), a few at a time, oldest first.
RESCREEN_INTERVAL_S = 60.0
RESCREEN_BATCH = 20


class ModerationUnavailable(Exception):
    """The moderation endpoint could not give an answer."""


class Moderator:
    def __init__(self, client: ProviderClient) -> None:
        self.client = client

    async def aclose(self) -> None:
        await self.client.aclose()

    async def flagged(self, text: str, *, attempts: int = 1) -> bool:
        """Whether the provider flags this text; ModerationUnavailable when it cannot say."""
        import openai  # loaded by now (app/provider.py warms it up after start-up)

        for attempt in range(1, attempts + 1):
            try:
                result = await self.client().moderations.create(input=text)
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


class StoryScreener:
    """Screens stored stories: each once right after it is stored, and, every `interval_s`,
    those the endpoint could not answer about. A screening only ever moves a story from
    'pending' to shown or flagged (a guarded UPDATE), so processes may screen side by side."""

    def __init__(
        self, store: JobStore, moderator: Moderator, *, interval_s: float = RESCREEN_INTERVAL_S
    ) -> None:
        self.store = store
        self.moderator = moderator
        self.interval_s = interval_s

    async def screen(
        self, story_id: int, text: str, *, job_id: int, attempts: int = MODERATION_ATTEMPTS
    ) -> bool | None:
        """Screen one pending story: True flagged (hidden for good), False passed (shown),
        None when the endpoint could not say (still pending, asked again later)."""
        try:
            flagged = await self.moderator.flagged(text, attempts=attempts)
        except ModerationUnavailable:
            log("story_screening_deferred", level=logging.WARNING, job_id=job_id,
                story_id=story_id)
            return None
        if await self.store.finish_screening(story_id, flagged=flagged):
            if flagged:
                log("story_flagged", level=logging.WARNING, job_id=job_id, story_id=story_id)
            else:
                log("story_screened", job_id=job_id, story_id=story_id)
        return flagged

    async def rescreen(self) -> None:
        """Ask again about the stories still waiting, oldest first; stop at the first the
        endpoint cannot answer about (it is down: the next round tries again)."""
        for story in await self.store.stories_awaiting_screening(limit=RESCREEN_BATCH):
            text = f"{story.title}\n\n{story.body}"
            if await self.screen(story.id, text, job_id=story.job_id, attempts=1) is None:
                return

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.rescreen()
            except Exception as error:  # a database blip: the stories wait for the next round
                log("rescreen_failed", level=logging.WARNING, error=repr(error))
