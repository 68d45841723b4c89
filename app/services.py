"""Services: the long-lived parts of one running app, built and owned by the lifespan.

    services = Services.build(settings, db, storyteller, database_url=url)
    await services.start()      # migrate, sweep once, register, start the tasks
    await services.stop()       # refuse new jobs, let the running ones finish, stop tasks

A process keeps no job of its own: jobs wait as rows, so any process sharing the
database may run them, and a stopped process leaves its waiting jobs to the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field

from app.config import Settings
from app.db import Pool, connect_one
from app.dsn import connect_options
from app.illustrating import Illustrator
from app.lengths import LENGTHS
from app.logs import log
from app.money.meter import Meter
from app.narrating import Narrator
from app.queue.estimates import DEFAULT_EXPECTED_S, Estimates
from app.queue.intake import Intake
from app.queue.liveness import ProcessLiveness
from app.queue.narration_writer import NarrationWriter
from app.queue.narrations import NarrationStore
from app.queue.picture_writer import PictureWriter
from app.queue.pictures import PictureStore
from app.queue.processes import ProcessRegistry
from app.queue.screener import RESCREEN_INTERVAL_S, ScreeningStore, StoryScreener
from app.queue.startup import reconcile
from app.queue.store import JobStore
from app.queue.sweeper import Sweeper
from app.queue.wakeup import Wakeup
from app.queue.worker import Worker
from app.shelf.children import Children
from app.shelf.household import Household
from app.shelf.schedule import Schedules
from app.shelf.scheduled import ScheduledBackups
from app.shelf.store import ShelfStore
from app.stories import BackgroundStoryteller, Storyteller
from app.storytelling.availability import ModelAvailability
from app.storytelling.endpoints import Endpoints
from app.storytelling.moderation import Moderator
from app.storytelling.readiness import Readiness
from app.storytelling.shutdowns import Shutdowns
from app.version import version

# An idle worker looks for a job this often even when no notification came.
IDLE_RECHECK_S = 2.0


def estimates_for(settings: Settings, db: Pool) -> Estimates:
    """History of this storyteller's model; before it, its usual pace."""
    if settings.storyteller == "demo":
        demo_s = settings.demo_delay_s + 1.0  # it streams its story over demo_delay_s
        return Estimates(db, model=settings.model, defaults=dict.fromkeys(LENGTHS, demo_s))
    return Estimates(db, model=settings.model, defaults=DEFAULT_EXPECTED_S)


@dataclass
class Services:
    settings: Settings
    db: Pool
    store: JobStore
    shelf: ShelfStore
    children: Children
    household: Household  # its bedtime, on every page
    wakeup: Wakeup
    intake: Intake
    worker: Worker
    sweeper: Sweeper
    liveness: ProcessLiveness
    storyteller: Storyteller | BackgroundStoryteller
    boot_id: uuid.UUID
    estimates: Estimates
    schedules: Schedules  # read by every process's home page, whoever writes the backups
    pictures: PictureStore
    narrations: NarrationStore
    illustrator: Illustrator | None = None  # ILLUSTRATOR=off: None
    narrator: Narrator | None = None  # NARRATOR=off: None
    meter: Meter | None = None  # prices and the month's budget
    screener: StoryScreener | None = None  # MODERATION=on
    backups: ScheduledBackups | None = None  # BACKUP_DIR is set
    # What this process knows of STORY_MODEL at the provider (None: the demo storyteller).
    model_availability: ModelAvailability | None = None
    endpoints: Endpoints = field(default_factory=Endpoints)  # what the server lacks
    # Whether the storyteller can write at all (its model gone, its endpoint missing).
    readiness: Readiness = field(default_factory=Readiness)
    # The configured models whose shutdown is announced, learnt at start-up.
    shutdowns: Shutdowns = field(default_factory=Shutdowns)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        settings: Settings,
        db: Pool,
        storyteller: Storyteller | BackgroundStoryteller,
        moderator: Moderator | None = None,
        *,
        database_url: str | None = None,
        follower: BackgroundStoryteller | None = None,
        illustrator: Illustrator | None = None,
        meter: Meter | None = None,
        readiness: Readiness | None = None,
        narrator: Narrator | None = None,
    ) -> Services:
        """`database_url`: where to LISTEN for new jobs (None: the re-check timer alone).
        `follower`: follows stories by response id when the storyteller does not.
        `meter`: prices and the budget (app/runtime.py's meter_for; None: nothing counted).
        `readiness`: whether the storyteller can write (None: nothing ever closes it)."""
        readiness = readiness or Readiness()
        boot_id = uuid.uuid4()
        store = JobStore(db)
        # PgBouncer in transaction mode delivers no notifications: the re-check timer alone.
        listen_at = (None if settings.pgbouncer or database_url is None
                     else connect_options(database_url))
        connect = (lambda: connect_one(listen_at)) if listen_at is not None else None
        wakeup = Wakeup(connect, recheck_s=IDLE_RECHECK_S)
        screener = None
        if moderator is not None:
            screener = StoryScreener(
                ScreeningStore(db), moderator,
                interval_s=min(RESCREEN_INTERVAL_S, settings.sweeper_interval_s),
            )
        shelf = ShelfStore(db)
        schedules = Schedules(db)
        pictures = PictureStore(db)
        painter = None
        if illustrator is not None:
            painter = PictureWriter(store, boot_id, illustrator=illustrator,
                                    pictures=pictures, llm_timeout_s=settings.llm_timeout_s,
                                    meter=meter)
        narrations = NarrationStore(db)
        reader = None
        if narrator is not None:
            reader = NarrationWriter(store, boot_id, narrator=narrator, narrations=narrations,
                                     llm_timeout_s=settings.llm_timeout_s, meter=meter)
        backups = None
        if settings.backup_dir is not None:
            backups = ScheduledBackups(
                schedules, shelf, folder=settings.backup_dir,
                every_s=settings.backup_every_h * 3600, keep=settings.backup_keep,
                timezone=settings.tz,
            )
        return cls(
            settings=settings,
            db=db,
            store=store,
            shelf=shelf,
            children=Children(db),
            household=Household(db),
            wakeup=wakeup,
            intake=Intake(store, pictures, wakeup, narrations=narrations,
                          queue_max=settings.queue_max,
                          daily_story_limit=settings.daily_story_limit, timezone=settings.tz,
                          moderator=moderator, meter=meter, readiness=readiness),
            worker=Worker(
                store,
                wakeup,
                storyteller,
                boot_id=boot_id,
                concurrency=settings.worker_concurrency,
                llm_timeout_s=settings.llm_timeout_s,
                heartbeat_interval_s=settings.heartbeat_interval_s,
                heartbeat_stale_s=settings.heartbeat_stale_s,
                screener=screener,
                follower=follower,
                painter=painter,
                reader=reader,
                meter=meter,
            ),
            sweeper=Sweeper(
                store,
                boot_id=boot_id,
                interval_s=settings.sweeper_interval_s,
                threshold_min=settings.sweeper_threshold_min,
                heartbeat_stale_s=settings.heartbeat_stale_s,
            ),
            liveness=ProcessLiveness(
                ProcessRegistry(db),
                boot_id,
                concurrency=settings.worker_concurrency,
                interval_s=settings.heartbeat_interval_s,
            ),
            storyteller=storyteller,
            boot_id=boot_id,
            estimates=estimates_for(settings, db),
            schedules=schedules,
            pictures=pictures,
            narrations=narrations,
            illustrator=illustrator,
            narrator=narrator,
            meter=meter,
            screener=screener,
            backups=backups,
            model_availability=readiness.availability,
            endpoints=readiness.endpoints,
            readiness=readiness,
        )

    def __post_init__(self) -> None:
        # A stop asked for in any process reaches this one's worker by NOTIFY.
        self.wakeup.on_stop = self.worker.stop_requested

    @property
    def runs_jobs(self) -> bool:
        return self.settings.worker_concurrency > 0

    async def start(self) -> None:
        """Everything that may fail on the database comes before the first task starts,
        so a start that raises leaves nothing running on a pool about to be closed."""
        first_sweep = await reconcile(self.db, self.liveness, self.sweeper)
        await self.household.load()
        await self.liveness.register()
        try:
            waiting_jobs = await self.store.count_pending()
        except BaseException:
            await self.liveness.stop()  # registered, but it will never beat
            raise
        self.tasks = [
            asyncio.create_task(self.liveness.run(self._process_found_gone), name="liveness"),
            asyncio.create_task(self.sweeper.run(first_sweep), name="sweeper"),
        ]
        if self.screener is not None:  # stories stored while they could not be screened
            self.tasks.append(asyncio.create_task(self.screener.run(), name="rescreen"))
        if self.backups is not None:  # each process looks; one writes each backup
            self.backups.check_folder()
            self.tasks.append(asyncio.create_task(self.backups.run(), name="backups"))
        if self.runs_jobs:
            self.tasks += [
                asyncio.create_task(self.wakeup.listen(), name="listen"),
                asyncio.create_task(self.worker.run(), name="worker"),
            ]
        log(
            "started",
            version=version(),
            boot_id=self.boot_id,
            storyteller=self.storyteller.name,
            llm_api=("responses" if self.worker.background
                     else "chat" if self.storyteller.name == "openai" else "none"),
            worker_concurrency=self.settings.worker_concurrency,
            wakeups="notify" if self.wakeup.can_listen else f"every {IDLE_RECHECK_S:g}s",
            waiting_jobs=waiting_jobs,
            queue_max=self.settings.queue_max,
            daily_story_limit=self.settings.daily_story_limit,
            moderation="on" if self.intake.moderator else "off",
            illustrator=self.illustrator.name if self.illustrator else "off",
            narrator=self.narrator.name if self.narrator else "off",
        )

    def _process_found_gone(self) -> None:
        """A process of this host died: its jobs are swept, or adopted, now."""
        self.sweeper.wake()
        self.wakeup.poke()

    async def stop(self) -> None:
        """Stop claiming at once; hand the stories being written at the provider over
        (any live worker adopts them), or give running jobs the grace period; leave the
        waiting ones pending for any other process (or this app's next start)."""
        self.intake.closed = True
        self.worker.stop_taking_jobs()
        if self.worker.background:
            self.worker.hand_over()
        if self.worker.busy:
            job_ids = ",".join(map(str, sorted(self.worker.current_job_ids)))
            if self.worker.background:  # each lets go within a moment; the grace is a bound
                log("shutdown_handing_over", job_ids=job_ids)
            else:
                log("shutdown_waiting", job_ids=job_ids, grace_s=self.settings.shutdown_grace_s)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.shutdown_grace_s):
                    await self.worker.wait_idle()
        for task in self.tasks:
            task.cancel()  # the worker fails a job it is still writing as 'interrupted'
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.liveness.stop()
        try:
            waiting: int | str = await self.store.count_pending()
        except Exception:
            waiting = "unknown"
        log("stopped", waiting_jobs=waiting)

    def worker_state(self) -> str:
        """'running', 'stopped', or 'off' in a process that only serves."""
        if not self.runs_jobs:
            return "off"
        worker_task = next((t for t in self.tasks if t.get_name() == "worker"), None)
        if worker_task is None or worker_task.done():
            return "stopped"
        return "running"
