"""The job state machine: the only code that knows the names of the job queries.

    store = JobStore(db)
    job = await store.create(key, request_hash, request)    # None: the key exists
    job = await store.claim_next(boot_id)                    # None: nothing to run

Every status change is a guarded UPDATE from sql/queries.sql. A lost guard is not an
error: it means another writer (the sweeper, another worker) moved the job first, so it
is logged once and the caller carries on without touching the job again.
"""

from __future__ import annotations

import enum
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from databases import Database

from app.logs import log
from app.queries import load_queries
from app.storytellers import Story, StoryRequest

# pg_advisory_xact_lock key for job intake; any constant unique to this app.
INTAKE_LOCK_KEY = 0x5707_10B


class Status(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        return self in (Status.COMPLETED, Status.FAILED)


class Screening(enum.StrEnum):
    """Where a stored story's kid-safe screening stands (`stories.screening`; NULL: shown)."""

    PENDING = "pending"  # not screened yet: hidden, screened again later
    FLAGGED = "flagged"  # the provider flagged it: hidden for good, but kept


@dataclass(frozen=True)
class Job:
    id: int
    idempotency_key: str
    request_hash: str
    request: StoryRequest
    status: Status
    story_id: int | None
    error_text: str | None
    created_at: datetime
    started_at: datetime | None
    completed_at: datetime | None
    position: int | None = None  # place in line while pending (1 = next), when asked for

    @classmethod
    def from_row(cls, row: Any) -> Job:
        return cls(
            id=row["id"],
            idempotency_key=row["idempotency_key"],
            request_hash=row["request_hash"],
            request=StoryRequest(
                prompt=row["prompt"],
                child_name=row["child_name"],
                age=row["age"],
                length=row["length"],
            ),
            status=Status(row["status"]),
            story_id=row["story_id"],
            error_text=row["error_text"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            completed_at=row["completed_at"],
            position=row["position"] if "position" in row._mapping else None,
        )


@dataclass(frozen=True)
class StoredStory:
    id: int
    job_id: int
    title: str
    body: str
    model: str
    created_at: datetime
    request: StoryRequest
    favourite: bool = False


@dataclass(frozen=True)
class StoryToScreen:
    id: int
    job_id: int
    title: str
    body: str


@dataclass(frozen=True)
class StorySummary:
    id: int
    job_id: int
    title: str
    child_name: str | None
    created_at: datetime
    favourite: bool = False


def _summary(row: Any) -> StorySummary:
    return StorySummary(
        id=row["id"], job_id=row["job_id"], title=row["title"], child_name=row["child_name"],
        created_at=row["created_at"], favourite=row["favourite"],
    )


class JobStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._sql = load_queries()

    # -- reads -----------------------------------------------------------------------

    async def get(self, job_id: int) -> Job | None:
        row = await self.db.fetch_one(self._sql["get_job"], {"job_id": job_id})
        return Job.from_row(row) if row else None

    async def get_by_key(self, idempotency_key: str) -> Job | None:
        row = await self.db.fetch_one(
            self._sql["get_job_by_key"], {"idempotency_key": idempotency_key}
        )
        return Job.from_row(row) if row else None

    async def count_since(self, since: datetime) -> int:
        return await self.db.fetch_val(self._sql["count_jobs_since"], {"since": since})

    async def count_pending(self) -> int:
        """Jobs waiting to be claimed, in every process sharing the database."""
        return await self.db.fetch_val(self._sql["count_pending"])

    async def recent(self, *, recent_s: float = 600, limit: int = 20) -> list[Job]:
        rows = await self.db.fetch_all(
            self._sql["recent_jobs"], {"recent_s": float(recent_s), "limit": limit}
        )
        return [Job.from_row(row) for row in rows]

    async def median_duration_s(self) -> float | None:
        return await self.db.fetch_val(self._sql["median_duration_s"])

    async def get_story(self, story_id: int) -> StoredStory | None:
        row = await self.db.fetch_one(self._sql["get_story"], {"story_id": story_id})
        if row is None:
            return None
        return StoredStory(
            id=row["id"],
            job_id=row["job_id"],
            title=row["title"],
            body=row["body"],
            model=row["model"],
            created_at=row["created_at"],
            request=StoryRequest(
                prompt=row["prompt"], child_name=row["child_name"], age=row["age"],
                length=row["length"],
            ),
            favourite=row["favourite"],
        )

    async def list_stories(self, *, limit: int = 500) -> list[StorySummary]:
        """The stories on the shelf, newest first."""
        rows = await self.db.fetch_all(self._sql["list_stories"], {"limit": limit})
        return [_summary(row) for row in rows]

    async def search_library(self, search: str = "", *, limit: int = 500) -> list[StorySummary]:
        """Favourites first, then newest; `search` matches the title or the child's name."""
        rows = await self.db.fetch_all(
            self._sql["search_library"], {"search": search, "limit": limit}
        )
        return [_summary(row) for row in rows]

    async def story_title(self, story_id: int) -> str | None:
        """The title of a story on the shelf; None once it has been deleted (or while it
        is hidden by its screening)."""
        return await self.db.fetch_val(self._sql["story_title"], {"story_id": story_id})

    async def story_for_card(self, story_id: int) -> tuple[str, Screening | None] | None:
        """A stored story's title and screening; None once it has been deleted."""
        row = await self.db.fetch_one(self._sql["story_for_card"], {"story_id": story_id})
        if row is None:
            return None
        screening = row["screening"]
        return row["title"], Screening(screening) if screening is not None else None

    async def stories_awaiting_screening(self, *, limit: int = 20) -> list[StoryToScreen]:
        """Stories stored while they could not be screened, oldest first."""
        rows = await self.db.fetch_all(self._sql["stories_awaiting_screening"], {"limit": limit})
        return [StoryToScreen(id=row["id"], job_id=row["job_id"], title=row["title"],
                              body=row["body"]) for row in rows]

    async def last_request(self) -> StoryRequest | None:
        """What the newest job asked for: the story form's defaults."""
        row = await self.db.fetch_one(self._sql["last_request"])
        if row is None:
            return None
        return StoryRequest(
            prompt=row["prompt"], child_name=row["child_name"], age=row["age"],
            length=row["length"],
        )

    # -- the shelf (stories, not jobs: no status changes) ------------------------------

    async def delete_story(self, story_id: int) -> bool:
        """Take a story off the shelf; False when it was not there."""
        row = await self.db.fetch_one(self._sql["delete_story"], {"story_id": story_id})
        return row is not None

    async def set_favourite(self, story_id: int, favourite: bool) -> bool:
        """Mark or unmark a favourite; False when the story is not on the shelf."""
        row = await self.db.fetch_one(
            self._sql["set_favourite"], {"story_id": story_id, "favourite": favourite}
        )
        return row is not None

    async def ids(self, query: str, **params: object) -> list[int]:
        """The ids a read-only check query finds (the `check_*` queries)."""
        assert query.startswith("check_"), query
        rows = await self.db.fetch_all(self._sql[query], params)
        return [row["id"] for row in rows]

    # -- transitions -----------------------------------------------------------------

    async def lock_intake(self) -> None:
        """Inside a transaction: wait for, then hold, the job-intake lock until commit."""
        await self.db.fetch_val(self._sql["lock_job_intake"], {"lock_key": INTAKE_LOCK_KEY})

    async def create(
        self, idempotency_key: str, request_hash: str, request: StoryRequest
    ) -> Job | None:
        """(new) -> pending. None when the key already has a job (a replay or a reuse)."""
        row = await self.db.fetch_one(
            self._sql["create_job"],
            {
                "idempotency_key": idempotency_key,
                "request_hash": request_hash,
                "prompt": request.prompt,
                "child_name": request.child_name,
                "age": request.age,
                "length": request.length,
            },
        )
        return Job.from_row(row) if row else None

    async def notify_created(self, job_id: int) -> None:
        """Inside the intake transaction: wake idle workers everywhere once it commits."""
        await self.db.fetch_val(self._sql["notify_job_created"], {"job_id": str(job_id)})

    async def claim_next(self, boot_id: uuid.UUID) -> Job | None:
        """pending -> running for the oldest waiting job; None when there is none to take."""
        row = await self.db.fetch_one(self._sql["claim_next_job"], {"boot_id": boot_id})
        return Job.from_row(row) if row else None

    async def beat(self, job_id: int, boot_id: uuid.UUID) -> bool:
        """Refresh a running job's heartbeat; False once it is no longer ours to run."""
        row = await self.db.fetch_one(
            self._sql["beat_heartbeat"], {"job_id": job_id, "boot_id": boot_id}
        )
        return row is not None

    async def insert_story(
        self, job_id: int, story: Story, *, screening: Screening | None = None
    ) -> int:
        """Store the story (idempotent: a retry gets the first insert's id); hidden until
        screened when `screening` is PENDING."""
        return await self.db.fetch_val(
            self._sql["insert_story"],
            {
                "job_id": job_id,
                "title": story.title,
                "body": story.body,
                "model": story.model,
                "prompt_tokens": story.prompt_tokens,
                "completion_tokens": story.completion_tokens,
                "screening": screening.value if screening is not None else None,
            },
        )

    async def finish_screening(self, story_id: int, *, flagged: bool) -> bool:
        """A pending story passed (shown from now on) or was flagged (hidden for good);
        False when it was not waiting for a screening any more."""
        row = await self.db.fetch_one(
            self._sql["finish_screening"],
            {"story_id": story_id, "screening": Screening.FLAGGED.value if flagged else None},
        )
        return row is not None

    async def complete(self, job_id: int, story_id: int) -> bool:
        """running -> completed."""
        row = await self._guarded("complete_job", "complete", job_id=job_id, story_id=story_id)
        return row is not None

    async def fail(self, job_id: int, error_text: str) -> bool:
        """running -> failed."""
        row = await self._guarded("fail_job", "fail", job_id=job_id, error_text=error_text)
        return row is not None

    async def sweep_dead_running(self, stale_s: float) -> tuple[list[int], list[int]]:
        """For every running job whose heartbeat stopped: running -> completed when its
        story is stored, else running -> failed ('interrupted'). (recovered, interrupted)"""
        rows = await self.db.fetch_all(self._sql["sweep_dead_running"], {"stale_s": stale_s})
        recovered = [row["id"] for row in rows if row["status"] == Status.COMPLETED]
        interrupted = [row["id"] for row in rows if row["status"] == Status.FAILED]
        return sorted(recovered), sorted(interrupted)

    async def sweep_expired_pending(self, threshold_s: float) -> list[int]:
        """pending -> failed ('expired') for jobs that waited past the threshold while no
        worker was alive to run them."""
        rows = await self.db.fetch_all(
            self._sql["sweep_expired_pending"], {"threshold_s": threshold_s}
        )
        return sorted(row["id"] for row in rows)

    async def seconds_until_next_stale(self, stale_s: float, boot_id: uuid.UUID) -> float | None:
        """When another process's running job will look dead, if there is one."""
        return await self.db.fetch_val(
            self._sql["seconds_until_next_stale"], {"stale_s": stale_s, "boot_id": boot_id}
        )

    # -- the processes sharing the database --------------------------------------------

    async def register_process(
        self, boot_id: uuid.UUID, *, host: str, pid: int, concurrency: int
    ) -> None:
        await self.db.fetch_val(
            self._sql["register_process"],
            {"boot_id": boot_id, "host": host, "pid": pid, "concurrency": concurrency},
        )

    async def beat_process(self, boot_id: uuid.UUID) -> bool:
        """False when the row is gone (pruned while this process could not beat)."""
        return await self.db.fetch_val(self._sql["beat_process"], {"boot_id": boot_id}) is not None

    async def stop_process(self, boot_id: uuid.UUID) -> None:
        await self.db.fetch_val(self._sql["stop_process"], {"boot_id": boot_id})

    async def prune_processes(self) -> int:
        return len(await self.db.fetch_all(self._sql["prune_processes"]))

    async def _guarded(self, query: str, transition: str, **params: object) -> Any:
        """Run a guarded UPDATE; its row, or None (logged once) when the guard lost."""
        row = await self.db.fetch_one(self._sql[query], params)
        if row is None:
            log("guard_lost", level=logging.WARNING, job_id=params["job_id"], transition=transition)
        return row
