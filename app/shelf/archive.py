"""A story backup's zip, read with bounded memory: its stories.json (the member counted as
it is read, the zip's own list of files capped, zip64 and unbounded compressions refused;
or the file itself when it is stories.json alone) and any other member (a picture, a part
read aloud). BackupError says, in one line, why a file is not a backup this app restores.

    with stories_stream(source) as stream: ...    # stories.json's bytes: app/shelf/backup_json.py
    data = read_member(source, name, max_bytes=PART_MAX_BYTES, field="narration")
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO, BinaryIO

from app.stories import clean_text

FORMAT = "bedtime-stories-backup"
FORMAT_VERSION = 1
STORIES_JSON = "stories.json"
MIB = 1024 * 1024
BACKUP_MAX_BYTES = 200 * MIB  # stories.json: far beyond any family's shelf
# A zip's list of files, which zipfile reads whole (some 500 bytes of memory for each
# 46-byte entry): STORIES_MAX (app/shelf/backup_json.py) Markdown files fit, with room to spare.
ZIP_DIRECTORY_MAX_BYTES = 4 * MIB

# A backup: its bytes, or a file open for reading (read twice: checked, then restored).
Source = bytes | BinaryIO


class BackupError(Exception):
    """The file is not a backup this app can restore; str(error) says why, in one line,
    and `field` names the story's field at fault, if one is."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def one_line(text: str, max_chars: int) -> str:
    """Text from the file as a message can quote it: cleaned, on one line, cut short."""
    return " ".join(clean_text(text).split())[:max_chars]


def read_member(source: Source, name: str, *, max_bytes: int, field: str) -> bytes:
    """A member of the zip, refused (BackupError, naming it as the story's `field`: "the
    picture pictures/....png is over 8 MB") when the zip's own list says it is over
    `max_bytes`; at most `max_bytes` + 1 bytes are read, for the caller's check to refuse
    a member that holds more than its list says."""
    file = io.BytesIO(source) if isinstance(source, bytes) else source
    file.seek(0)
    try:
        with zipfile.ZipFile(file) as archive:
            info = archive.getinfo(name)
            if info.file_size > max_bytes:
                raise BackupError(f"the {field} {name} is over {max_bytes // MIB} MB",
                                  field=field)
            with archive.open(info) as member:
                return member.read(max_bytes + 1)
    except KeyError:
        raise BackupError(f"the {field} {name} is not in this zip", field=field) from None
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise BackupError(f"the {field} {name} cannot be read ({error})", field=field) from None


# -- the file -------------------------------------------------------------------------


@contextlib.contextmanager
def stories_stream(source: Source) -> Iterator[Capped]:
    """stories.json, as a stream of at most BACKUP_MAX_BYTES: the member of a backup zip,
    or the file itself when it is stories.json alone."""
    file = io.BytesIO(source) if isinstance(source, bytes) else source
    directory_bytes = _zip_directory_size(file)
    file.seek(0)
    if directory_bytes is None:
        yield Capped(file, "this file")
        return
    if directory_bytes > ZIP_DIRECTORY_MAX_BYTES:
        raise BackupError("this zip lists too many files to be a story backup")
    with contextlib.ExitStack() as opened:
        try:
            archive = opened.enter_context(zipfile.ZipFile(file))
            member = opened.enter_context(_open_stories_json(archive))
        except _UNREADABLE as error:
            raise BackupError(f"the zip cannot be read ({one_line(str(error), 100)})") from None
        yield Capped(member, "stories.json in this zip")


def _open_stories_json(archive: zipfile.ZipFile) -> IO[bytes]:
    try:
        info = archive.getinfo(STORIES_JSON)
    except KeyError:
        raise BackupError("this zip has no stories.json: it is not a story backup") from None
    if info.file_size > BACKUP_MAX_BYTES:
        raise BackupError(f"stories.json in this zip is over {BACKUP_MAX_BYTES // MIB} MB: "
                          "far larger than any story backup")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        # zipfile inflates bzip2 and lzma in pieces of any size: a few KB could be gigabytes.
        raise BackupError("stories.json in this zip is compressed as no story backup is")
    return archive.open(info)


# What a damaged, truncated or odd zip raises as it is opened or read.
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
               RuntimeError, ValueError, struct.error)
# A zip's end record: signature, two disk numbers, two entry counts, the size and offset
# of its list of files (its central directory), and its comment's length.
_ZIP_END = struct.Struct("<4s4H2LH")
_ZIP_END_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"  # the first 4 of its 20 bytes, just before the end record
_ZIP64_LOCATOR_BYTES = 20


def _zip_directory_size(file: BinaryIO) -> int | None:
    """How many bytes of list of files zipfile will read from this zip, as its end record
    says, found where zipfile finds it (the last 22 bytes, else the last such record in
    the final 64 KiB); None when the file is not a zip. A zip64 end record (needed only past
    65,535 files or 4 GB) is refused: it could give zipfile another size."""
    size = file.seek(0, os.SEEK_END)
    start = max(size - _ZIP_END.size - 0xFFFF, 0)
    file.seek(start)
    tail = file.read()
    at = len(tail) - _ZIP_END.size
    if at < 0:
        return None
    if not (tail.startswith(_ZIP_END_SIGNATURE, at) and tail.endswith(b"\0\0")):
        at = tail.rfind(_ZIP_END_SIGNATURE)
        if at < 0 or len(tail) - at < _ZIP_END.size:
            return None
    if start + at >= _ZIP64_LOCATOR_BYTES:
        file.seek(start + at - _ZIP64_LOCATOR_BYTES)
        if file.read(len(_ZIP64_LOCATOR)) == _ZIP64_LOCATOR:
            raise BackupError("this zip is in the zip64 form, which no story backup needs")
    entries: int = _ZIP_END.unpack_from(tail, at)[5]
    return entries


class Capped:
    """A stream that gives at most BACKUP_MAX_BYTES. A zip's list of files can lie about a
    member's size, so the bytes are counted as they come; and a damaged zip often shows
    only as its member is read."""

    def __init__(self, stream: IO[bytes], name: str) -> None:
        self._stream = stream
        self._name = name
        self._count = 0

    def read(self, size: int) -> bytes:
        try:
            data = self._stream.read(size)
        except _UNREADABLE as error:
            raise BackupError(f"{self._name} cannot be read ({one_line(str(error), 100)})"
                              ) from None
        self._count += len(data)
        if self._count > BACKUP_MAX_BYTES:
            raise BackupError(f"{self._name} is over {BACKUP_MAX_BYTES // MIB} MB: "
                              "far larger than any story backup")
        return data
