"""JobQueue: the bounded, in-memory FIFO of job ids between the intake and the worker.

    with queue.reserve() as slot:       # QueueFull when QUEUE_MAX jobs already wait
        job = await store.create(...)   # nothing written if reserve() refused
        slot.fill(job.id)               # an unfilled slot is given back on exit
    job_id = await queue.get()          # the worker, one job at a time

Capacity is taken before the INSERT so a refused request writes nothing. The job the
worker is running does not count; the one it has taken but not yet claimed is still
"held", so the sweeper never expires it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from types import TracebackType


class QueueFull(Exception):
    pass


class JobQueue:
    def __init__(self, max_waiting: int) -> None:
        self.max_waiting = max_waiting
        self._waiting: deque[int] = deque()
        self._reserved = 0
        self._in_hand: int | None = None
        self._wakeup = asyncio.Event()

    @property
    def depth(self) -> int:
        """Jobs waiting (or about to), not counting the one being run."""
        return len(self._waiting) + self._reserved

    def held_ids(self) -> list[int]:
        held = list(self._waiting)
        if self._in_hand is not None:
            held.append(self._in_hand)
        return held

    def position(self, job_id: int) -> int | None:
        """1 for the next job to run, None when the job is not waiting here."""
        try:
            return self._waiting.index(job_id) + 1
        except ValueError:
            return None

    def reserve(self) -> Slot:
        if self.depth >= self.max_waiting:
            raise QueueFull
        self._reserved += 1
        return Slot(self)

    def restore(self, job_ids: Iterable[int]) -> None:
        """Put back jobs that survived a restart, beyond the bound: they were accepted."""
        for job_id in job_ids:
            if job_id not in self._waiting:
                self._append(job_id)

    async def get(self) -> int:
        """The oldest waiting job id; it stays held until done() is called."""
        while not self._waiting:
            self._wakeup.clear()
            await self._wakeup.wait()
        self._in_hand = self._waiting.popleft()
        return self._in_hand

    def done(self) -> None:
        self._in_hand = None

    def _append(self, job_id: int) -> None:
        self._waiting.append(job_id)
        self._wakeup.set()


class Slot:
    """One reserved place in the queue, filled with a job id or given back."""

    def __init__(self, queue: JobQueue) -> None:
        self._queue: JobQueue | None = queue

    def fill(self, job_id: int) -> None:
        queue = self._release()
        queue._append(job_id)

    def _release(self) -> JobQueue:
        if self._queue is None:
            raise RuntimeError("slot already used")
        queue, self._queue = self._queue, None
        queue._reserved -= 1
        return queue

    def __enter__(self) -> Slot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._queue is not None:
            self._release()
