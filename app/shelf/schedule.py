"""Scheduled work, done once by whichever process is free (sql/queries/schedules.sql).

    schedules = Schedules(db)
    await schedules.ensure("backup", every_s=86_400)   # the row, due at once if new
    turn = await schedules.claim("backup")             # Turn, or None: not due, or taken
    await schedules.succeeded("backup", turn, file="...") / failed("backup", turn, reason)
    state = await schedules.state("backup")             # what the home page says of it

A turn is claimed like a job: one guarded UPDATE moves `next_at` on and returns the row
only to the process that moved it; no leader, no lock held while the work is done.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.queries import Statements

# A turn neither done nor failed this long after it was claimed was left by a process that
# died doing it: another takes it (a backup takes seconds; two written is no harm).
TURN_LEASE_S = 30 * 60


@dataclass(frozen=True)
class Turn:
    """A turn this process won: when it was claimed, and how long until the next one."""

    claimed_at: datetime
    due_in_s: float


@dataclass(frozen=True)
class ScheduleState:
    last_ok_at: datetime | None
    last_file: str | None
    last_error: str | None  # a cause code (a backup's: folder_missing ...); None since a success
    last_error_at: datetime | None


class Schedules(Statements):
    async def ensure(self, name: str, *, every_s: float) -> None:
        """The schedule's row, made due at once if it is new; an interval other than the
        row's replaces it (the newest setting wins, see ensure_schedule)."""
        await self._val("ensure_schedule", {"name": name, "every_s": every_s})

    async def claim(self, name: str, *, lease_s: float = TURN_LEASE_S) -> Turn | None:
        """This turn, if it is due and no other process took it first; or a turn another
        process took more than `lease_s` ago and never finished (it died doing it)."""
        row = await self._one("claim_schedule", {"name": name, "lease_s": float(lease_s)})
        return Turn(row["claimed_at"], row["due_in_s"]) if row else None

    async def due_in_s(self, name: str) -> float | None:
        """Seconds until the next turn (negative: due); None when there is no row."""
        due_in_s: float | None = await self._val("schedule_due_in", {"name": name})
        return due_in_s

    async def succeeded(self, name: str, turn: Turn, *, file: str) -> None:
        await self._val("schedule_succeeded",
                        {"name": name, "claimed_at": turn.claimed_at, "file": file})

    async def failed(self, name: str, turn: Turn, *, reason: str) -> None:
        await self._val("schedule_failed",
                        {"name": name, "claimed_at": turn.claimed_at, "reason": reason})

    async def state(self, name: str) -> ScheduleState | None:
        """The last success and failure; None when no process keeps the schedule."""
        row = await self._one("schedule_state", {"name": name})
        if row is None:
            return None
        return ScheduleState(row["last_ok_at"], row["last_file"], row["last_error"],
                             row["last_error_at"])
