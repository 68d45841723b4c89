"""The worker: up to `concurrency` jobs at a time, each claim -> write -> store -> complete.

    worker = Worker(store, wakeup, storyteller, boot_id=boot_id, concurrency=1,
                    llm_timeout_s=180)
    task = asyncio.create_task(worker.run())

Each slot claims the oldest pending job from the table (any process may have accepted
it), so nothing in this process decides which jobs exist. The storyteller is called only
after this worker won the claim (pending -> running), and never again for that job:
whatever goes wrong afterwards fails the job at once, with a short reason, except a
database outage, which the worker waits out (or, past its patience, leaves to the
sweeper). The finished story is cleaned (control characters, lone surrogates) and stored
before the job is completed, and the job's heartbeat beats until it is, so a crash in
between leaves a stored story that recovery attaches to its job.

With a `screener` (MODERATION=on) the story is stored hidden and screened after its job
completed, outside `llm_timeout_s`, which bounds the storyteller's call alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

import asyncpg

from app.db import DATABASE_UNAVAILABLE
from app.logs import log
from app.queue.jobs import FailReason, Job, Screening
from app.queue.screener import StoryScreener
from app.queue.store import JobStore
from app.queue.wakeup import Wakeup
from app.stories import Story, StoryRequest, Storyteller, StorytellerError, clean_story, clean_text

# Storing a story that was paid for is retried through a database outage this long.
STORE_RETRY_S = 300.0
STORE_RETRY_MAX_DELAY_S = 5.0
# What storing may meet and get past by trying again: an outage, a deadlock, a
# serialization failure. Any other error is not transient: the job fails at once.
STORE_RETRYABLE: tuple[type[BaseException], ...] = (
    *DATABASE_UNAVAILABLE,
    asyncpg.TransactionRollbackError,
)
# After a failed claim (the database is down), wait at least this long before the next.
CLAIM_RETRY_S = 1.0
# The text streamed so far is saved this often (the status card polls every 3 s).
TEXT_SAVE_INTERVAL_S = 1.5


class Worker:
    def __init__(
        self,
        store: JobStore,
        wakeup: Wakeup,
        storyteller: Storyteller,
        *,
        boot_id: uuid.UUID,
        llm_timeout_s: float,
        concurrency: int = 1,
        heartbeat_interval_s: float = 5.0,
        screener: StoryScreener | None = None,
    ) -> None:
        self.store = store
        self.wakeup = wakeup
        self.storyteller = storyteller
        self.screener = screener
        self.boot_id = boot_id
        self.llm_timeout_s = llm_timeout_s
        self.concurrency = concurrency
        self.heartbeat_interval_s = heartbeat_interval_s
        self.current_job_ids: set[int] = set()
        self._stopping = False
        self._idle = asyncio.Event()
        self._idle.set()

    async def run(self) -> None:
        """Run the slots until stop_taking_jobs(); a slot finishes its job first."""
        async with asyncio.TaskGroup() as slots:
            for number in range(self.concurrency):
                slots.create_task(self._slot(), name=f"worker-slot-{number}")

    def stop_claiming(self) -> None:
        """Claim nothing more (safe from a signal handler: it only sets a flag)."""
        self._stopping = True

    def stop_taking_jobs(self) -> None:
        """Claim nothing more and let idle slots end; the jobs in hand carry on."""
        self.stop_claiming()
        self.wakeup.poke()  # idle slots see the flag now, not at the next re-check

    @property
    def busy(self) -> bool:
        return bool(self.current_job_ids)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def _slot(self) -> None:
        while not self._stopping:
            self.wakeup.clear()  # before the claim: a job committed after it wakes us again
            job = await self._claim()
            if job is None:
                if not self._stopping:
                    await self.wakeup.wait()
                continue
            self.current_job_ids.add(job.id)
            self._idle.clear()
            try:
                await self.process(job)
            except Exception as error:  # never let one job stop the worker
                log("worker_error", level=logging.ERROR, job_id=job.id, error=repr(error))
            finally:
                self.current_job_ids.discard(job.id)
                if not self.current_job_ids:
                    self._idle.set()

    async def _claim(self) -> Job | None:
        if self._stopping:
            return None
        try:
            return await self.store.claim_next(self.boot_id)
        except Exception as error:  # the job stays pending, for this or any process
            log("claim_failed", level=logging.WARNING, error=repr(error))
            await asyncio.sleep(CLAIM_RETRY_S)
            return None

    async def process(self, job: Job) -> None:
        """Write a job this worker has claimed: one storyteller call, then store it (and,
        with a screener, screen the stored story)."""
        written = _TextSoFar()
        heartbeat = asyncio.create_task(self._beat(job.id, written))
        stored: tuple[int, Story] | None = None
        try:
            log("job_started", job_id=job.id)
            story = await self._write(job.id, job.request, written)
            if story is not None:
                stored = await self._store(job.id, story)
        except asyncio.CancelledError:
            # Shut down past the grace period: the story will not come, say so now.
            await self._fail(job.id, FailReason.INTERRUPTED, "cancelled at shutdown")
            raise
        except DATABASE_UNAVAILABLE:
            raise  # nothing can be recorded now; the stopped heartbeat tells the sweeper
        except Exception as error:  # a defect: say so at once, not minutes later
            await self._fail(job.id, "something went wrong while writing", repr(error))
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        if stored is not None and self.screener is not None:
            await self._screen(job.id, *stored)

    async def _write(
        self, job_id: int, request: StoryRequest, written: _TextSoFar
    ) -> Story | None:
        """Call the storyteller once; None (and the job failed) when it does not deliver."""
        try:
            return await asyncio.wait_for(
                self.storyteller.write(request, job_id=job_id, on_text=written.update),
                self.llm_timeout_s,
            )
        except TimeoutError:
            await self._fail(job_id, "the storyteller took too long", "timeout")
        except StorytellerError as error:
            await self._fail(job_id, str(error), repr(error.__context__ or error))
        except Exception as error:
            await self._fail(job_id, "something went wrong while writing", repr(error))
        return None

    async def _store(self, job_id: int, story: Story) -> tuple[int, Story] | None:
        """Clean and insert the story, then complete the job, retrying through a database
        outage. The story's id and the story as stored; None (the job failed at once, with
        the reason) when it cannot be stored at all."""
        screening = Screening.PENDING if self.screener is not None else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STORE_RETRY_S
        delay = 0.2
        while True:
            try:
                story = clean_story(story)
                story_id = await self.store.insert_story(job_id, story, screening=screening)
                if await self.store.complete(job_id, story_id):
                    log("job_completed", job_id=job_id, story_id=story_id)
                else:
                    log("story_orphaned", level=logging.WARNING, job_id=job_id, story_id=story_id)
                return story_id, story
            except STORE_RETRYABLE as error:
                if loop.time() > deadline:
                    log("story_lost", level=logging.ERROR, job_id=job_id, error=repr(error))
                    raise
                log("store_retry", level=logging.WARNING, job_id=job_id, error=repr(error))
                await asyncio.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX_DELAY_S)
            except Exception as error:  # not an outage: waiting would not help
                await self._fail(job_id, "the story could not be saved", repr(error))
                return None

    async def _screen(self, job_id: int, story_id: int, story: Story) -> None:
        """Screen the stored story; whatever goes wrong, it stays hidden until re-screened."""
        assert self.screener is not None
        try:
            await self.screener.screen(story_id, f"{story.title}\n\n{story.body}", job_id=job_id)
        except Exception as error:
            log("screening_failed", level=logging.WARNING, job_id=job_id, story_id=story_id,
                error=repr(error))

    async def _fail(self, job_id: int, error_text: str, detail: str) -> None:
        log("job_failed", level=logging.WARNING, job_id=job_id, error=error_text, detail=detail)
        try:
            await self.store.fail(job_id, error_text)
        except Exception as error:  # the sweeper will see the stopped heartbeat
            log("fail_not_recorded", level=logging.ERROR, job_id=job_id, error=repr(error))

    async def _beat(self, job_id: int, written: _TextSoFar) -> None:
        """Until the job is completed or failed: save the text written so far every second
        or two, which is also the job's heartbeat, and beat anyway every heartbeat interval
        while no new words come. No sweep may end a job whose worker is alive."""
        loop = asyncio.get_running_loop()
        last_beat = loop.time()
        while True:
            await asyncio.sleep(min(TEXT_SAVE_INTERVAL_S, self.heartbeat_interval_s))
            try:
                if written.text != written.saved:
                    text = written.text
                    ours = await self.store.save_text_so_far(job_id, self.boot_id,
                                                             clean_text(text))
                    written.saved = text
                elif loop.time() - last_beat >= self.heartbeat_interval_s:
                    ours = await self.store.beat(job_id, self.boot_id)
                else:
                    continue
                last_beat = loop.time()
                if not ours:
                    log("heartbeat_lost", level=logging.WARNING, job_id=job_id)
                    return
            except Exception as error:  # a database blip; the next beat may get through
                log("heartbeat_failed", level=logging.WARNING, job_id=job_id, error=repr(error))


class _TextSoFar:
    """The story as streamed so far, and how much of it the database has."""

    def __init__(self) -> None:
        self.text = ""
        self.saved = ""

    def update(self, text: str) -> None:
        self.text = text
