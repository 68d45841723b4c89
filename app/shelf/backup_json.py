"""A backup's stories.json read a piece at a time: the document's fields and its stories one
by one, each parsed on its own and of bounded size, so memory holds a piece of the file and
one story, never the whole.

    with stories_json(source) as reader:      # BackupError: not a backup, in one line
        for entry in reader.stories(): ...    # then reader.children
"""

from __future__ import annotations

import codecs
import contextlib
import json
import re
from collections.abc import Iterator

from app.shelf.archive import (
    FORMAT,
    FORMAT_VERSION,
    BackupError,
    Capped,
    Source,
    one_line,
    stories_stream,
)

STORIES_MAX = 25_000  # a story every night for 68 years
STORY_MAX_CHARS = 512 * 1024  # one story in stories.json: some 80,000 words
FIELD_MAX_CHARS = 64 * 1024  # any other value in stories.json
FIELDS_MAX = 64  # fields of the document itself (an export writes six)
READ_CHUNK_BYTES = 256 * 1024


@contextlib.contextmanager
def stories_json(source: Source) -> Iterator[_JsonReader]:
    """stories.json of a backup, to read its fields and its stories one by one."""
    with stories_stream(source) as stream:
        yield _JsonReader(stream)


_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _JsonReader:
    """stories.json read a piece at a time: the document's fields and its stories one by
    one, each parsed on its own (json's raw_decode) and of bounded size, so memory holds a
    piece of the file and one story, never the whole."""

    def __init__(self, stream: Capped) -> None:
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
