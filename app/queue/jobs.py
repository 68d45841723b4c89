"""A job as the queue knows it: its states, its row as an object (why it failed: its
Failure's code, app/failures.py).

    job = Job.from_row(row)      # job.status: a Status; job.request: a StoryRequest
    job.failure                  # once failed: its Failure (job.error_text is the code)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from app.failures import OVER_BUDGET, Failure, failure_of
from app.kinds import STORY, JobKind, kind_of
from app.requests import request_from_row
from app.stories import StoryRequest


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


class PictureStatus(enum.StrEnum):
    """Where a story's picture stands, as the JSON API says it."""

    PENDING = "pending"
    RUNNING = "running"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True)
class PictureState:
    story_id: int
    job_id: int | None  # its newest picture job (None: never asked for, or imported)
    status: PictureStatus | None  # None: no picture and none asked for
    error: str | None  # why the newest failed: its Failure's code
    etag: str | None  # the picture shown (None: none yet); a redraw keeps it until ready
    small_etag: str | None

    @property
    def drawing(self) -> bool:
        return self.status in (PictureStatus.PENDING, PictureStatus.RUNNING)

    @property
    def skipped(self) -> bool:
        """Not drawn: the month's budget had no room for it (insert_picture_job.sql)."""
        return self.status == PictureStatus.FAILED and self.error == OVER_BUDGET.code

    @property
    def failure(self) -> Failure | None:
        """Why the newest failed (None: it did not), said after "The picture could not be
        drawn:" in the reader's language."""
        return failure_of(self.error) if self.status == PictureStatus.FAILED else None


def picture_state(row: Any, story_id: int) -> PictureState:
    """A story's picture from story_picture_states' columns (migration 024's view), as
    picture_states and the cards' queries read them. A failed redraw leaves the earlier
    picture shown (ready)."""
    job_status, etag = row["picture_status"], row["picture_etag"]
    status = PictureStatus.READY if etag is not None else None
    if job_status in (Status.PENDING, Status.RUNNING):
        status = PictureStatus(job_status)
    elif job_status == Status.FAILED and etag is None:
        status = PictureStatus.FAILED
    return PictureState(story_id, row["picture_job_id"], status,
                        row["picture_error"] if status == PictureStatus.FAILED else None,
                        etag, row["picture_small_etag"])


@dataclass(frozen=True)
class NarrationState:
    """Where a story's narration stands (NarrationStore.state): its parts stored, of how
    many, and its parts' jobs."""

    story_id: int
    stored: int  # parts kept, all of one reading
    parts: int | None  # how many that reading has (None: none kept)
    seconds: float | None
    etag: str | None  # one validator for the whole narration
    pending: int
    running: int
    failed: int  # parts whose newest job failed and that are still missing

    @property
    def whole(self) -> bool:
        return self.parts is not None and self.stored == self.parts

    @property
    def status(self) -> PictureStatus | None:
        """As the JSON API says it (the picture's four words); None: never asked for."""
        if self.running:
            return PictureStatus.RUNNING
        if self.pending:
            return PictureStatus.PENDING
        if self.whole:
            return PictureStatus.READY
        if self.failed or self.stored:
            return PictureStatus.FAILED
        return None


class CardStory(NamedTuple):
    """What a status card shows of a job's story (ShelfStore.story_for_card's answer)."""

    title: str
    screening: Screening | None  # None: shown
    body: str | None  # its text, unless flagged (and, from the shelf, only when asked for)
    model: str  # the model that wrote it, which says the language its words are in


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
    text_so_far: str = ""  # while running: the story as streamed so far; once failed, kept
    # Background mode: the provider's id for the story, and its last event saved.
    response_id: str | None = None
    response_sequence: int | None = None
    cancel_requested: bool = False  # the family asked to stop it
    kind: JobKind = STORY  # what it makes (app/kinds.py)
    picture_of: int | None = None  # a picture job's story
    narration_of: int | None = None  # a narration part's story
    narration_part: int | None = None  # which part (from 0) ...
    narration_parts: int | None = None  # ... of how many
    narration_text: str | None = None  # the words the part reads
    set_aside_micros: int = 0  # the most it can cost, held against the month while it lives

    @property
    def failure(self) -> Failure | None:
        """Once failed, why: the record of its stored code (None: it has not failed)."""
        return failure_of(self.error_text) if self.status == Status.FAILED else None

    @property
    def can_finish(self) -> bool:
        """Failed with words kept: "Finish this story" can carry on from them."""
        return self.status == Status.FAILED and bool(self.text_so_far.strip())

    @classmethod
    def from_row(cls, row: Any) -> Job:
        """A whole `story_jobs` row (every job query returns one), with its `position`
        when the query counts it."""
        return cls(
            id=row["id"],
            idempotency_key=row["idempotency_key"],
            request_hash=row["request_hash"],
            request=request_from_row(row),
            status=Status(row["status"]),
            story_id=row["story_id"],
            error_text=row["error_text"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            completed_at=row["completed_at"],
            position=row["position"] if "position" in row else None,
            text_so_far=row["text_so_far"],
            response_id=row["response_id"],
            response_sequence=row["response_sequence"],
            cancel_requested=row["cancel_requested_at"] is not None,
            kind=kind_of(row["kind"]),
            picture_of=row["picture_of"],
            # A database before migration 040 (a rolling deploy's) has no narrations.
            narration_of=row.get("narration_of"),
            narration_part=row.get("narration_part"),
            narration_parts=row.get("narration_parts"),
            narration_text=row.get("narration_text"),
            set_aside_micros=row["set_aside_micros"],
        )


@dataclass(frozen=True)
class Held:
    """A running job's owner saved to it (its heartbeat): the job is still its own, and
    whether the family asked to stop it meanwhile."""

    cancel_requested: bool = False


@dataclass(frozen=True)
class IntakeResult:
    """What the intake statement found: the key's job (`replayed`) or the new one; no job
    when the counts (each counted only up to its bound) or the budget refused it; with a
    budget, the month's money as the intake saw it (micro-dollars; None without one)."""

    job: Job | None
    replayed: bool
    pending: int
    used_today: int
    spent: int | None = None
    set_aside: int | None = None


@dataclass(frozen=True)
class StoryToScreen:
    id: int
    job_id: int
    title: str
    body: str
