"""Backups: the whole shelf in one zip that people can read and another installation can
restore.

    data = await export_zip(shelf, timezone)     # the zip's bytes
    result = await import_backup(store, data)    # ImportResult(restored=3, already_here=9)

The zip holds `stories.json` (format `bedtime-stories-backup`, version 1: everything a
restore needs, each story under its stable `uid`) and one Markdown file per story under
`stories/` (title, for whom, when, what it was about, the text), which open as plain text
anywhere. Importing restores each story, with a completed job of its own, at its own time;
a story whose uid is already here is skipped, so importing twice adds nothing twice.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import unicodedata
import uuid
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo

from app.dates import file_stamp, iso_time, when
from app.errors import Invalid
from app.queue.intake import parse_story_request, request_hash
from app.queue.store import JobStore
from app.shelf.store import ShelfStore, StoredStory
from app.stories import PREVIOUSLY_MAX_CHARS, BackupStory, clean_text, reading_minutes, token_count

FORMAT = "bedtime-stories-backup"
FORMAT_VERSION = 1
# Who claimed an imported job (story_jobs.claimed_by): no process, the import itself.
IMPORTER = uuid.uuid5(uuid.NAMESPACE_URL, "urn:bedtime-stories:import")
TITLE_MAX_CHARS = 200
BACKUP_MAX_BYTES = 200 * 1024 * 1024  # far beyond any family's shelf; refuses a zip bomb
_NOT_IN_A_NAME = re.compile(r"[^a-z0-9]+")


class BackupError(Exception):
    """The file is not a backup this app can restore; str(error) says why, in one line."""


@dataclass(frozen=True)
class ImportResult:
    restored: int
    already_here: int


def story_markdown(story: StoredStory | BackupStory, timezone: tzinfo) -> str:
    """One story as a Markdown file (plain text that reads well as it is)."""
    request = story.request
    lines = [f"# {story.title}", ""]
    if request.child_name:
        lines.append(f"- For: {request.child_name}" + (f", age {request.age}" if request.age
                                                       else ""))
    elif request.age:
        lines.append(f"- For: a {request.age}-year-old")
    lines += [
        f"- Written: {when(story.created_at, timezone)}",
        f"- Length: {request.length}, about {reading_minutes(story.body)} min to read aloud",
        f"- About: {request.prompt}",
    ]
    if story.sequel_of_title:
        lines.append(f"- Continues: {story.sequel_of_title}")
    lines += ["", "---", "", story.body.strip(), ""]
    return "\n".join(lines)


def markdown_name(story: StoredStory | BackupStory, timezone: tzinfo) -> str:
    """A file name for the story (ASCII, safe anywhere): its date and time, its title, and
    (in a backup, where two stories may share a title) the start of its uid."""
    ascii_title = unicodedata.normalize("NFKD", story.title).encode("ascii", "ignore").decode()
    slug = _NOT_IN_A_NAME.sub("-", ascii_title.lower()).strip("-")[:60].strip("-") or "story"
    uid = getattr(story, "uid", None)
    suffix = f"-{str(uid)[:8]}" if uid else ""
    return f"{file_stamp(story.created_at, timezone)}-{slug}{suffix}.md"


def story_json(story: BackupStory, file: str) -> dict[str, object]:
    request = story.request
    return {
        "uid": str(story.uid),
        "title": story.title,
        "body": story.body,
        "created_at": iso_time(story.created_at, exact=True),
        "prompt": request.prompt,
        "child_name": request.child_name,
        "age": request.age,
        "length": request.length,
        "favourite": story.favourite,
        "model": story.model,
        "prompt_tokens": story.prompt_tokens,
        "completion_tokens": story.completion_tokens,
        "sequel_of": str(story.sequel_of_uid) if story.sequel_of_uid else None,
        "previously": request.previously,
        "file": file,
    }


def build_zip(stories: list[BackupStory], timezone: tzinfo, *, exported_at: datetime) -> bytes:
    buffer = io.BytesIO()
    entries = []
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for story in stories:
            file = f"stories/{markdown_name(story, timezone)}"
            archive.writestr(file, story_markdown(story, timezone))
            entries.append(story_json(story, file))
        document = {"format": FORMAT, "version": FORMAT_VERSION,
                    "exported_at": iso_time(exported_at, exact=True), "count": len(entries),
                    "stories": entries}
        archive.writestr("stories.json", json.dumps(document, ensure_ascii=False, indent=1))
    return buffer.getvalue()


async def export_zip(shelf: ShelfStore, timezone: tzinfo) -> bytes:
    """Every story on the shelf (not the recently deleted ones) as a backup zip."""
    stories = await shelf.export_stories()
    exported_at = datetime.now(UTC)
    return await asyncio.to_thread(build_zip, stories, timezone, exported_at=exported_at)


def read_backup(data: bytes) -> list[BackupStory]:
    """The stories in a backup (the zip, or its `stories.json` alone), oldest first."""
    if zipfile.is_zipfile(io.BytesIO(data)):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                info = archive.getinfo("stories.json")
                if info.file_size > BACKUP_MAX_BYTES:
                    raise BackupError("stories.json in this zip is too large")
                data = archive.read(info)
        except KeyError:
            raise BackupError("this zip has no stories.json: it is not a story backup") from None
        except (zipfile.BadZipFile, OSError) as error:
            raise BackupError(f"the zip cannot be read ({error})") from None
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        raise BackupError("this is neither a story backup zip nor its stories.json") from None
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise BackupError("this file is not a story backup (no \"format\": \"" + FORMAT + "\")")
    if document.get("version") != FORMAT_VERSION:
        raise BackupError(f"backup version {document.get('version')!r} is not one this app "
                          f"knows (it reads version {FORMAT_VERSION})")
    entries = document.get("stories")
    if not isinstance(entries, list):
        raise BackupError("the backup's \"stories\" is not a list")
    stories = []
    for number, entry in enumerate(entries, start=1):
        try:
            stories.append(_story_from_json(entry))
        except (Invalid, ValueError, TypeError, KeyError) as error:
            message = error.message if isinstance(error, Invalid) else str(error)
            raise BackupError(f"story {number} in the backup is not valid: {message}") from None
    return sorted(stories, key=lambda story: story.created_at)


def _story_from_json(entry: object) -> BackupStory:
    if not isinstance(entry, Mapping):
        raise ValueError("it is not an object")
    request = parse_story_request(
        {name: entry.get(name) for name in ("prompt", "child_name", "age", "length")}
    )
    title = clean_text(_text(entry, "title")).strip()[:TITLE_MAX_CHARS]
    body = clean_text(_text(entry, "body")).strip()
    if not title or not body:
        raise ValueError("a story needs a title and a text")
    created_at = datetime.fromisoformat(_text(entry, "created_at"))
    if created_at.tzinfo is None:
        raise ValueError("created_at has no time zone")
    previously = entry.get("previously")
    if previously is not None:
        previously = clean_text(_text(entry, "previously"))[:PREVIOUSLY_MAX_CHARS] or None
    sequel_of = entry.get("sequel_of")
    favourite = entry.get("favourite", False)
    if not isinstance(favourite, bool):
        raise ValueError("favourite must be true or false")
    return BackupStory(
        uid=uuid.UUID(_text(entry, "uid")),
        title=title,
        body=body,
        created_at=created_at,
        request=replace(request, previously=previously),
        model=clean_text(str(entry.get("model") or "")).strip()[:200] or "unknown",
        prompt_tokens=token_count(entry.get("prompt_tokens")),
        completion_tokens=token_count(entry.get("completion_tokens")),
        favourite=favourite,
        sequel_of_uid=uuid.UUID(_text(entry, "sequel_of")) if sequel_of is not None else None,
    )


def _text(entry: Mapping[str, object], name: str) -> str:
    value = entry.get(name)
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text")
    return value


async def import_backup(store: JobStore, data: bytes) -> ImportResult:
    """Restore every story of a backup that is not here yet (by uid), oldest first, so a
    sequel finds the story it continues. Nothing is written when the file is not valid."""
    stories = await asyncio.to_thread(read_backup, data)
    restored = already_here = 0
    for story in stories:
        if await store.import_story(story, request_hash=request_hash(story.request),
                                    importer=IMPORTER):
            restored += 1
        else:
            already_here += 1
    return ImportResult(restored=restored, already_here=already_here)
