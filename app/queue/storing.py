"""Storing a finished story: clean it, insert it (with its picture job), complete its job,
screen it.

    storing = Storing(store, boot_id, screener=None, pictures=None)
    stored = await storing.store(writing, story)    # (story id, story as stored), or None
    if stored: await storing.screen(job_id, *stored)

The story was paid for, so storing waits out a database outage (STORE_RETRY_S); any other
error fails the job at once, keeping its words. Both statements are guarded by the job's
owner: a job adopted elsewhere, stopped, or completed by recovery stores nothing here.
With a screener (MODERATION=on) the story is stored hidden and screened after its job
completed. With `pictures` (ILLUSTRATOR not off) its picture job is made in the transaction
that inserts the story: a stored story always has one, and a retry makes no second. With a
`meter` the story's call is written in the ledger by the statement that inserts the story
(so it is counted once, and never lost), and its picture job sets aside one picture against
the month's budget, or is made skipped ('over_budget') when the budget has no room for it.
A story whose provider reported no usage, or one it could not have used (app/money/meter.py),
keeps tokens counted from its prompt and text, marked estimated, as its ledger row is
(charged its set-aside): a usage report never fails a job.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

import asyncpg

from app.backoff import Backoff
from app.db import DATABASE_UNAVAILABLE
from app.failures import NOT_SAVED
from app.logs import log, log_caught
from app.money import Usage
from app.money.meter import Charge, Meter
from app.money.tokens import counted_usage
from app.queries import transaction_on
from app.queue.jobs import Screening, Status
from app.queue.pictures import PictureStore, picture_key
from app.queue.screener import StoryScreener
from app.queue.store import JobStore
from app.queue.writing import Writing, fail
from app.stories import Story, clean_story
from app.storytelling.prompt import build_prompt

# Storing a story that was paid for is retried through a database outage this long.
T = TypeVar("T")

STORE_RETRY_S = 300.0
STORE_RETRY_FIRST_DELAY_S = 0.2
STORE_RETRY_MAX_DELAY_S = 5.0
# What storing may meet and get past by trying again: an outage, a deadlock, a
# serialization failure. Any other error is not transient: the job fails at once.
STORE_RETRYABLE: tuple[type[BaseException], ...] = (
    *DATABASE_UNAVAILABLE,
    asyncpg.TransactionRollbackError,
)


def store_backoff() -> Backoff:
    """The waits between tries of a statement that must get through an outage."""
    return Backoff(STORE_RETRY_FIRST_DELAY_S, max_s=STORE_RETRY_MAX_DELAY_S,
                   patience_s=STORE_RETRY_S)


async def through_outage(job_id: int, attempt: Callable[[], Awaitable[T]], *, lost: str) -> T:
    """`attempt`'s answer, tried again through a database outage (or a deadlock) for
    STORE_RETRY_S: what was paid for is stored, not given up at the first error. Past
    that, `lost` is logged as an ERROR and the error raised."""
    backoff = store_backoff()
    while True:
        try:
            return await attempt()
        except STORE_RETRYABLE as error:
            if backoff.time_left_s < 0:
                log(lost, level=logging.ERROR, job_id=job_id, error=repr(error))
                raise
            log("store_retry", level=logging.WARNING, job_id=job_id, error=repr(error))
            await backoff.wait()


def story_usage(story: Story) -> Usage | None:
    """What the provider reported for the story's call, as it came (the meter reads it: a
    count missing beside the other is no usage the call could have made); None: nothing
    (a local server)."""
    if story.prompt_tokens is None and story.completion_tokens is None:
        return None
    return Usage(input_tokens=story.prompt_tokens,  # type: ignore[arg-type]
                 output_tokens=story.completion_tokens)  # type: ignore[arg-type]


class Storing:
    def __init__(self, store: JobStore, boot_id: uuid.UUID, *,
                 screener: StoryScreener | None = None,
                 pictures: PictureStore | None = None, meter: Meter | None = None) -> None:
        self.jobs = store
        self.boot_id = boot_id
        self.screener = screener
        self.pictures = pictures
        self.meter = meter

    async def store(self, writing: Writing, story: Story) -> tuple[int, Story] | None:
        """Clean and insert the story, then complete the job, retrying through a database
        outage. The story's id and the story as stored; None (the job failed at once, with
        the reason, or it is not ours any more) when it cannot be stored."""
        job_id = writing.job.id
        screening = Screening.PENDING if self.screener is not None else None
        try:
            job = writing.job
            counted = counted_usage("\n".join(build_prompt(job.request)),
                                    f"{story.title}\n\n{story.body}")
            usage = story_usage(story)
            charge = None if self.meter is None else await self.meter.charge(
                job.kind, story.model, usage, set_aside=job.set_aside_micros,
                child=job.request.child_name, counted=counted,
                most=self.meter.story_most(job.request), job_id=job_id)
            if usage is None if charge is None else charge.estimated:
                # counted from the text, kept on the story (estimated), as in the ledger
                story = replace(story, prompt_tokens=counted.input_tokens,
                                completion_tokens=counted.output_tokens)
            return await through_outage(
                job_id, lambda: self._store_once(job_id, story, screening, charge),
                lost="story_lost")
        except STORE_RETRYABLE:
            raise  # past its patience: the sweeper sees the stopped heartbeat
        except Exception as error:  # not an outage: waiting would not help
            await fail(writing, self.jobs, self.boot_id, NOT_SAVED, repr(error), error=error)
            return None

    async def _store_once(self, job_id: int, story: Story, screening: Screening | None,
                          charge: Charge | None) -> tuple[int, Story] | None:
        story = clean_story(story)
        story_id = await self._insert(job_id, story, screening, charge)
        if story_id is None:
            await self._not_ours(job_id)
            return None
        if await self.jobs.complete(job_id, self.boot_id, story_id):
            log("job_completed", job_id=job_id, story_id=story_id)
        else:
            await self._completed_by_recovery(job_id, story_id)
        return story_id, story

    async def _insert(self, job_id: int, story: Story, screening: Screening | None,
                      charge: Charge | None) -> int | None:
        if self.pictures is None:
            return await self.jobs.insert_story(job_id, self.boot_id, story,
                                                screening=screening, charge=charge)
        async with transaction_on(self.jobs.db) as connection:
            story_id = await self.jobs.insert_story(job_id, self.boot_id, story,
                                                     screening=screening, charge=charge,
                                                     on=connection)
            if story_id is not None:
                meter = self.meter
                await self.pictures.make_job(
                    story_id, picture_key(story_id), on=connection,
                    budget=meter.budget() if meter else None,
                    set_aside=meter.picture_set_aside() if meter else 0)
        return story_id

    async def screen(self, job_id: int, story_id: int, story: Story) -> None:
        """Screen the stored story; whatever goes wrong, it stays hidden until re-screened."""
        if self.screener is None:
            return
        try:
            await self.screener.screen(story_id, f"{story.title}\n\n{story.body}", job_id=job_id)
        except Exception as error:
            log_caught("screening_failed", error, expected=DATABASE_UNAVAILABLE,
                       job_id=job_id, story_id=story_id)

    async def _not_ours(self, job_id: int) -> None:
        """The story came, but the job is not ours to store it for: adopted by another
        worker (which stores it), stopped, or completed already by recovery."""
        job = await self.jobs.get(job_id)
        log("job_lost", level=logging.WARNING, job_id=job_id,
            status=job.status if job else "gone", detail="storing nothing")

    async def _completed_by_recovery(self, job_id: int, story_id: int) -> None:
        job = await self.jobs.get(job_id)
        if job is not None and job.status == Status.COMPLETED and job.story_id == story_id:
            log("job_completed", job_id=job_id, story_id=story_id, by="recovery")
        else:  # a defect: `python -m app check` reports it too
            log("story_orphaned", level=logging.ERROR, job_id=job_id, story_id=story_id)
