"""The stored story's screening (MODERATION=on): the job side of app/storytelling/moderation.py.

    screener = StoryScreener(ScreeningStore(db), moderator)
    await screener.screen(story_id, text, job_id=17)   # right after the story is stored
    task = asyncio.create_task(screener.run())         # again later, for those it could not

The finished story was paid for, so it is stored first, hidden, and its job completes;
then it is screened here, outside the storyteller's time limit.
"""

from __future__ import annotations

import asyncio
import logging

from app.db import DATABASE_UNAVAILABLE
from app.logs import log, log_caught
from app.queries import Statements
from app.queue.jobs import Screening, StoryToScreen
from app.storytelling.moderation import ModerationUnavailable, Moderator

MODERATION_ATTEMPTS = 3  # for a finished story, right after it is stored
# Stories the endpoint could not screen are asked about again this often (or as often as
# the sweeper runs, if that is more often), a few at a time, oldest first.
RESCREEN_INTERVAL_S = 60.0
RESCREEN_BATCH = 20


# The model OpenAI screens with when none is named (moderations.create takes the default):
# the ledger's name for the call, recorded at 0 (moderation is free).
MODERATION_MODEL = "omni-moderation-latest"


class ScreeningStore(Statements):
    """The only code that knows the screening queries' names (sql/queries/screening.sql)."""

    async def stories_awaiting_screening(self, *, limit: int = 20) -> list[StoryToScreen]:
        """Stories stored while they could not be screened, oldest first."""
        rows = await self._all("stories_awaiting_screening", {"limit": limit})
        return [StoryToScreen(id=row["id"], job_id=row["job_id"], title=row["title"],
                              body=row["body"]) for row in rows]

    async def finish_screening(self, story_id: int, *, flagged: bool) -> bool:
        """A pending story passed (shown from now on) or was flagged (hidden for good);
        False when it was not waiting for a screening any more."""
        row = await self._one(
            "finish_screening",
            {"story_id": story_id, "screening": Screening.FLAGGED.value if flagged else None,
             "moderation_model": MODERATION_MODEL},
        )
        return row is not None


class StoryScreener:
    """Screens stored stories: each once right after it is stored, and, every `interval_s`,
    those the endpoint could not answer about. A screening only ever moves a story from
    'pending' to shown or flagged (a guarded UPDATE), so processes may screen side by side."""

    def __init__(
        self, store: ScreeningStore, moderator: Moderator, *,
        interval_s: float = RESCREEN_INTERVAL_S,
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
                log_caught("rescreen_failed", error, expected=DATABASE_UNAVAILABLE)
