"""A backup's stories read back, each checked, for a restore (app/shelf/imports.py) or a
check alone; the zip itself is written by app/shelf/backup.py.

    count = check_backup(data)                   # its stories, all valid (else BackupError)
    stories = read_stories(data)                 # each checked, one in memory at a time

Every story is checked (its fields' types and ranges, its date, its texts cleaned as the
worker cleans a story) and so are the child profiles; BackupError says why a file is
refused, in one line that names the story (its number, uid and title) and the field.
Reading takes bounded memory whatever the file (app/shelf/archive.py, backup_json.py).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Generator
from datetime import UTC, datetime, timedelta

from app.errors import Invalid
from app.requests import parse_backed_up, stored_text
from app.shelf.archive import BackupError, Source, one_line
from app.shelf.backup_json import stories_json
from app.shelf.backup_narrations import narration_parts
from app.shelf.backup_pictures import picture_name
from app.shelf.children import CHILD_FIELDS, CHILDREN_MAX, parse_child
from app.shelf.store import BackupStory
from app.stories import FALLBACK_TITLE, INT4_MAX, Child, clean_title, token_count

TITLE_MAX_CHARS = 200
MODEL_MAX_CHARS = 200
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_AHEAD = timedelta(days=1)  # a clock somewhat ahead elsewhere, not a story from 2099


def check_backup(source: Source) -> int:
    """How many stories the backup holds, each one checked (and its child profiles);
    BackupError when it is not a backup, or names the first story that is not valid."""
    return sum(1 for _ in read_stories(source, []))


def read_stories(
    source: Source, children: list[Child] | None = None
) -> Generator[BackupStory, None, None]:
    """The backup's stories, checked, in the file's order, one in memory at a time.
    `children`: a list to which its child profiles, checked, are added once all is read."""
    numbers: dict[uuid.UUID, int] = {}  # each uid's story, so that a second can say whose
    with stories_json(source) as reader:
        for number, entry in enumerate(reader.stories(), start=1):
            story = _checked(number, entry)
            if story.uid in numbers:
                raise BackupError(f"story {number}{_named(entry)} is not valid: its uid is "
                                  f"story {numbers[story.uid]}'s too", field="uid")
            numbers[story.uid] = number
            yield story
        if children is not None:
            children.extend(_children_from_json(reader.children))


def _children_from_json(entries: object) -> list[Child]:
    """A backup's child profiles (none in a backup made before there were any)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise BackupError('the backup\'s "children" is not a list')
    if len(entries) > CHILDREN_MAX:
        raise BackupError(f"the backup holds over {CHILDREN_MAX} child profiles")
    children = []
    for number, entry in enumerate(entries, start=1):
        try:
            if not isinstance(entry, dict):
                raise Invalid("it is not a JSON object")
            children.append(parse_child({name: entry[name] for name in CHILD_FIELDS
                                         if name in entry}))
        except Invalid as error:
            raise BackupError(f"child profile {number} is not valid: "
                              f"{error.message.rstrip('.')}", field=error.field) from None
    return children


# -- one story ------------------------------------------------------------------------


def _checked(number: int, entry: object) -> BackupStory:
    """Story `number` of the file, or the BackupError that names it and its fault."""
    try:
        return _story_from_json(entry)
    except Invalid as error:
        reason = error.message.rstrip(".")
        raise BackupError(f"story {number}{_named(entry)} is not valid: {reason}",
                          field=error.field) from None


def _story_from_json(entry: object) -> BackupStory:
    """The story as the shelf keeps it; Invalid names the field that is not valid."""
    if not isinstance(entry, dict):
        raise Invalid("it is not a JSON object")
    request = parse_backed_up(entry)
    return BackupStory(
        uid=_uid(entry, "uid"),
        # as a stored story's title is: no bidi overrides or zero-width characters
        title=clean_title(_required_text(entry, "title", TITLE_MAX_CHARS)) or FALLBACK_TITLE,
        body=_required_text(entry, "body"),
        created_at=_moment(entry, "created_at"),
        request=request,
        model=stored_text(entry, "model", MODEL_MAX_CHARS) or "unknown",
        prompt_tokens=_token_count(entry, "prompt_tokens"),
        completion_tokens=_token_count(entry, "completion_tokens"),
        favourite=_flag(entry, "favourite"),
        sequel_of_uid=_optional_uid(entry, "sequel_of"),
        picture_file=picture_name(entry),
        narration=narration_parts(entry),
    )


def _required_text(entry: dict[str, object], name: str, max_chars: int | None = None) -> str:
    text = stored_text(entry, name, max_chars)
    if text is None:
        raise Invalid(f"{name} must be a text that is not empty", field=name)
    return text


def _moment(entry: dict[str, object], name: str) -> datetime:
    """An ISO 8601 date and time with its offset, between 1970 and tomorrow, in UTC."""
    value = entry.get(name)
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a date and time, as text", field=name)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise Invalid(f"{name} is not a date and time (such as 2026-11-29T20:01:02Z)",
                      field=name) from None
    if moment.utcoffset() is None:
        raise Invalid(f"{name} has no time zone (such as Z or +01:00)", field=name)
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # past year 9999, or before year 1, once in UTC
        moment = EARLIEST - LATEST_AHEAD
    if not EARLIEST <= moment <= datetime.now(UTC) + LATEST_AHEAD:
        raise Invalid(f"{name} must be between 1970 and tomorrow", field=name)
    return moment


def _optional_uid(entry: dict[str, object], name: str) -> uuid.UUID | None:
    return None if entry.get(name) is None else _uid(entry, name)


def _uid(entry: dict[str, object], name: str) -> uuid.UUID:
    value = entry.get(name)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return uuid.UUID(value)
    raise Invalid(f"{name} must be a uuid (such as 0b6f2a4e-5c1d-4f8e-9a3b-2c7d1e0f4a5b)",
                  field=name)


def _token_count(entry: dict[str, object], name: str) -> int | None:
    value = entry.get(name)
    count = token_count(value)
    if value is not None and count is None:
        raise Invalid(f"{name} must be a whole number from 0 to {INT4_MAX}", field=name)
    return count


def _flag(entry: dict[str, object], name: str) -> bool:
    value = entry.get(name, False)
    if not isinstance(value, bool):
        raise Invalid(f"{name} must be true or false", field=name)
    return value


def _named(entry: object) -> str:
    """How a refusal names a story besides its number: its uid and title, where text."""
    if not isinstance(entry, dict):
        return ""
    uid, title = entry.get("uid"), entry.get("title")
    uid = one_line(uid, 40) if isinstance(uid, str) else ""
    title = one_line(title, 60) if isinstance(title, str) else ""
    names = ([f"uid {uid}"] if uid else []) + ([f"“{title}”"] if title else [])
    return f" ({', '.join(names)})" if names else ""

