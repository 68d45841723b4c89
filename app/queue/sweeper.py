"""The sweeper: ends jobs nobody will finish, so no one polls forever. Every process runs
one; their writes are guarded, so several sweeping at once change each job once.

    sweeper = Sweeper(store, boot_id=boot_id, interval_s=300, ...)
    await sweeper.sweep()               # once, at start-up
    task = asyncio.create_task(sweeper.run())

A running job whose heartbeat stopped, or whose owner was found gone (its pid no longer
alive on its host, app/queue/liveness.py), belonged to a process that died: it completes
with its story when that was already stored (paid for, so never lost), else it fails
'interrupted', or 'stopped' when the family had asked to stop it. A pending job fails
'expired' only when it waited past the threshold while no worker was alive anywhere to
run it. Safety rests on the guards in the UPDATEs, not
on the thresholds: a job that moved on in the meantime is left alone. Each sweep also
purges the stories deleted more than 30 days ago (with the jobs that made them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import KW_ONLY, dataclass, field

from app.db import DATABASE_UNAVAILABLE
from app.failures import EXPIRED, INTERRUPTED, STOPPED
from app.logs import log, log_caught
from app.queue.processes import ProcessRegistry
from app.queue.store import JobStore

# Never re-check sooner than this, however close the next stale heartbeat is.
MIN_RECHECK_S = 1.0


@dataclass
class SweepResult:
    recovered: list[int] = field(default_factory=list)
    interrupted: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)  # a stop was asked of a dead job
    expired: list[int] = field(default_factory=list)
    purged: list[int] = field(default_factory=list)  # stories deleted 30+ days ago
    next_stale_in_s: float | None = None


@dataclass
class Sweeper:
    store: JobStore
    _: KW_ONLY
    boot_id: uuid.UUID
    interval_s: float
    threshold_min: float
    heartbeat_stale_s: float

    async def sweep(self) -> SweepResult:
        result = SweepResult()
        (result.recovered, result.interrupted,
         result.cancelled) = await self.store.sweep_dead_running(self.heartbeat_stale_s)
        result.expired = await self.store.sweep_expired_pending(self.threshold_min * 60)
        # Another process's running job whose heartbeat is not stale yet: if that process
        # dies, look again exactly when the heartbeat goes stale.
        result.next_stale_in_s = await self.store.seconds_until_next_stale(
            self.heartbeat_stale_s, self.boot_id
        )
        await ProcessRegistry(self.store.db).prune()
        # Deleted stories wait 30 days in "recently deleted"; then they go for good.
        result.purged = await self.store.purge_deleted_stories()
        if result.purged:
            log("stories_purged", count=len(result.purged),
                story_ids=",".join(map(str, result.purged)))
        for job_id in result.recovered:
            log("job_recovered", level=logging.WARNING, job_id=job_id, status="completed")
        for job_id in result.interrupted:
            log("job_swept", level=logging.WARNING, job_id=job_id, error=INTERRUPTED.code)
        for job_id in result.cancelled:
            log("job_swept", level=logging.WARNING, job_id=job_id, error=STOPPED.code)
        for job_id in result.expired:
            log("job_swept", level=logging.WARNING, job_id=job_id, error=EXPIRED.code)
        return result

    def __post_init__(self) -> None:
        self._woken = asyncio.Event()

    def wake(self) -> None:
        """Sweep now (a process of this host was found gone: its jobs are the dead's)."""
        self._woken.set()

    async def run(self, last: SweepResult | None = None) -> None:
        """Sweep every interval, sooner whenever a heartbeat may go stale, and at once when
        woken."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._delay_after(last)):
                    await self._woken.wait()
            self._woken.clear()
            try:
                last = await self.sweep()
            except Exception as error:  # a database blip: try again at the next interval
                log_caught("sweep_failed", error, expected=DATABASE_UNAVAILABLE)
                last = None

    def _delay_after(self, last: SweepResult | None) -> float:
        if last is None:
            return min(self.interval_s, self.heartbeat_stale_s)
        if last.next_stale_in_s is None:
            # Nothing runs elsewhere now; a job claimed from now on cannot look dead before
            # a full stale period has passed, so a dead process is noticed within two.
            return min(self.interval_s, self.heartbeat_stale_s)
        # +0.5 s so the heartbeat is past the threshold when we look.
        return min(self.interval_s, max(last.next_stale_in_s + 0.5, MIN_RECHECK_S))
