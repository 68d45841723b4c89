"""The sweeper: ends jobs nobody will finish, so no one polls forever.

    sweeper = Sweeper(store, queue, boot_id=boot_id, interval_s=300, ...)
    await sweeper.sweep()               # once, at start-up
    task = asyncio.create_task(sweeper.run())

It fails running jobs whose heartbeat stopped ('interrupted') and pending jobs older than
the threshold that no live queue holds ('expired'). Its safety rests on the guards in
the UPDATEs, not on the thresholds: a job that moved on in the meantime is left alone.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field

from app.jobs import JobStore
from app.logs import log
from app.queue import JobQueue

# Never re-check sooner than this, however close the next stale heartbeat is.
MIN_RECHECK_S = 1.0


@dataclass
class SweepResult:
    interrupted: list[int] = field(default_factory=list)
    expired: list[int] = field(default_factory=list)
    next_stale_in_s: float | None = None


class Sweeper:
    def __init__(
        self,
        store: JobStore,
        queue: JobQueue,
        *,
        boot_id: uuid.UUID,
        interval_s: float,
        threshold_min: float,
        heartbeat_stale_s: float,
    ) -> None:
        self.store = store
        self.queue = queue
        self.boot_id = boot_id
        self.interval_s = interval_s
        self.threshold_min = threshold_min
        self.heartbeat_stale_s = heartbeat_stale_s

    async def sweep(self) -> SweepResult:
        result = SweepResult()
        result.interrupted = await self.store.sweep_dead_running(self.heartbeat_stale_s)
        result.expired = await self.store.sweep_expired_pending(
            self.threshold_min * 60, self.queue.held_ids()
        )
        # A dead process's job whose heartbeat is not stale yet: look again when it is.
        result.next_stale_in_s = await self.store.seconds_until_next_stale(
            self.heartbeat_stale_s, self.boot_id
        )
        for job_id in result.interrupted:
            log("job_swept", level=logging.WARNING, job_id=job_id, error="interrupted")
        for job_id in result.expired:
            log("job_swept", level=logging.WARNING, job_id=job_id, error="expired")
        return result

    async def run(self, last: SweepResult | None = None) -> None:
        """Sweep every interval, or sooner when a heartbeat is about to go stale."""
        while True:
            await asyncio.sleep(self._delay_after(last))
            try:
                last = await self.sweep()
            except Exception as error:  # a database blip: try again at the next interval
                log("sweep_failed", level=logging.WARNING, error=repr(error))
                last = None

    def _delay_after(self, last: SweepResult | None) -> float:
        if last is None or last.next_stale_in_s is None:
            return self.interval_s
        # +0.5 s so the heartbeat is past the threshold when we look.
        return min(self.interval_s, max(last.next_stale_in_s + 0.5, MIN_RECHECK_S))
