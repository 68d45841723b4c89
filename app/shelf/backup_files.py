"""Scheduled backups on disk (BACKUP_DIR): each file written whole or not at all, named by
its moment in UTC, and only the app's own older files removed. No database, no event loop:
these run in a thread.

    path = write_backup(folder, data, moment)     # .../bedtime-stories-20261129T200102Z.zip
    removed = prune_backups(folder, keep=14)      # the older of the app's own files
    failure_reason(error, folder)                 # "the disk of /backups is read-only": the log's
    failure_cause(error)                          # "folder_missing": the code a page words
    folder_problem(folder)                        # None, or why a backup would fail there
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path

# The app's own backups, and nothing else: a file by any other name in the folder (a
# downloaded bedtime-stories-2026-11-29.zip, a copy, someone's notes) is never touched.
# The UTC stamp sorts as it reads, so the newest sort last.
BACKUP_FILE = re.compile(r"bedtime-stories-\d{8}T\d{6}Z\.zip")


def backup_name(moment: datetime) -> str:
    """`bedtime-stories-20261129T200102Z.zip`: the moment in UTC, to the second."""
    utc = moment.astimezone(UTC)
    return f"bedtime-stories-{utc.year:04}{utc:%m%dT%H%M%S}Z.zip"


def write_backup(folder: Path, data: bytes, moment: datetime) -> Path:
    """The zip written under a hidden temporary name, flushed to the disk, then renamed: a
    file by the backup's name is always a whole backup, whatever happens meanwhile."""
    final = folder / backup_name(moment)
    temporary = folder / f".{final.name}.{uuid.uuid4().hex[:8]}.partial"
    try:
        with open(temporary, "xb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    _sync_folder(folder)  # the rename itself, on the disk
    return final


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system can sync a folder
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def prune_backups(folder: Path, *, keep: int) -> list[str]:
    """Remove all but the newest `keep` of the app's own backups; the names removed."""
    with os.scandir(folder) as entries:
        names = sorted(entry.name for entry in entries
                       if BACKUP_FILE.fullmatch(entry.name)
                       and entry.is_file(follow_symlinks=False))
    removed = names[:-keep] if keep > 0 else names
    for name in removed:
        (folder / name).unlink(missing_ok=True)  # another process may have removed it first
    return removed


def failure_cause(error: OSError) -> str:
    """Why a backup could not be written, as a code (the schedule keeps it; the home page
    words it for the family without the server's paths): `folder_missing`, `no_permission`,
    `disk_full`, `read_only`, or `not_written`."""
    code = error.errno
    if code in (errno.ENOENT, errno.ENOTDIR):
        return "folder_missing"
    if code in (errno.EACCES, errno.EPERM):
        return "no_permission"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "disk_full"
    if code == errno.EROFS:
        return "read_only"
    return "not_written"


def failure_reason(error: OSError, folder: Path) -> str:
    """Why a backup could not be written, as a short phrase whoever runs the app can act
    on (the log's, with the folder)."""
    code = error.errno
    if code == errno.ENOENT:
        return f"the folder {folder} does not exist"
    if code == errno.ENOTDIR:
        return f"{folder} is not a folder"
    if code in (errno.EACCES, errno.EPERM):
        return f"no permission to write in {folder}"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full"
    if code == errno.EROFS:
        return f"the disk of {folder} is read-only"
    return f"it could not be written in {folder} ({error.strerror or type(error).__name__})"


def folder_problem(folder: Path) -> str | None:
    """Why a backup would fail in `folder` now, as failure_reason says it; None: none seen.
    A missing folder is not made: it most often means the volume is not mounted, and a
    backup on the machine's own disk would be lost with it."""
    if not folder.exists():
        return failure_reason(OSError(errno.ENOENT, "missing"), folder)
    if not folder.is_dir():
        return failure_reason(OSError(errno.ENOTDIR, "not a folder"), folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        return failure_reason(OSError(errno.EACCES, "no permission"), folder)
    return None
