"""The worker: up to `concurrency` jobs at a time, each claim -> write -> store -> complete.

    worker = Worker(store, wakeup, storyteller, boot_id=boot_id, concurrency=1,
                    llm_timeout_s=180)
    task = asyncio.create_task(worker.run())

Each slot claims the oldest pending job from the table (any process may have accepted
it), so nothing in this process decides which jobs exist. The storyteller is called only
after this worker won the claim (pending -> running), and never again for that job:
whatever goes wrong afterwards fails the job at once, with a short reason and the words
written so far, except a database outage, which the worker waits out (or, past its
patience, leaves to the sweeper). The finished story is cleaned (control characters,
lone surrogates) and stored before the job is completed, and the job's heartbeat beats
until it is, so a crash in between leaves a stored story that recovery attaches to it.

With a background storyteller (LLM_API=responses) the one billed request starts the story
at the provider and its id is saved on the row before anything else; the worker then
follows the story by that id. A slot first adopts a running job that has an id and no
live owner (handed over at a shutdown, or its process died), following the same story
from the last event saved: already paid for, it comes before new jobs. At shutdown each
such job is handed over (`hand_over`) instead of waited for. A worker whose saves find
the job no longer its own (an adopter took it) stops at once and stores nothing.

Stopping: the family's request reaches the job's owner by NOTIFY (`stop_requested`) or at
its next heartbeat; the owner closes the stream (chat) or cancels the response at the
provider, and fails the job 'cancelled', keeping its words.

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
from app.logs import log, log_caught
from app.queue.jobs import FailReason, Job, Screening, Status
from app.queue.screener import StoryScreener
from app.queue.store import JobStore
from app.queue.wakeup import Wakeup
from app.queue.writing import (
    Interrupted,
    Interruption,
    Writing,
    beat,
    beat_interval_s,
    unless_interrupted,
)
from app.stories import (
    BackgroundStoryteller,
    ResponseGone,
    Story,
    Storyteller,
    StorytellerError,
    clean_story,
    clean_text,
)

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
# A story at the provider whose owner missed this many beats is adopted (a live owner
# judged dead too soon only loses the job: retrieves bill nothing), and new jobs wait
# while one has missed DEFER_AFTER_MISSED_BEATS: it is about to be adopted, and comes first.
# Beats are counted at HEARTBEAT_INTERVAL_S, the slowest pace a live owner beats at.
ADOPT_AFTER_MISSED_BEATS = 5
DEFER_AFTER_MISSED_BEATS = 3


class Worker:
    def __init__(
        self,
        store: JobStore,
        wakeup: Wakeup,
        storyteller: Storyteller | BackgroundStoryteller,
        *,
        boot_id: uuid.UUID,
        llm_timeout_s: float,
        concurrency: int = 1,
        heartbeat_interval_s: float = 5.0,
        heartbeat_stale_s: float = 60.0,
        screener: StoryScreener | None = None,
        follower: BackgroundStoryteller | None = None,
    ) -> None:
        self.store = store
        self.wakeup = wakeup
        self.storyteller = storyteller
        # A background storyteller (LLM_API=responses) starts, follows, hands over, adopts.
        self.background = isinstance(storyteller, BackgroundStoryteller)
        # What follows a story by its response id: the background storyteller, or (with
        # LLM_API=chat) one on the same provider, for stories started before a switch to
        # chat, so no job with a response id is left without a worker to adopt it.
        self.follower = storyteller if isinstance(storyteller, BackgroundStoryteller) else follower
        self.screener = screener
        self.boot_id = boot_id
        self.llm_timeout_s = llm_timeout_s
        self.concurrency = concurrency
        self.heartbeat_interval_s = heartbeat_interval_s
        self.heartbeat_stale_s = heartbeat_stale_s
        self.adopt_after_s = min(heartbeat_stale_s,
                                 ADOPT_AFTER_MISSED_BEATS * heartbeat_interval_s)
        self.defer_after_s = min(heartbeat_stale_s,
                                 DEFER_AFTER_MISSED_BEATS * heartbeat_interval_s)
        self.writing: dict[int, Writing] = {}
        self._stopping = False
        self._handing_over = False
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def current_job_ids(self) -> set[int]:
        return set(self.writing)

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

    def hand_over(self) -> None:
        """Shutting down with a background storyteller: let go of every job being written
        (any live worker adopts it) instead of waiting for it."""
        self._handing_over = True
        for writing in self.writing.values():
            writing.interrupt(Interruption.HAND_OVER)

    def stop_requested(self, job_id: int) -> None:
        """The family asked to stop this job (a NOTIFY): if it is ours, stop it now."""
        writing = self.writing.get(job_id)
        if writing is not None:
            writing.interrupt(Interruption.STOP)

    @property
    def busy(self) -> bool:
        return bool(self.writing)

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
            self._idle.clear()
            try:
                await self.process(job)
            except Exception as error:  # never let one job stop the worker
                log("worker_error", level=logging.ERROR, job_id=job.id, error=repr(error),
                    exc_info=error)
            finally:
                self.writing.pop(job.id, None)
                if not self.writing:
                    self._idle.set()

    async def _claim(self) -> Job | None:
        """A job to write: one to adopt first (its story is paid for), else a pending one."""
        if self._stopping:
            return None
        try:
            if self.follower is None:
                return await self.store.claim_next(self.boot_id)
            job = await self.store.adopt(self.boot_id, self.adopt_after_s)
            if job is not None:
                log("job_adopted", job_id=job.id, response_id=job.response_id,
                    after=job.response_sequence)
                return job
            return await self.store.claim_next(self.boot_id, defer_s=self.defer_after_s)
        except Exception as error:  # the job stays where it was, for this or any process
            log("claim_failed", level=logging.WARNING, error=repr(error))
            await asyncio.sleep(CLAIM_RETRY_S)
            return None

    async def process(self, job: Job) -> None:
        """Write a job this worker has claimed (or adopted): one storyteller call, then
        store it (and, with a screener, screen the stored story)."""
        writing = self.writing[job.id] = Writing(job)
        if self._handing_over:
            writing.interrupt(Interruption.HAND_OVER)
        if job.cancel_requested:  # asked before this worker took it (an adopted job)
            writing.interrupt(Interruption.STOP)
        heartbeat = asyncio.create_task(
            beat(writing, self.store, self.boot_id, every_s=self._beat_every_s))
        stored: tuple[int, Story] | None = None
        try:
            if job.response_id is None:
                log("job_started", job_id=job.id)
            storyteller = self.storyteller
            if isinstance(storyteller, BackgroundStoryteller) or job.response_id is not None:
                story = await self._write_in_background(writing)
            else:
                story = await self._write(writing, storyteller)
            if story is not None:
                stored = await self._store(job.id, story)
        except asyncio.CancelledError:
            # Shut down past the grace period: hand the story over, or say it will not come
            # (a job the family asked to stop ends as they asked; the statement also makes
            # it so when the stop was asked and not yet heard).
            if writing.response_id is None or not await self._release(writing):
                reason = (FailReason.CANCELLED if writing.stop_requested
                          else FailReason.INTERRUPTED)
                await self._fail(writing, reason, "cancelled at shutdown")
            raise
        except DATABASE_UNAVAILABLE:
            raise  # nothing can be recorded now; the stopped heartbeat tells the sweeper
        except Exception as error:  # a defect: say so at once, not minutes later
            await self._fail(writing, "something went wrong while writing", repr(error),
                             error=error)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        if stored is not None and self.screener is not None:
            await self._screen(job.id, *stored)

    # -- writing ---------------------------------------------------------------------

    async def _write(self, writing: Writing, storyteller: Storyteller) -> Story | None:
        """Call the storyteller once, on this connection; None (and the job failed, or
        stopped) when it does not deliver."""
        job = writing.job
        call = storyteller.write(job.request, job_id=job.id, on_text=writing.update)
        try:
            return await unless_interrupted(writing, call, {Interruption.STOP},
                                          timeout_s=self.llm_timeout_s)
        except Interrupted:  # closing the stream (the call's task is cancelled) stops it
            await self._fail(writing, FailReason.CANCELLED, "stopped by the family")
        except TimeoutError:
            await self._fail(writing, "the storyteller took too long", "timeout")
        except StorytellerError as error:
            await self._fail(writing, str(error), repr(error.__context__ or error))
        except Exception as error:
            await self._fail(writing, "something went wrong while writing", repr(error),
                             error=error)
        return None

    def _beat_every_s(self) -> float:
        return beat_interval_s(self.heartbeat_interval_s, hears_stops=self.wakeup.listening)

    async def _write_in_background(self, writing: Writing) -> Story | None:
        """Start the story at the provider (unless adopted: it was started already), save
        its id, follow it to the end; None when the job failed, stopped, or left us."""
        job = writing.job
        if writing.response_id is None:
            # With no response id yet, process() came here for a background storyteller.
            starter = self.storyteller
            assert isinstance(starter, BackgroundStoryteller)
            try:
                response_id = await asyncio.wait_for(
                    starter.start(job.request, job_id=job.id), self.llm_timeout_s
                )
            except TimeoutError:
                await self._fail(writing, "the storyteller took too long", "timeout")
                return None
            except StorytellerError as error:
                await self._fail(writing, str(error), repr(error.__context__ or error))
                return None
            writing.response_id = response_id
        try:
            return await self._follow(writing)
        except Exception as error:
            # What may pass (a dropped stream, a busy provider, a database outage while
            # saving) is waited out below; what comes here would meet any adopter just
            # the same. Fail the job and stop its story at the provider, so it bills no
            # further, unless the job turned out to be another worker's (it adopted it).
            if await self._fail(writing, "something went wrong while writing", repr(error),
                                error=error) is not False:
                await self._cancel_at_provider(writing)
            return None

    async def _follow(self, writing: Writing) -> Story | None:
        """Save a new response's id, then follow the story to the end (or to whatever
        interrupts it); None when the job failed, stopped, or left us."""
        job = writing.job
        if not writing.owns_response:
            await self._save_response_id(writing)
        assert writing.response_id is not None
        # Only a worker with a follower adopts (see _claim), or starts in background mode.
        assert self.follower is not None
        follow = self.follower.follow(
            writing.response_id, job.request, job_id=job.id, text=writing.raw,
            after=writing.sequence, on_progress=writing.update,
            timeout_s=self.llm_timeout_s, started_at=job.started_at,
        )
        try:
            # Counted from now, not from the job's start: an adopted story older than
            # llm_timeout_s still gets its plain retrieve, and is taken if it is done
            # (follow itself ends plain retrieves llm_timeout_s after the create).
            return await unless_interrupted(writing, follow, set(Interruption),
                                          timeout_s=self.llm_timeout_s)
        except Interrupted as interrupted:
            if interrupted.reason is Interruption.HAND_OVER:
                await self._release(writing)
            elif interrupted.reason is Interruption.LOST:
                log("job_lost", level=logging.WARNING, job_id=job.id,
                    detail="another worker adopted it; storing nothing")
            else:
                await self._cancel_at_provider(writing)
                await self._fail(writing, FailReason.CANCELLED, "stopped by the family")
        except TimeoutError:
            await self._cancel_at_provider(writing)
            await self._fail(writing, "the storyteller took too long", "timeout")
        except ResponseGone as error:
            await self._fail(writing, FailReason.INTERRUPTED, repr(error))
        except StorytellerError as error:
            await self._fail(writing, str(error), repr(error.__context__ or error))
        return None

    async def _save_response_id(self, writing: Writing) -> None:
        """Put the response id on the row before anything else, through a database outage:
        from then on any process can pick the story up."""
        assert writing.response_id is not None
        job_id = writing.job.id
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STORE_RETRY_S
        delay = 0.2
        while True:
            try:
                held = await self.store.save_response_id(job_id, self.boot_id,
                                                         writing.response_id)
                break
            except STORE_RETRYABLE as error:
                if loop.time() > deadline:
                    log("response_id_not_saved", level=logging.ERROR, job_id=job_id,
                        error=repr(error))
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX_DELAY_S)
        if held is None:
            # Given up as 'interrupted' while we were cut off: the story still comes to
            # us, and storing it completes the job (we still own it).
            log("response_id_not_saved", level=logging.WARNING, job_id=job_id,
                response_id=writing.response_id, detail="the job was no longer running")
            return
        writing.owns_response = True
        log("response_started", job_id=job_id, response_id=writing.response_id)
        if held.cancel_requested:
            writing.interrupt(Interruption.STOP)

    async def _cancel_at_provider(self, writing: Writing) -> None:
        assert writing.response_id is not None
        try:
            assert self.follower is not None  # as in _follow, which came first
            await asyncio.wait_for(
                self.follower.cancel(writing.response_id, job_id=writing.job.id), 10
            )
        except Exception as error:  # the job stops here whatever the provider says
            log_caught("provider_cancel_failed", error,
                       expected=(StorytellerError, TimeoutError), job_id=writing.job.id)

    async def _release(self, writing: Writing) -> bool:
        """Hand the job over: its story goes on at the provider, for any worker to adopt."""
        try:
            released = await self.store.release(writing.job.id, self.boot_id,
                                                clean_text(writing.text),
                                                sequence=writing.sequence)
        except Exception as error:  # its heartbeat goes stale, and it is adopted then
            log_caught("hand_over_failed", error, expected=STORE_RETRYABLE,
                       job_id=writing.job.id)
            return True
        if released:
            log("job_handed_over", job_id=writing.job.id, response_id=writing.response_id,
                after=writing.sequence)
        return released

    # -- storing ---------------------------------------------------------------------

    async def _store(self, job_id: int, story: Story) -> tuple[int, Story] | None:
        """Clean and insert the story, then complete the job, retrying through a database
        outage. The story's id and the story as stored; None (the job failed at once, with
        the reason, or it is not ours any more) when it cannot be stored."""
        screening = Screening.PENDING if self.screener is not None else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STORE_RETRY_S
        delay = 0.2
        while True:
            try:
                story = clean_story(story)
                story_id = await self.store.insert_story(job_id, self.boot_id, story,
                                                         screening=screening)
                if story_id is None:
                    await self._not_ours(job_id)
                    return None
                if await self.store.complete(job_id, self.boot_id, story_id):
                    log("job_completed", job_id=job_id, story_id=story_id)
                else:
                    await self._completed_by_recovery(job_id, story_id)
                return story_id, story
            except STORE_RETRYABLE as error:
                if loop.time() > deadline:
                    log("story_lost", level=logging.ERROR, job_id=job_id, error=repr(error))
                    raise
                log("store_retry", level=logging.WARNING, job_id=job_id, error=repr(error))
                await asyncio.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX_DELAY_S)
            except Exception as error:  # not an outage: waiting would not help
                await self._fail(self.writing[job_id], "the story could not be saved",
                                 repr(error), error=error)
                return None

    async def _not_ours(self, job_id: int) -> None:
        """The story came, but the job is not ours to store it for: adopted by another
        worker (which stores it), stopped, or completed already by recovery."""
        job = await self.store.get(job_id)
        log("job_lost", level=logging.WARNING, job_id=job_id,
            status=job.status if job else "gone", detail="storing nothing")

    async def _completed_by_recovery(self, job_id: int, story_id: int) -> None:
        job = await self.store.get(job_id)
        if job is not None and job.status == Status.COMPLETED and job.story_id == story_id:
            log("job_completed", job_id=job_id, story_id=story_id, by="recovery")
        else:  # a defect: `python -m app check` reports it too
            log("story_orphaned", level=logging.ERROR, job_id=job_id, story_id=story_id)

    async def _screen(self, job_id: int, story_id: int, story: Story) -> None:
        """Screen the stored story; whatever goes wrong, it stays hidden until re-screened."""
        assert self.screener is not None
        try:
            await self.screener.screen(story_id, f"{story.title}\n\n{story.body}", job_id=job_id)
        except Exception as error:
            log_caught("screening_failed", error, expected=DATABASE_UNAVAILABLE,
                       job_id=job_id, story_id=story_id)

    async def _fail(self, writing: Writing, error_text: str, detail: str, *,
                    error: BaseException | None = None) -> bool | None:
        """Fail the job, keeping its words. `error`: the unexpected exception that failed
        it, logged here as an ERROR with its traceback (an expected failure is one line).
        False: the job was not ours to fail; None: the database could not be told."""
        job_id = writing.job.id
        if error is None:
            log("job_failed", level=logging.WARNING, job_id=job_id, error=error_text,
                detail=detail)
        else:
            log("job_failed", level=logging.ERROR, job_id=job_id, error=error_text,
                detail=detail, exc_info=error)
        try:
            return await self.store.fail(job_id, self.boot_id, error_text,
                                         text_so_far=clean_text(writing.text))
        except Exception as failure:  # the sweeper will see the stopped heartbeat
            if isinstance(failure, DATABASE_UNAVAILABLE):
                log("fail_not_recorded", level=logging.ERROR, job_id=job_id,
                    error=repr(failure))
            else:
                log("fail_not_recorded", level=logging.ERROR, job_id=job_id,
                    error=repr(failure), exc_info=failure)
            return None
