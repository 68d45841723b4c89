"""A job being written in this process: the story so far, what may interrupt it, the
heartbeat that saves its words and says it is still ours, and failing it, keeping them.

    writing = Writing(job)                       # writing.update(raw, sequence) as words come
    heartbeat = asyncio.create_task(beat(writing, store, boot_id, every_s=lambda: 5.0))
    story = await unless_interrupted(writing, call, {Interruption.STOP}, timeout_s=180)
    await fail(writing, store, boot_id, STORYTELLER_TIMEOUT, "timeout")   # app/failures.py
"""

from __future__ import annotations

import asyncio
import enum
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import TypeVar

from app.db import DATABASE_UNAVAILABLE
from app.failures import Failure, ProviderError
from app.finishing import finished_text, rest_of
from app.logs import causes, log, log_caught
from app.money.meter import Billing, Meter
from app.queue.jobs import Held, Job
from app.queue.store import JobStore
from app.stories import Story, clean_text
from app.storytelling.provider import billed_nothing, loaded

# The text streamed so far is saved this often (the status card polls every 3 s).
TEXT_SAVE_INTERVAL_S = 1.5
# Where no NOTIFY brings a stop, it is seen at a heartbeat: beat at least this often.
STOP_CHECK_S = TEXT_SAVE_INTERVAL_S
T = TypeVar("T")


class Interruption(enum.Enum):
    """Why a story being written is put down before it is done."""

    # In order of precedence: a job adopted elsewhere is that worker's to stop or finish.
    LOST = "lost"  # another worker adopted it: not ours to store any more
    STOP = "stop"  # the family asked to stop it
    HAND_OVER = "hand_over"  # this process is shutting down; another will adopt it


class Interrupted(Exception):
    """A story put down before it was done, and why."""

    def __init__(self, reason: Interruption) -> None:
        super().__init__(reason.value)
        self.reason = reason


class Writing:
    """A job being written here: the story so far (the model's part, `raw`, and the text
    the card shows, `text`), the provider's last event and whether the database has them,
    and what may interrupt it."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.response_id = job.response_id
        # An adopted job's response id is on the row already, put there by its first owner.
        self.owns_response = job.response_id is not None
        self.sequence = job.response_sequence
        self.carried = job.request.carried_text
        self.text = job.text_so_far
        self.raw = rest_of(self.carried, self.text) if self.carried else self.text
        self.saved = self.text
        self._reasons: set[Interruption] = set()
        self._changed = asyncio.Event()

    def update(self, raw: str, sequence: int | None = None) -> None:
        """More of the story arrived (with its event's sequence number, in background mode)."""
        self.raw = raw
        self.text = finished_text(self.carried, raw) if self.carried else raw
        if sequence is not None:
            self.sequence = sequence

    @property
    def stop_requested(self) -> bool:
        """The family asked to stop it, and this worker has heard."""
        return Interruption.STOP in self._reasons

    def interrupt(self, reason: Interruption) -> None:
        self._reasons.add(reason)
        self._changed.set()

    async def interrupted_by(self, reasons: set[Interruption]) -> Interruption:
        """Wait until one of `reasons` interrupts the job; the first in the enum's order."""
        while True:
            for reason in Interruption:
                if reason in reasons and reason in self._reasons:
                    return reason
            self._changed.clear()
            await self._changed.wait()


async def unless_interrupted(
    writing: Writing, call: Awaitable[Story], reasons: set[Interruption], *,
    timeout_s: float | None
) -> Story:
    """The call's story, within `timeout_s` (None: however long it takes), unless one of
    `reasons` interrupts it first (then the call is cancelled and Interrupted raised);
    TimeoutError past it."""
    task = asyncio.ensure_future(call)
    interrupted = asyncio.ensure_future(writing.interrupted_by(reasons))
    try:
        done, _ = await asyncio.wait({task, interrupted}, timeout=timeout_s,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        interrupted.cancel()
        if not task.done():
            task.cancel()
            # Let the call end (its stream closed) before going on; its own outcome is of
            # no interest, but a cancellation of the task awaiting it here goes on up.
            task.add_done_callback(_outcome_seen)
            await asyncio.wait({task})
    if task in done:
        return task.result()
    if interrupted in done and not interrupted.cancelled():
        raise Interrupted(interrupted.result())
    raise TimeoutError


def _outcome_seen(task: asyncio.Future[Story]) -> None:
    """A call given up on: its end, whatever it was, is expected (no 'never retrieved')."""
    if not task.cancelled():
        task.exception()


def beat_interval_s(heartbeat_interval_s: float, *, hears_stops: bool) -> float:
    """How often a job's heartbeat beats while no words come: HEARTBEAT_INTERVAL_S. Where
    no NOTIFY brings the family's stop (LISTEN is off behind PgBouncer, or its connection
    is down for now) the owner sees a stop only at a beat, so it beats every STOP_CHECK_S
    at least: a stop then takes effect within the contract's 5 s."""
    return heartbeat_interval_s if hears_stops else min(heartbeat_interval_s, STOP_CHECK_S)


async def beat(writing: Writing, store: JobStore, boot_id: uuid.UUID, *,
               every_s: Callable[[], float]) -> None:
    """Until the job is completed or failed: save the text written so far every second
    or two, which is also the job's heartbeat, and beat anyway every `every_s()` while no
    new words come. No sweep may end a job whose worker is alive. Each save also says
    whether the family asked to stop the job, and whether it is still ours."""
    job_id = writing.job.id
    loop = asyncio.get_running_loop()
    last_beat = loop.time()
    while True:
        beat_in_s = last_beat + every_s() - loop.time()
        await asyncio.sleep(max(0.0, min(TEXT_SAVE_INTERVAL_S, beat_in_s)))
        try:
            held: Held | None
            if writing.text != writing.saved:
                text, sequence = writing.text, writing.sequence
                held = await store.save_text_so_far(job_id, boot_id, clean_text(text),
                                                    sequence=sequence)
                writing.saved = text
            elif loop.time() - last_beat >= every_s():
                held = await store.beat(job_id, boot_id)
            else:
                continue
            last_beat = loop.time()
            if held is None:
                log("heartbeat_lost", level=logging.WARNING, job_id=job_id)
                if writing.owns_response:  # adopted elsewhere: that worker has it now
                    writing.interrupt(Interruption.LOST)
                return
            if held.cancel_requested:
                writing.interrupt(Interruption.STOP)
        except Exception as error:  # a database blip; the next beat may get through
            log_caught("heartbeat_failed", error, expected=DATABASE_UNAVAILABLE, job_id=job_id)
            await asyncio.sleep(min(TEXT_SAVE_INTERVAL_S, every_s()))  # then try again


@dataclass
class Writer:
    """What a writer (chat_writer.py, background_writer.py, picture_writer.py) holds: the
    jobs' store, whose they are, how long a call may take, and the meter its call is marked at."""

    store: JobStore
    boot_id: uuid.UUID
    _: KW_ONLY
    llm_timeout_s: float
    meter: Meter | None = None

    async def _mark_sent(self, writing: Writing) -> bool:
        """Mark the job's call as about to be sent (`mark_sent`); False: not ours."""
        billed_at = await self.meter.billing(writing.job.kind) if self.meter else None
        return await mark_sent(writing, self.store, self.boot_id, billed_at)

    async def _fail(self, writing: Writing, failure: Failure, detail: str, *,
                    error: BaseException | None = None, refused: bool = False) -> bool | None:
        """Fail the job (`fail`), its call charged if it was sent, unless `refused`."""
        return await fail(writing, self.store, self.boot_id, failure, detail, error=error,
                          refused=refused)

    async def _call(self, writing: Writing, call: Callable[[], Awaitable[T]], *,
                    timed_out: Failure) -> T | None:
        """The job's one provider call, within llm_timeout_s: what it gave, or None once the
        job is failed for the provider's error (`_provider_failed`) or with `timed_out`.
        The provider's library is imported first, before the clock starts: its import (a
        second or more on a cold, busy machine) is not the provider's silence."""
        await loaded()
        try:
            async with asyncio.timeout(self.llm_timeout_s):
                return await call()
        except ProviderError as error:
            await self._provider_failed(writing, error)
        except TimeoutError:
            await self._fail(writing, timed_out, "timeout")
        return None

    async def _provider_failed(self, writing: Writing,
                               error: ProviderError) -> bool | None:
        """Fail the job for the provider call's error: its Failure, the provider's own words
        for the log, and its call charged unless the provider billed nothing for it."""
        return await self._fail(writing, error.failure, detail_of(error),
                                refused=billed_nothing(error))


async def mark_sent(writing: Writing, store: JobStore, boot_id: uuid.UUID,
                    billed_at: Billing | None) -> bool:
    """Just before the job's one provider call: mark it sent on the row, at `billed_at`
    (the model and its price), so that from now on whatever ends the job charges the call
    in the ledger, once. False (logged): the job is not ours any more, and no call may be
    made. A database outage raises: nothing was sent, and the sweeper ends the job."""
    held = await store.mark_call_sent(writing.job.id, boot_id, billed_at)
    if held is None:
        log("job_lost", level=logging.WARNING, job_id=writing.job.id,
            detail="no longer ours before its call; calling nothing")
        return False
    if held.cancel_requested:
        writing.interrupt(Interruption.STOP)
    return True


def detail_of(error: BaseException) -> str:
    """A storyteller's or illustrator's error, for the log's `detail`: its own words, then
    the provider's error it came from ("HTTP 500 <- InternalServerError(...)")."""
    cause = error.__cause__ or error.__context__
    return f"{error} <- {causes(cause)}" if cause is not None else str(error)


async def fail(writing: Writing, store: JobStore, boot_id: uuid.UUID, failure: Failure,
               detail: str, *, error: BaseException | None = None,
               refused: bool = False) -> bool | None:
    """Fail the job with `failure`'s code, keeping its words, its call (if it was sent)
    charged in the ledger in the same statement, unless the provider `refused` it
    (JobStore.fail). `detail` (the provider's own words, the exception) goes to the log
    only. `error`: the unexpected exception that failed it, logged here as an ERROR with its
    traceback (an expected failure is one line). False: the job was not ours to fail;
    None: the database could not be told."""
    job_id = writing.job.id
    if error is None:
        log("job_failed", level=logging.WARNING, job_id=job_id, error=failure.code,
            detail=detail)
    else:
        log("job_failed", level=logging.ERROR, job_id=job_id, error=failure.code,
            detail=detail, exc_info=error)
    try:
        return await store.fail(job_id, boot_id, failure,
                                text_so_far=clean_text(writing.text), refused=refused)
    except Exception as failure:  # the sweeper will see the stopped heartbeat
        if isinstance(failure, DATABASE_UNAVAILABLE):
            log("fail_not_recorded", level=logging.ERROR, job_id=job_id,
                error=repr(failure))
        else:
            log("fail_not_recorded", level=logging.ERROR, job_id=job_id,
                error=repr(failure), exc_info=failure)
        return None
