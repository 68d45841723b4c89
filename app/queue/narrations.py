"""A story read aloud in the queue: its parts' jobs (kind 'narration') and the audio they
store; the only code that knows the names of sql/queries/narrations.sql's statements.

    narrations = NarrationStore(db)
    made = await narrations.make_parts(story_id, key, texts, budget=b, set_aside=[...])
    # Made(outcome, job_ids, ...): made only through app/queue/intake.py (the budget's door)
    stored = await narrations.complete(job_id, boot_id, narration)   # False: not ours
    state = await narrations.state(story_id)        # NarrationState, or None: no story
    audio = await narrations.audio(story_id)        # (content type, bytes, etag) or None

A part's job is claimed, beaten, swept and failed by the story's own statements
(app/queue/store.py's table); its two of its own:

    statement                 transition                         guard (the WHERE)
    insert_narration_jobs     (new) -> pending, one per part     the intake lock: a new key,
      (sql/functions/            not read aloud yet              no part waiting or being
       insert_narration_jobs.sql)                                 read, room in the budget
    complete_narration_part   running -> completed, or           kind 'narration', ours,
                              failed 'interrupted' -> completed  status = 'running' or
                              (the part's audio stored with it)  'interrupted'
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from decimal import Decimal

from app.money import MonthBudget
from app.money.meter import Charge, charge_params
from app.narrating import Narration
from app.narrating.audio import join
from app.queries import Statements
from app.queue.intake_params import INTAKE_LOCK_KEY
from app.queue.jobs import NarrationState
from app.requests import PICTURE_REQUEST_COLUMNS

KEY_PREFIX = "narration:"
KEY_DIGEST_CHARS = 32  # a client's key, hashed: the jobs' keys stay within 255 characters


@dataclass(frozen=True)
class Made:
    """What insert_narration_jobs did: `outcome` ('made', 'replayed', 'in_progress',
    'complete', 'over_budget', 'gone'), the jobs made or replayed (in part order), and the
    month's money as it saw it when it refused (micro-dollars)."""

    outcome: str
    job_ids: list[int]
    spent: int = 0
    set_aside: int = 0


def narration_key(story_id: int, client_key: str) -> str:
    """The stem of a narration's jobs' keys (each part's: the stem, ':' and its number)."""
    digest = hashlib.sha256(client_key.encode()).hexdigest()[:KEY_DIGEST_CHARS]
    return f"{KEY_PREFIX}{story_id}:{digest}"


class NarrationStore(Statements):
    async def make_parts(self, story_id: int, key: str, texts: list[str], *,
                         budget: MonthBudget | None, set_aside: list[int]) -> Made:
        """(new) -> pending for each of `texts` not read aloud already, each holding its
        `set_aside` against the month, unless `budget` has no room for them all."""
        row = await self._one("insert_narration_jobs", {
            "story_id": story_id, "key": key, "texts": texts, "set_asides": set_aside,
            "columns": list(PICTURE_REQUEST_COLUMNS),
            "budget_micros": budget.limit_micros if budget else None,
            "month_start": budget.month_start if budget else None,
            "lock_key": INTAKE_LOCK_KEY})
        return Made(row["outcome"], list(row["job_ids"] or []), row["spent"] or 0,
                    row["set_aside"] or 0)

    async def complete(self, job_id: int, boot_id: uuid.UUID, narration: Narration,
                       charge: Charge | None = None) -> bool:
        """Our part's job -> completed, its audio stored in the same statement, and its
        call's `charge` in the ledger."""
        stored = await self._val("complete_narration_part", {
            "job_id": job_id, "boot_id": boot_id, "content_type": narration.content_type,
            "audio": narration.audio, "seconds": Decimal(f"{narration.seconds:.2f}"),
            "model": narration.model, "voice": narration.voice, **charge_params(charge)})
        return stored is not None

    async def state(self, story_id: int) -> NarrationState | None:
        """None: no such story (or deleted)."""
        row = await self._one("narration_state", {"story_id": story_id})
        if row is None:
            return None
        return NarrationState(
            story_id, row["stored"], row["parts"],
            float(row["seconds"]) if row["seconds"] is not None else None, row["etag"],
            row["pending"], row["running"], row["failed"])

    async def audio(self, story_id: int) -> tuple[str, bytes, str] | None:
        """(content type, the whole narration, its etag); None until every part is kept."""
        rows = await self._all("narration_audio", {"story_id": story_id})
        if not rows or len(rows) != rows[0]["parts"]:
            return None
        etag = hashlib.md5(",".join(row["etag"] for row in rows).encode()).hexdigest()
        return rows[0]["content_type"], join([bytes(row["audio"]) for row in rows]), etag

    async def story_there(self, story_id: int) -> bool:
        return await self._val("narration_source", {"story_id": story_id}) is not None
