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
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.logs import log
from app.queries import Queryable, fetch_all, fetch_one, fetch_val
from app.stories import Story, StoryRequest, minutes_for_words, reading_minutes

# pg_advisory_xact_lock key for job intake; any constant unique to this app.
INTAKE_LOCK_KEY = 0x5707_10B
# A deleted story can be restored this long, then the sweeper purges it.
DELETED_KEEP_S = 30 * 24 * 3600
LIBRARY_PAGE_SIZE = 50
# A search this short (or with no letters or digits) is a plain substring, not words.
SEARCH_LETTERS_MAX_CHARS = 2
SEARCH_WORDS_MAX = 10
_SEARCH_WORD = re.compile(r"[^\W_]+")


class Status(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        return self in (Status.COMPLETED, Status.FAILED)


class FailReason(enum.StrEnum):
    """The `error_text` of a job that failed for a reason of the queue's own (any other is
    the storyteller's short sentence). The SQL writes the same words; templates read these."""

    INTERRUPTED = "interrupted"  # its process died (or shut down) before the story came
    EXPIRED = "expired"  # it waited while no worker was alive to run it
    CANCELLED = "cancelled"  # the family stopped it


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
    text_so_far: str = ""  # while running: the story as streamed so far

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
                sequel_of=row["sequel_of"] if "sequel_of" in row else None,
                previously=row["previously"] if "previously" in row else None,
            ),
            status=Status(row["status"]),
            story_id=row["story_id"],
            error_text=row["error_text"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            completed_at=row["completed_at"],
            position=row["position"] if "position" in row else None,
            text_so_far=row["text_so_far"] if "text_so_far" in row else "",
        )


@dataclass(frozen=True)
class IntakeResult:
    """What the intake statement found: the key's job (`replayed`) or the new one; no job
    when the counts (each counted only up to its bound) refused it."""

    job: Job | None
    replayed: bool
    pending: int
    used_today: int


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
    uid: uuid.UUID | None = None  # the same in every installation a backup restores it to
    sequel_of_title: str | None = None  # the story it continues, while that is on the shelf

    @property
    def reading_minutes(self) -> int:
        return reading_minutes(self.body)


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
    # The library's rows say more (the home page's short list does not need it):
    prompt: str | None = None  # what the story was about
    age: int | None = None
    length: str | None = None
    words: int = 0
    series_id: int | None = None
    sequel_of: int | None = None
    sequel_of_title: str | None = None  # the story it continues, while that is on the shelf

    @property
    def reading_minutes(self) -> int:
        """Minutes to read it aloud, slowly; at least one."""
        return minutes_for_words(self.words)


_LIBRARY_COLUMNS = ("prompt", "age", "length", "words", "series_id", "sequel_of",
                    "sequel_of_title")


def _summary(row: Any) -> StorySummary:
    return StorySummary(
        id=row["id"], job_id=row["job_id"], title=row["title"], child_name=row["child_name"],
        created_at=row["created_at"], favourite=row["favourite"],
        **{name: row[name] for name in _LIBRARY_COLUMNS if name in row},
    )


@dataclass(frozen=True)
class LibraryPage:
    stories: list[StorySummary]
    more: bool  # another page follows


@dataclass(frozen=True)
class DeletedStory:
    id: int
    title: str
    child_name: str | None
    prompt: str
    created_at: datetime
    deleted_at: datetime
    purge_at: datetime  # when it goes for good


@dataclass(frozen=True)
class BackupStory:
    """A story as a backup keeps it: all it takes to put it on another shelf. Its request's
    `sequel_of` is unused (ids differ between installations): `sequel_of_uid` says it."""

    uid: uuid.UUID
    title: str
    body: str
    created_at: datetime
    request: StoryRequest
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    favourite: bool = False
    sequel_of_uid: uuid.UUID | None = None
    sequel_of_title: str | None = None


def search_words(search: str) -> list[str]:
    """The words of a library search (letters and digits only, so they are safe to put in
    a tsquery); [] when the search is short or has none: then it is a plain substring."""
    if len(search) <= SEARCH_LETTERS_MAX_CHARS:
        return []
    return _SEARCH_WORD.findall(search.lower())[:SEARCH_WORDS_MAX]


class JobStore:
    """`db`: the pool, or one connection whose open transaction every statement joins."""

    def __init__(self, db: Queryable) -> None:
        self.db = db

    # The named statements, run as app/queries.py runs them (no SQL compiled per call).

    async def _one(self, query: str, params: Mapping[str, object] | None = None, *,
                   on: Queryable | None = None) -> Any:
        return await fetch_one(on or self.db, query, params)

    async def _all(self, query: str, params: Mapping[str, object] | None = None) -> list[Any]:
        return await fetch_all(self.db, query, params)

    async def _val(self, query: str, params: Mapping[str, object] | None = None, *,
                   on: Queryable | None = None) -> Any:
        return await fetch_val(on or self.db, query, params)

    # -- reads -----------------------------------------------------------------------

    async def get(self, job_id: int) -> Job | None:
        row = await self._one("get_job", {"job_id": job_id})
        return Job.from_row(row) if row else None

    async def get_by_key(self, idempotency_key: str) -> Job | None:
        row = await self._one("get_job_by_key", {"idempotency_key": idempotency_key})
        return Job.from_row(row) if row else None

    async def count_since(self, since: datetime) -> int:
        return await self._val("count_jobs_since", {"since": since})

    async def count_pending(self) -> int:
        """Jobs waiting to be claimed, in every process sharing the database."""
        return await self._val("count_pending")

    async def recent(self, *, recent_s: float = 600, limit: int = 20) -> list[Job]:
        rows = await self._all("recent_jobs", {"recent_s": float(recent_s), "limit": limit})
        return [Job.from_row(row) for row in rows]

    async def queue_capacity(self, stale_s: float) -> tuple[int, int]:
        """(jobs running, job slots of the live workers), in the whole database."""
        row = await self._one("queue_capacity", {"stale_s": stale_s})
        return row["running"], row["slots"]

    async def median_durations(self, model: str) -> dict[str, tuple[float, int]]:
        """{length: (median seconds, samples)} over the model's recent stories."""
        rows = await self._all("median_durations", {"model": model})
        return {row["length"]: (row["seconds"], row["samples"]) for row in rows}

    async def get_story(self, story_id: int) -> StoredStory | None:
        row = await self._one("get_story", {"story_id": story_id})
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
                length=row["length"], sequel_of=row["sequel_of"], previously=row["previously"],
            ),
            favourite=row["favourite"],
            uid=row["uid"],
            sequel_of_title=row["sequel_of_title"],
        )

    async def list_stories(self, *, limit: int | None = None) -> list[StorySummary]:
        """The stories on the shelf, newest first (all of them, or the newest `limit`)."""
        rows = await self._all("list_stories", {"limit": limit})
        return [_summary(row) for row in rows]

    async def library(
        self, search: str = "", *, page: int = 1, per_page: int = LIBRARY_PAGE_SIZE
    ) -> LibraryPage:
        """One page of the library: series together, favourites first, then newest.

        `search` ('' for all) matches the title, the child's name and what the story was
        about: by words (full-text, each word a prefix: "drag" finds "dragon"), or for one
        or two characters, or signs only, as a plain case-insensitive substring."""
        search = search.replace("\x00", "").strip()
        params: dict[str, object] = {"limit": per_page + 1, "offset": (page - 1) * per_page}
        words = search_words(search)
        if not search:
            query = "library_page"
        elif words:
            query = "search_library_words"
            params["query"] = " & ".join(f"{word}:*" for word in words)
        else:
            query = "search_library_letters"
            params["search"] = search
        rows = await self._all(query, params)
        return LibraryPage([_summary(row) for row in rows[:per_page]], more=len(rows) > per_page)

    async def search_library(self, search: str = "", *, limit: int = 500) -> list[StorySummary]:
        """The first `limit` stories of the library that match `search` (see `library`)."""
        return (await self.library(search, per_page=limit)).stories

    async def story_title(self, story_id: int) -> str | None:
        """The title of a story on the shelf; None once it has been deleted (or while it
        is hidden by its screening)."""
        return await self._val("story_title", {"story_id": story_id})

    async def story_for_card(self, story_id: int) -> tuple[str, Screening | None] | None:
        """A stored story's title and screening; None once it has been deleted."""
        row = await self._one("story_for_card", {"story_id": story_id})
        if row is None:
            return None
        screening = row["screening"]
        return row["title"], Screening(screening) if screening is not None else None

    async def stories_awaiting_screening(self, *, limit: int = 20) -> list[StoryToScreen]:
        """Stories stored while they could not be screened, oldest first."""
        rows = await self._all("stories_awaiting_screening", {"limit": limit})
        return [StoryToScreen(id=row["id"], job_id=row["job_id"], title=row["title"],
                              body=row["body"]) for row in rows]

    async def last_request(self) -> StoryRequest | None:
        """What the newest job asked for: the story form's defaults."""
        row = await self._one("last_request")
        if row is None:
            return None
        return StoryRequest(
            prompt=row["prompt"], child_name=row["child_name"], age=row["age"],
            length=row["length"],
        )

    # -- the shelf (stories, not jobs: no status changes) ------------------------------

    async def delete_story(self, story_id: int) -> bool:
        """Take a story off the shelf; False when it was not there."""
        row = await self._one("delete_story", {"story_id": story_id})
        return row is not None

    async def set_favourite(self, story_id: int, favourite: bool) -> bool:
        """Mark or unmark a favourite; False when the story is not on the shelf."""
        row = await self._one("set_favourite", {"story_id": story_id, "favourite": favourite})
        return row is not None

    async def restore_story(self, story_id: int, *, keep_s: float = DELETED_KEEP_S) -> bool:
        """Undo a delete (within `keep_s`); False when there was nothing to restore."""
        row = await self._one("restore_story", {"story_id": story_id, "keep_s": float(keep_s)})
        return row is not None

    async def recently_deleted(
        self, *, keep_s: float = DELETED_KEEP_S, limit: int = 500
    ) -> list[DeletedStory]:
        """Stories that can still be restored, the most recently deleted first."""
        rows = await self._all("recently_deleted", {"keep_s": float(keep_s), "limit": limit})
        return [DeletedStory(id=row["id"], title=row["title"], child_name=row["child_name"],
                             prompt=row["prompt"], created_at=row["created_at"],
                             deleted_at=row["deleted_at"], purge_at=row["purge_at"])
                for row in rows]

    async def deleted_story_title(
        self, story_id: int, *, keep_s: float = DELETED_KEEP_S
    ) -> str | None:
        """The title of a story that was deleted and can still be restored."""
        return await self._val("deleted_story_title",
                               {"story_id": story_id, "keep_s": float(keep_s)})

    async def count_recently_deleted(self, *, keep_s: float = DELETED_KEEP_S) -> int:
        return await self._val("count_recently_deleted", {"keep_s": float(keep_s)})

    async def purge_deleted_stories(self, *, keep_s: float = DELETED_KEEP_S) -> list[int]:
        """Stories deleted more than `keep_s` ago, gone for good with their jobs; their ids."""
        rows = await self._all("purge_deleted_stories", {"keep_s": float(keep_s)})
        return sorted(row["id"] for row in rows)

    async def story_sequels(self, story_id: int) -> list[tuple[int, str]]:
        """(id, title) of the stories on the shelf that continue this one, oldest first."""
        rows = await self._all("story_sequels", {"story_id": story_id})
        return [(row["id"], row["title"]) for row in rows]

    async def export_stories(self) -> list[BackupStory]:
        """Every story on the shelf, oldest first, as a backup keeps it."""
        rows = await self._all("export_stories")
        return [
            BackupStory(
                uid=row["uid"], title=row["title"], body=row["body"],
                created_at=row["created_at"],
                request=StoryRequest(prompt=row["prompt"], child_name=row["child_name"],
                                     age=row["age"], length=row["length"],
                                     previously=row["previously"]),
                model=row["model"], prompt_tokens=row["prompt_tokens"],
                completion_tokens=row["completion_tokens"], favourite=row["favourite"],
                sequel_of_uid=row["sequel_of_uid"], sequel_of_title=row["sequel_of_title"],
            )
            for row in rows
        ]

    async def import_story(
        self, story: BackupStory, *, request_hash: str, importer: uuid.UUID
    ) -> bool:
        """Put a story from a backup on the shelf, with a completed job of its own (made
        and finished at the story's own time); False when a story with its uid is here
        already. One transaction: a story is restored whole or not at all."""
        request = story.request
        async with self.db.transaction() as connection:
            if await self._val("story_by_uid", {"uid": story.uid}, on=connection):
                return False
            job_id = await self._val(
                "import_job",
                {
                    "idempotency_key": f"import-{story.uid}",
                    "request_hash": request_hash,
                    "prompt": request.prompt,
                    "child_name": request.child_name,
                    "age": request.age,
                    "length": request.length,
                    "sequel_of_uid": story.sequel_of_uid,
                    "previously": request.previously,
                    "created_at": story.created_at,
                    "importer": importer,
                },
                on=connection,
            )
            if job_id is None:  # imported already (by a concurrent import of the same file)
                return False
            story_id = await self._val(
                "import_story",
                {
                    "uid": story.uid, "job_id": job_id, "title": story.title,
                    "body": story.body, "model": story.model,
                    "prompt_tokens": story.prompt_tokens,
                    "completion_tokens": story.completion_tokens,
                    "created_at": story.created_at, "favourite": story.favourite,
                },
                on=connection,
            )
            completed = await self._guarded(
                "complete_imported_job", "complete_imported", on=connection,
                job_id=job_id, story_id=story_id, created_at=story.created_at,
            )
            assert completed is not None, "an imported job is ours until it commits"
        return True

    async def ids(self, query: str, **params: object) -> list[int]:
        """The ids a read-only check query finds (the `check_*` queries)."""
        assert query.startswith("check_"), query
        rows = await self._all(query, params)
        return [row["id"] for row in rows]

    # -- transitions -----------------------------------------------------------------

    async def create(
        self, idempotency_key: str, request_hash: str, request: StoryRequest
    ) -> Job | None:
        """(new) -> pending. None when the key already has a job (a replay or a reuse)."""
        row = await self._one(
            "create_job",
            {
                "idempotency_key": idempotency_key,
                "request_hash": request_hash,
                "prompt": request.prompt,
                "child_name": request.child_name,
                "age": request.age,
                "length": request.length,
                "sequel_of": request.sequel_of,
                "previously": request.previously,
            },
        )
        return Job.from_row(row) if row else None

    async def intake(
        self, idempotency_key: str, request_hash: str, request: StoryRequest, *,
        since: datetime, queue_max: int, daily_limit: int,
    ) -> IntakeResult:
        """(new) -> pending, unless the key has a job already (a replay) or the queue bound
        or the day's limit (jobs created since `since`) refuses it: one statement under
        the intake lock (`intake_job`), one round trip. A new job's NOTIFY goes out at
        commit, and its place in line comes with it."""
        row = await self._one("intake_job", {
            "idempotency_key": idempotency_key, "request_hash": request_hash,
            "prompt": request.prompt, "child_name": request.child_name, "age": request.age,
            "length": request.length, "sequel_of": request.sequel_of,
            "previously": request.previously, "since": since, "queue_max": queue_max,
            "daily_limit": daily_limit, "lock_key": INTAKE_LOCK_KEY,
        })
        job = Job.from_row(row) if row["id"] is not None else None
        return IntakeResult(job=job, replayed=bool(row["replayed"]), pending=row["pending"],
                            used_today=row["used_today"])

    async def claim_next(self, boot_id: uuid.UUID) -> Job | None:
        """pending -> running for the oldest waiting job; None when there is none to take."""
        row = await self._one("claim_next_job", {"boot_id": boot_id})
        return Job.from_row(row) if row else None

    async def beat(self, job_id: int, boot_id: uuid.UUID) -> bool:
        """Refresh a running job's heartbeat; False once it is no longer ours to run."""
        row = await self._one("beat_heartbeat", {"job_id": job_id, "boot_id": boot_id})
        return row is not None

    async def save_text_so_far(self, job_id: int, boot_id: uuid.UUID, text: str) -> bool:
        """The streamed text so far, on our running job (and its heartbeat); False once
        the job is no longer ours to write."""
        row = await self._one(
            "save_text_so_far",
            {"job_id": job_id, "boot_id": boot_id, "text_so_far": text},
        )
        return row is not None

    async def insert_story(
        self, job_id: int, story: Story, *, screening: Screening | None = None
    ) -> int:
        """Store the story (idempotent: a retry gets the first insert's id); hidden until
        screened when `screening` is PENDING."""
        return await self._val(
            "insert_story",
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
        row = await self._one(
            "finish_screening",
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
        rows = await self._all("sweep_dead_running", {"stale_s": stale_s})
        recovered = [row["id"] for row in rows if row["status"] == Status.COMPLETED]
        interrupted = [row["id"] for row in rows if row["status"] == Status.FAILED]
        return sorted(recovered), sorted(interrupted)

    async def sweep_expired_pending(self, threshold_s: float) -> list[int]:
        """pending -> failed ('expired') for jobs that waited past the threshold while no
        worker was alive to run them."""
        rows = await self._all("sweep_expired_pending", {"threshold_s": threshold_s})
        return sorted(row["id"] for row in rows)

    async def seconds_until_next_stale(self, stale_s: float, boot_id: uuid.UUID) -> float | None:
        """When another process's running job will look dead, if there is one."""
        return await self._val("seconds_until_next_stale", {"stale_s": stale_s, "boot_id": boot_id})

    # -- the processes sharing the database --------------------------------------------

    async def register_process(
        self, boot_id: uuid.UUID, *, host: str, pid: int, concurrency: int
    ) -> None:
        await self._val(
            "register_process",
            {"boot_id": boot_id, "host": host, "pid": pid, "concurrency": concurrency},
        )

    async def beat_process(self, boot_id: uuid.UUID) -> bool:
        """False when the row is gone (pruned while this process could not beat)."""
        return await self._val("beat_process", {"boot_id": boot_id}) is not None

    async def stop_process(self, boot_id: uuid.UUID) -> None:
        await self._val("stop_process", {"boot_id": boot_id})

    async def prune_processes(self) -> int:
        return len(await self._all("prune_processes"))

    async def _guarded(self, query: str, transition: str, *, on: Queryable | None = None,
                       **params: object) -> Any:
        """Run a guarded UPDATE; its row, or None (logged once) when the guard lost."""
        row = await self._one(query, params, on=on)
        if row is None:
            log("guard_lost", level=logging.WARNING, job_id=params["job_id"], transition=transition)
        return row
