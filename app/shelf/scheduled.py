"""Scheduled backups: every BACKUP_EVERY_H, one process, whichever is free, writes the same
zip as "Download all stories" into BACKUP_DIR, then keeps the newest BACKUP_KEEP.

    backups = ScheduledBackups(schedules, shelf, folder=..., every_s=..., keep=14, timezone=tz)
    backups.check_folder()                       # at start-up: a log line if it is unusable
    task = asyncio.create_task(backups.run())    # every process with BACKUP_DIR runs one
    await backups.tick()                         # one look: a backup if the turn is ours
    await backup_notice(schedules, tz)           # the home page's line, or None

Each turn is claimed in the database (app/shelf/schedule.py), so however many processes
run, one writes each backup, and no lock is held while it does. A failure is logged once
(ERROR) and kept in the schedule's row, so every process's home page says so until a
backup succeeds; nothing else is affected.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import KW_ONLY, dataclass
from datetime import tzinfo
from pathlib import Path

from app.db import DATABASE_UNAVAILABLE
from app.i18n import N_, gettext
from app.i18n.formats import when
from app.logs import log, log_caught
from app.shelf.backup import export_zip
from app.shelf.backup_files import (
    failure_cause,
    failure_reason,
    folder_problem,
    prune_backups,
    write_backup,
)
from app.shelf.schedule import Schedules, Turn
from app.shelf.store import ShelfStore

BACKUP_SCHEDULE = "backup"
# The longest wait between two looks at the schedule (the wait is otherwise until the
# next turn): a bound, should the row change under this process.
BACKUP_RECHECK_S = 600.0
BACKUP_MIN_WAIT_S = 0.5  # never look again sooner than this
BACKUP_RETRY_S = 30.0  # after the database could not be asked
# Why the last backup failed, as the home page words it for the family: no folder, no
# setting name (the log line has those, for whoever runs the app). A cause not listed (a
# row kept from an older version) is said as `not_written`.
FAILURE_CAUSES = {
    "folder_missing": N_("its folder cannot be found"),
    "no_permission": N_("the app may not write in its folder"),
    "disk_full": N_("the disk is full"),
    "read_only": N_("the disk cannot be written to"),
    "not_written": N_("it could not be written"),
    "not_read": N_("the stories could not be read"),
}


@dataclass
class ScheduledBackups:
    schedules: Schedules
    shelf: ShelfStore
    _: KW_ONLY
    folder: Path
    every_s: float
    keep: int
    timezone: tzinfo
    recheck_s: float = BACKUP_RECHECK_S

    def check_folder(self) -> None:
        """Say at start-up where backups go, and if they cannot go there. Start-up goes on:
        a volume mounted later, or fixed permissions, heal it with no restart."""
        log("backups_scheduled", folder=self.folder, every_h=f"{self.every_s / 3600:g}",
            keep=self.keep)
        problem = folder_problem(self.folder)
        if problem is not None:
            log("backup_folder_unusable", level=logging.WARNING, folder=self.folder,
                reason=problem)

    async def run(self) -> None:
        """Look at the schedule, back up when the turn is ours, wait for the next; a
        database blip is waited out, never raised."""
        ensured = False
        while True:
            try:
                if not ensured:
                    await self.schedules.ensure(BACKUP_SCHEDULE, every_s=self.every_s)
                    ensured = True
                wait_s = await self.tick()
            except Exception as error:
                # An outage is waited out in one line; anything else is a defect: its traceback.
                log_caught("backup_schedule_unavailable", error, expected=DATABASE_UNAVAILABLE,
                           retry_in_s=BACKUP_RETRY_S)
                wait_s = BACKUP_RETRY_S
            await asyncio.sleep(min(max(wait_s, BACKUP_MIN_WAIT_S), self.recheck_s))

    async def tick(self) -> float:
        """One look: if a backup is due and this process wins its turn, write it. Seconds
        until the next turn."""
        turn = await self.schedules.claim(BACKUP_SCHEDULE)
        if turn is not None:
            await self.back_up(turn)
        due_in_s = await self.schedules.due_in_s(BACKUP_SCHEDULE)
        if due_in_s is None:  # no row (the database was replaced): make it, and look again
            await self.schedules.ensure(BACKUP_SCHEDULE, every_s=self.every_s)
            return 0.0
        return due_in_s

    async def back_up(self, turn: Turn) -> None:
        """The turn's backup, written and the old ones pruned; its outcome recorded."""
        try:
            # The same zip as the download: the shelf is read (no transaction held open
            # beyond its reads) and the zip built in a thread.
            data = await export_zip(self.shelf, self.timezone)
        except Exception as error:  # the database went away, or a bug (its traceback)
            await self._failed(turn, "the stories could not be read from the database",
                               "not_read", error=repr(error),
                               exc_info=not isinstance(error, DATABASE_UNAVAILABLE))
            return
        try:
            path = await asyncio.to_thread(write_backup, self.folder, data, turn.claimed_at)
        except OSError as error:  # the folder: missing, not one, no permission, disk full
            await self._failed(turn, failure_reason(error, self.folder), failure_cause(error))
            return
        except Exception as error:  # a bug: its traceback
            await self._failed(turn, "the file could not be written", "not_written",
                               error=repr(error), exc_info=True)
            return
        await self.schedules.succeeded(BACKUP_SCHEDULE, turn, file=path.name)
        try:
            removed = await asyncio.to_thread(prune_backups, self.folder, keep=self.keep)
        except OSError as error:  # the backup is written; the old ones stay, and say so
            log("backup_prune_failed", level=logging.ERROR, folder=self.folder,
                reason=failure_reason(error, self.folder))
            removed = []
        log("backup_written", file=path, bytes=len(data), removed=len(removed))

    async def _failed(self, turn: Turn, reason: str, cause: str, *, exc_info: bool = False,
                      **fields: object) -> None:
        log("backup_failed", level=logging.ERROR, exc_info=exc_info, folder=self.folder,
            reason=reason, cause=cause, **fields)
        await self.schedules.failed(BACKUP_SCHEDULE, turn, reason=cause)


async def backup_notice(schedules: Schedules, timezone: tzinfo) -> str | None:
    """"The last backup failed: <why>. Last good backup: <when>." while the last one
    failed; None otherwise (or when no process makes backups)."""
    state = await schedules.state(BACKUP_SCHEDULE)
    if state is None or state.last_error is None:
        return None
    why = gettext(FAILURE_CAUSES.get(state.last_error, FAILURE_CAUSES["not_written"]))
    if state.last_ok_at is None:
        return gettext("The last backup failed: %(why)s. Last good backup: never.") % {
            "why": why}
    return gettext("The last backup failed: %(why)s. Last good backup: %(when)s.") % {
        "why": why, "when": when(state.last_ok_at, timezone)}
