"""A story's picture in the queue: its jobs (kind 'picture') and the picture they store;
the only code that knows the names of sql/queries/pictures.sql's statements.

    pictures = PictureStore(db)
    job = await pictures.make_job(story_id, key, budget=b, set_aside=micros)  # None: replayed
    # key, or no story (made only through app/queue/intake.py and storing.py: the budget's door)
    stored = await pictures.complete(job_id, boot_id, drawn)   # False: not ours any more
    states = await pictures.states([story_id, ...])     # {story id: PictureState}

A picture job is claimed, beaten, swept and failed by the story's own statements
(app/queue/store.py's table); its two of its own:

    statement                 transition                         guard (the WHERE)
    insert_picture_job        (new) -> pending, or (new) ->      a new key (insert_job's ON
      (sql/functions/            failed 'over_budget' when the   CONFLICT), one picture at a
       insert_picture_job.sql)   month's budget has no room      time (migration 024's index)
    complete_picture_job      running -> completed, or           kind 'picture', ours,
                              failed 'interrupted' -> completed  status = 'running' or
                              (the picture stored with it)       'interrupted'
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

import asyncpg

from app.errors import Conflict
from app.i18n import N_
from app.money import MonthBudget
from app.money.meter import Charge, charge_params
from app.queries import Queryable, Statements
from app.queue.intake_params import INTAKE_LOCK_KEY
from app.queue.jobs import Job, PictureState, picture_state
from app.requests import PICTURE_REQUEST_COLUMNS

KEY_PREFIX = "picture:"
KEY_DIGEST_CHARS = 32  # a client's key, hashed: the job's key stays within 255 characters


@dataclass(frozen=True)
class Drawn:
    """A picture drawn, and its small version, to store."""

    image: bytes
    content_type: str
    small: bytes
    small_type: str
    model: str


def picture_key(story_id: int, client_key: str | None = None) -> str:
    """The job key of a story's first picture, or of a redraw asked for with `client_key`."""
    if client_key is None:
        return f"{KEY_PREFIX}{story_id}"
    digest = hashlib.sha256(client_key.encode()).hexdigest()[:KEY_DIGEST_CHARS]
    return f"{KEY_PREFIX}{story_id}:{digest}"


class PictureStore(Statements):
    async def make_job(self, story_id: int, key: str, *, budget: MonthBudget | None,
                       set_aside: int, on: Queryable | None = None) -> Job | None:
        """(new) -> pending, holding `set_aside` against the month; or (new) -> failed
        'over_budget' (skipped: drawn by nobody) when `budget` has no room for it. None when
        the key made one already (JobStore.get_by_key finds it) or the story is gone;
        Conflict `picture_in_progress` while one is pending or running."""
        try:
            row = await self._one("insert_picture_job", {
                "story_id": story_id, "idempotency_key": key,
                "columns": list(PICTURE_REQUEST_COLUMNS), "set_aside": set_aside,
                "budget_micros": budget.limit_micros if budget else None,
                "month_start": budget.month_start if budget else None,
                "lock_key": INTAKE_LOCK_KEY}, on=on)
        except asyncpg.UniqueViolationError:
            raise Conflict(N_("A picture for this story is being drawn already."),
                           code="picture_in_progress") from None
        return Job.from_row(row) if row is not None and row["id"] is not None else None

    async def complete(self, job_id: int, boot_id: uuid.UUID, drawn: Drawn,
                       charge: Charge | None = None) -> bool:
        """Our picture job -> completed, its picture stored in the same statement, and its
        call's `charge` in the ledger."""
        stored = await self._val("complete_picture_job", {
            "job_id": job_id, "boot_id": boot_id, "content_type": drawn.content_type,
            "image": drawn.image, "small_type": drawn.small_type, "small": drawn.small,
            "model": drawn.model, **charge_params(charge)})
        return stored is not None

    async def states(self, story_ids: list[int]) -> dict[int, PictureState]:
        rows = await self._all("picture_states", {"story_ids": story_ids})
        return {row["story_id"]: picture_state(row, row["story_id"]) for row in rows}

    async def state(self, story_id: int) -> PictureState | None:
        """None: no such story (or deleted)."""
        return (await self.states([story_id])).get(story_id)

    async def image(self, story_id: int, *, small: bool) -> tuple[str, bytes, str] | None:
        """(content type, bytes, etag) of the story's picture, whole or small."""
        row = await self._one("picture_image", {"story_id": story_id, "small": small})
        return (row["content_type"], bytes(row["image"]), row["etag"]) if row else None

    async def source(self, story_id: int) -> tuple[str, str] | None:
        """(title, text) of the story a picture is drawn from; None: gone."""
        row = await self._one("picture_for_drawing", {"story_id": story_id})
        return (row["title"], row["body"]) if row else None
