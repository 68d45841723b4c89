"""Services: the long-lived parts of one running app, built and owned by the lifespan.

    services = Services.build(settings, db, storyteller)
    await services.start()      # migrate, sweep once, restore pending jobs, start tasks
    await services.stop()       # refuse new jobs, let the running one finish, stop tasks
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass, field

from databases import Database

from app.config import Settings
from app.db import DATABASE_UNAVAILABLE, migrate
from app.intake import Intake
from app.jobs import Job, JobStore, Status
from app.logs import log
from app.moderation import Moderator
from app.queue import JobQueue
from app.storytellers import Storyteller
from app.sweeper import Sweeper, SweepResult
from app.worker import Worker

# At start-up, wait this long for the database to answer before giving up.
STARTUP_DATABASE_WAIT_S = 30.0
# Before any story has finished, expect one to take about this long.
DEFAULT_EXPECTED_S = 90.0


@dataclass(frozen=True)
class JobCard:
    """What a status card shows about one job."""

    job: Job
    position: int | None  # place in the queue while pending
    elapsed_s: float
    expected_s: float
    title: str | None = None  # the story's, once completed (None if it was deleted since)

    @property
    def progress_percent(self) -> int:
        if self.job.status != Status.RUNNING:
            return 100 if self.job.status.finished else 0
        return min(int(100 * self.elapsed_s / self.expected_s), 95)


@dataclass
class Services:
    settings: Settings
    db: Database
    store: JobStore
    queue: JobQueue
    intake: Intake
    worker: Worker
    sweeper: Sweeper
    storyteller: Storyteller
    boot_id: uuid.UUID
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        settings: Settings,
        db: Database,
        storyteller: Storyteller,
        moderator: Moderator | None = None,
    ) -> Services:
        boot_id = uuid.uuid4()
        store = JobStore(db)
        queue = JobQueue(settings.queue_max)
        return cls(
            settings=settings,
            db=db,
            store=store,
            queue=queue,
            intake=Intake(
                db,
                store,
                queue,
                daily_story_limit=settings.daily_story_limit,
                timezone=settings.tz,
                moderator=moderator,
            ),
            worker=Worker(
                store,
                queue,
                storyteller,
                boot_id=boot_id,
                llm_timeout_s=settings.llm_timeout_s,
                heartbeat_interval_s=settings.heartbeat_interval_s,
            ),
            sweeper=Sweeper(
                store,
                queue,
                boot_id=boot_id,
                interval_s=settings.sweeper_interval_s,
                threshold_min=settings.sweeper_threshold_min,
                heartbeat_stale_s=settings.heartbeat_stale_s,
            ),
            storyteller=storyteller,
            boot_id=boot_id,
        )

    async def start(self) -> None:
        first_sweep = await self._reconcile()
        pending = await self.store.pending_ids()
        self.queue.restore(pending)
        self.tasks = [
            asyncio.create_task(self.worker.run(), name="worker"),
            asyncio.create_task(self.sweeper.run(first_sweep), name="sweeper"),
        ]
        log(
            "started",
            boot_id=self.boot_id,
            storyteller=self.storyteller.name,
            restored_jobs=len(pending),
            queue_max=self.settings.queue_max,
            daily_story_limit=self.settings.daily_story_limit,
            moderation="on" if self.intake.moderator else "off",
        )

    async def _reconcile(self) -> SweepResult:
        """Migrate and sweep once, waiting a while for a database that is still starting
        (a PaaS may start the app and its database together)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STARTUP_DATABASE_WAIT_S
        delay_s = 0.5
        while True:
            try:
                await migrate(self.db)
                return await self.sweeper.sweep()
            except DATABASE_UNAVAILABLE as error:
                if loop.time() + delay_s > deadline:
                    log("startup_failed", level=logging.ERROR, reason="database unreachable",
                        error=repr(error))
                    raise
                log("database_waiting", level=logging.WARNING, retry_in_s=delay_s,
                    error=repr(error))
                await asyncio.sleep(delay_s)
                delay_s = min(delay_s * 2, 5.0)

    async def stop(self) -> None:
        """Stop taking jobs; give the running one the grace period; leave the rest pending."""
        self.intake.closed = True
        self.worker.stop_taking_jobs()
        running = self.worker.current_job_id
        if self.worker.busy:
            log("shutdown_waiting", job_id=running, grace_s=self.settings.shutdown_grace_s)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.worker.wait_idle(), self.settings.shutdown_grace_s)
        for task in self.tasks:
            task.cancel()  # the worker fails a job it is still writing as 'interrupted'
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        log("stopped", waiting_jobs=len(self.queue.held_ids()))

    def worker_state(self) -> str:
        worker_task = next((t for t in self.tasks if t.get_name() == "worker"), None)
        if worker_task is None or worker_task.done():
            return "stopped"
        return "running"

    async def card(self, job: Job) -> JobCard:
        expected = DEFAULT_EXPECTED_S
        if job.status == Status.RUNNING:
            expected = await self.store.median_duration_s() or DEFAULT_EXPECTED_S
        started = job.started_at or job.created_at
        title = None
        if job.story_id is not None:
            title = await self.store.story_title(job.story_id)
        return JobCard(
            job=job,
            position=self.queue.position(job.id) if job.status == Status.PENDING else None,
            elapsed_s=max(time.time() - started.timestamp(), 0.0),
            expected_s=max(expected, 1.0),
            title=title,
        )
