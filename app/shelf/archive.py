"""A story backup's stories.json, read with bounded memory: from a zip (its member
counted as it is read, the zip's own list of files capped, zip64 and unbounded
compressions refused) or alone, a piece at a time, each story parsed on its own.

    with stories_json(source) as reader:      # BackupError: not a backup, in one line
        reader.fields; for entry in reader.stories(): ...
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import os
import re
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
STORIES_MAX = 25_000  # a story every night for 68 years
STORY_MAX_CHARS = 512 * 1024  # one story in stories.json: some 80,000 words
FIELD_MAX_CHARS = 64 * 1024  # any other value in stories.json
FIELDS_MAX = 64  # fields of the document itself (an export writes six)
# A zip's list of files, which zipfile reads whole (some 500 bytes of memory for each
# 46-byte entry): STORIES_MAX Markdown files fit, with room to spare.
ZIP_DIRECTORY_MAX_BYTES = 4 * MIB
READ_CHUNK_BYTES = 256 * 1024

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


# -- the file -------------------------------------------------------------------------


@contextlib.contextmanager
def stories_json(source: Source) -> Iterator[_JsonReader]:
    """stories.json of a backup, to read its fields and its stories one by one."""
    with _stories_stream(source) as stream:
        yield _JsonReader(stream)


@contextlib.contextmanager
def _stories_stream(source: Source) -> Iterator[_Capped]:
    """stories.json, as a stream of at most BACKUP_MAX_BYTES: the member of a backup zip,
    or the file itself when it is stories.json alone."""
    file = io.BytesIO(source) if isinstance(source, bytes) else source
    directory_bytes = _zip_directory_size(file)
    file.seek(0)
    if directory_bytes is None:
        yield _Capped(file, "this file")
        return
    if directory_bytes > ZIP_DIRECTORY_MAX_BYTES:
        raise BackupError("this zip lists too many files to be a story backup")
    with contextlib.ExitStack() as opened:
        try:
            archive = opened.enter_context(zipfile.ZipFile(file))
            member = opened.enter_context(_open_stories_json(archive))
        except _UNREADABLE as error:
            raise BackupError(f"the zip cannot be read ({one_line(str(error), 100)})") from None
        yield _Capped(member, "stories.json in this zip")


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


class _Capped:
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


_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _JsonReader:
    """stories.json read a piece at a time: the document's fields and its stories one by
    one, each parsed on its own (json's raw_decode) and of bounded size, so memory holds a
    piece of the file and one story, never the whole."""

    def __init__(self, stream: _Capped) -> None:
        self._stream = stream
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self._json = json.JSONDecoder()
        self._text = ""  # the piece of the file at hand
        self._at = 0  # where reading is in it
        self._passed = 0  # characters read before it, to say where an error is
        self._ended = False
        self.children: object = None  # the document's "children", once read

    def stories(self) -> Iterator[object]:
        """Each story's entry as JSON gives it. The document's format and version are
        checked when its stories begin (if they came first, as in an export) and at its end."""
        fields: dict[str, object] = {}
        found = False
        self._take("{", "this is neither a story backup zip nor its stories.json")
        if self._peek() == "}":
            self._at += 1
        else:
            for _ in range(FIELDS_MAX):
                name = self._value(FIELD_MAX_CHARS, "a field's name")
                if not isinstance(name, str):
                    raise self._not_json()
                self._take(":")
                if name == "stories":
                    if found:
                        raise BackupError('the backup has "stories" twice')
                    found = True
                    if "format" in fields:
                        _check_format(fields)
                    yield from self._stories()
                else:  # kept only if it is the format or the version: nothing else is read
                    value = self._value(FIELD_MAX_CHARS, f"the backup's {one_line(name, 40)!r}")
                    if name in ("format", "version"):
                        fields[name] = value
                    elif name == "children":
                        self.children = value
                if self._take(",}") == "}":
                    break
            else:
                raise BackupError(f"the backup has over {FIELDS_MAX} fields")
        if self._peek() != "":
            raise BackupError("stories.json goes on after its end")
        _check_format(fields)
        if not found:
            raise BackupError('the backup\'s "stories" is not a list')

    def _stories(self) -> Iterator[object]:
        self._take("[", 'the backup\'s "stories" is not a list')
        if self._peek() == "]":
            self._at += 1
            return
        for number in range(1, STORIES_MAX + 1):
            yield self._value(STORY_MAX_CHARS, f"story {number}")
            if self._take(",]") == "]":
                return
        raise BackupError(f"the backup holds over {STORIES_MAX:,} stories: more than one "
                          "import takes")

    def _value(self, max_chars: int, what: str) -> object:
        """The next JSON value, which must be shorter than `max_chars` characters."""
        self._peek()
        self._fill(max_chars)
        try:
            value, end = self._json.raw_decode(self._text, self._at)
        except RecursionError:
            raise BackupError(f"{what} is nested too deeply") from None
        except ValueError:  # not JSON, or cut off at the end of the piece: too long
            raise BackupError(f"{what} is not valid JSON, or is over {max_chars:,} "
                              f"characters (near character {self._where()})") from None
        if end - self._at >= max_chars:
            raise BackupError(f"{what} is over {max_chars:,} characters")
        self._at = end
        return value

    def _take(self, expected: str, refusal: str | None = None) -> str:
        """The next character, which must be one of `expected`."""
        char = self._peek()
        if not char or char not in expected:
            raise BackupError(refusal) if refusal else self._not_json()
        self._at += 1
        return char

    def _peek(self) -> str:
        """The next character that is not white space, left unread ("" at the end)."""
        while True:
            blank = _WHITESPACE.match(self._text, self._at)
            assert blank is not None  # it always matches, if only ""
            self._at = blank.end()
            if self._at < len(self._text) or self._ended:
                return self._text[self._at:self._at + 1]
            self._fill(1)

    def _fill(self, chars: int) -> None:
        """At least `chars` characters left to read in the piece at hand, or all there is."""
        if len(self._text) - self._at >= chars or self._ended:
            return
        pieces = [self._text[self._at:]]
        have = len(pieces[0])
        while have < chars and not self._ended:
            data = self._stream.read(READ_CHUNK_BYTES)
            self._ended = not data
            try:
                piece = self._utf8.decode(data, final=self._ended)
            except UnicodeDecodeError:
                raise BackupError("stories.json is not UTF-8 text") from None
            pieces.append(piece)
            have += len(piece)
        self._passed += self._at
        self._text, self._at = "".join(pieces), 0

    def _where(self) -> int:
        return self._passed + self._at

    def _not_json(self) -> BackupError:
        return BackupError(f"stories.json is not valid JSON (near character {self._where()})")


def _check_format(fields: dict[str, object]) -> None:
    if fields.get("format") != FORMAT:
        raise BackupError(f'this file is not a story backup (no "format": "{FORMAT}")')
    version = fields.get("version")
    if type(version) is not int or version != FORMAT_VERSION:  # not True, not 1.0
        shown = f" {str(version)[:20]}" if type(version) is int else ""
        raise BackupError(f"backup version{shown} is not one this app knows (it reads "
                          f"version {FORMAT_VERSION})")
