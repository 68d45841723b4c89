"""The worker: up to `concurrency` jobs at a time, each claim -> write -> store -> complete.

    worker = Worker(store, wakeup, storyteller, boot_id=boot_id, concurrency=1,
                    llm_timeout_s=180)
    task = asyncio.create_task(worker.run())

Each slot claims the oldest pending job from the table (any process may have accepted
it), so nothing in this process decides which jobs exist. The storyteller is called only
after this worker won the claim (pending -> running), and never again for that job:
whatever goes wrong afterwards fails the job at once, with a short reason and the words
written so far, except a database outage, which the worker waits out (or, past its
patience, leaves to the sweeper). The job's heartbeat beats until the story is stored
and the job completed (app/queue/storing.py), so a crash in between leaves a stored story
that recovery attaches to it.

A job is written by one writer per mode, chosen once, here: a ChatWriter (LLM_API=chat,
the demo: app/queue/chat_writer.py) or a BackgroundWriter (LLM_API=responses: the story
is written at the provider and followed by its id, app/queue/background_writer.py). A
slot first adopts a running job that has a response id and no live owner (handed over at
a shutdown, or its process died), followed by a BackgroundWriter: already paid for, it
comes before new jobs. At shutdown each such job is handed over (`hand_over`) instead of
waited for.

Stopping: the family's request reaches the job's owner by NOTIFY (`stop_requested`) or at
its next heartbeat; the owner closes the stream (chat) or cancels the response at the
provider, and fails the job 'stopped', keeping its words.

With a `screener` (MODERATION=on) the story is stored hidden and screened after its job
completed, outside `llm_timeout_s`, which bounds the storyteller's call alone.

A picture job (kind 'picture') is drawn by the `painter` (app/queue/picture_writer.py) in
the same slot, heartbeat and all; a worker without one (ILLUSTRATOR=off) claims none. So
is a narration part (kind 'narration') by the `reader` (app/queue/narration_writer.py;
NARRATOR=off: none, and no narration is claimed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

from app.db import DATABASE_UNAVAILABLE
from app.failures import INTERNAL, INTERRUPTED, NARRATIONS_OFF, PICTURES_OFF, STOPPED
from app.kinds import Maker, claimable
from app.logs import log
from app.money.meter import Meter
from app.queue.background_writer import BackgroundWriter
from app.queue.chat_writer import ChatWriter
from app.queue.jobs import Job
from app.queue.narration_writer import NarrationWriter
from app.queue.picture_writer import PictureWriter
from app.queue.screener import StoryScreener
from app.queue.store import JobStore
from app.queue.storing import Storing
from app.queue.wakeup import Wakeup
from app.queue.writing import Interruption, Writing, beat, beat_interval_s, fail
from app.stories import BackgroundStoryteller, Story, Storyteller

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
        painter: PictureWriter | None = None,
        reader: NarrationWriter | None = None,
        meter: Meter | None = None,
    ) -> None:
        self.store = store
        self.wakeup = wakeup
        self.boot_id = boot_id
        self.writer, self.adopter = writers_for(storyteller, follower, store, boot_id,
                                                llm_timeout_s=llm_timeout_s, meter=meter)
        # A background writer (LLM_API=responses) starts, follows, hands over, adopts.
        self.background = isinstance(self.writer, BackgroundWriter)
        self.painter = painter
        self.reader = reader
        # The kinds this worker can make, in claim order: no picture without a painter, no
        # narration without a reader.
        self.kinds = claimable({Maker.STORYTELLER} | ({Maker.ILLUSTRATOR} if painter else set())
                               | ({Maker.NARRATOR} if reader else set()))
        self.storing = Storing(store, boot_id, screener=screener, meter=meter,
                               pictures=painter.pictures if painter is not None else None)
        self.concurrency = concurrency
        self.heartbeat_interval_s = heartbeat_interval_s
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
            if self.adopter is None:
                return await self.store.claim_next(self.boot_id, kinds=self.kinds)
            job = await self.store.adopt(self.boot_id, self.adopt_after_s)
            if job is not None:
                log("job_adopted", job_id=job.id, response_id=job.response_id,
                    after=job.response_sequence)
                return job
            return await self.store.claim_next(self.boot_id, defer_s=self.defer_after_s,
                                               kinds=self.kinds)
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
            if job.kind.maker is Maker.ILLUSTRATOR:  # never written as a story, whatever happens
                if self.painter is None:
                    await fail(writing, self.store, self.boot_id, PICTURES_OFF,
                               "no illustrator")
                else:
                    await self.painter.draw(writing)
                return
            if job.kind.maker is Maker.NARRATOR:  # one part of a story read aloud
                if self.reader is None:
                    await fail(writing, self.store, self.boot_id, NARRATIONS_OFF, "no narrator")
                else:
                    await self.reader.read(writing)
                return
            if job.response_id is None:
                log("job_started", job_id=job.id)
            story = await self._writer_for(job).write(writing)
            if story is not None:
                stored = await self.storing.store(writing, story)
        except asyncio.CancelledError:
            # Shut down past the grace period: hand the story over, or say it will not come
            # (a job the family asked to stop ends as they asked; the statement also makes
            # it so when the stop was asked and not yet heard).
            if writing.response_id is None or not await self._release(writing):
                reason = STOPPED if writing.stop_requested else INTERRUPTED
                await fail(writing, self.store, self.boot_id, reason, "cancelled at shutdown")
            raise
        except DATABASE_UNAVAILABLE:
            raise  # nothing can be recorded now; the stopped heartbeat tells the sweeper
        except Exception as error:  # a defect: say so at once, not minutes later
            await fail(writing, self.store, self.boot_id, INTERNAL, repr(error), error=error)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        if stored is not None:
            await self.storing.screen(job.id, *stored)

    def _writer_for(self, job: Job) -> ChatWriter | BackgroundWriter:
        """A job started at the provider is followed there, never written again."""
        if job.response_id is None:
            return self.writer
        if self.adopter is None:  # only a worker with an adopter adopts (see _claim)
            raise RuntimeError("a job with a response id, and nothing to follow it")
        return self.adopter

    async def _release(self, writing: Writing) -> bool:
        """Hand the job over; True when it need not be failed (see BackgroundWriter)."""
        if self.adopter is None:
            return False
        return await self.adopter.release(writing)

    def _beat_every_s(self) -> float:
        return beat_interval_s(self.heartbeat_interval_s, hears_stops=self.wakeup.listening)


def writers_for(
    storyteller: Storyteller | BackgroundStoryteller,
    follower: BackgroundStoryteller | None,
    store: JobStore,
    boot_id: uuid.UUID,
    *,
    llm_timeout_s: float,
    meter: Meter | None = None,
) -> tuple[ChatWriter | BackgroundWriter, BackgroundWriter | None]:
    """The writer of new jobs, and what follows an adopted one: the background writer, or
    (with LLM_API=chat) one on the same provider (`follower`), for stories started before
    a switch to chat, so no job with a response id is left without a worker to adopt it.
    The one place a storyteller's mode is told, by the Protocol it meets."""
    if isinstance(storyteller, BackgroundStoryteller):
        background = BackgroundWriter(store, boot_id, storyteller=storyteller,
                                      llm_timeout_s=llm_timeout_s, meter=meter)
        return background, background
    chat = ChatWriter(store, boot_id, storyteller=storyteller, llm_timeout_s=llm_timeout_s,
                      meter=meter)
    if follower is None:
        return chat, None
    return chat, BackgroundWriter(store, boot_id, storyteller=follower,
                                  llm_timeout_s=llm_timeout_s, meter=meter)
