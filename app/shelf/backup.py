"""Backups: the whole shelf in one zip that people can read and another installation can
restore.

    data = await export_zip(shelf, timezone)     # the zip's bytes
    story_markdown(story, timezone)              # one story as its Markdown file

The zip holds `stories.json` (format `bedtime-stories-backup`, version 1: everything a
restore needs, each story under its stable `uid`) and one Markdown file per story under
`stories/` (title, for whom, when, what it was about, the text), which open as plain text
anywhere.

Importing (app/shelf/imports.py) is all or nothing. Every story is checked first
(app/shelf/backup_reading.py); a file refused writes nothing, and BackupError says why in
one line that names the story and the field. Then all are written in one transaction.

Reading takes bounded memory whatever the file: stories.json is read a piece at a time and
its stories parsed one by one, each of bounded size, never the whole file at once; a zip's
list of files and its stories.json are capped before they are read.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import unicodedata
import uuid
import zipfile
from datetime import UTC, datetime, tzinfo

from app.dates import file_stamp, iso_time, when
from app.illustrating.small import image_type
from app.lengths import reading_minutes
from app.requests import request_json
from app.shelf.archive import FORMAT, FORMAT_VERSION, STORIES_JSON
from app.shelf.backup_narrations import NarrationBackups, NarrationPart, write_parts
from app.shelf.backup_pictures import member_name
from app.shelf.children import Children, child_json
from app.shelf.store import BackupStory, ShelfStore, StoredStory
from app.stories import Child, text_language

_NOT_IN_A_NAME = re.compile(r"[^a-z0-9]+")


def story_markdown(story: StoredStory | BackupStory, timezone: tzinfo) -> str:
    """One story as a Markdown file (plain text that reads well as it is)."""
    request = story.request
    minutes = reading_minutes(story.body, text_language(request.language, story.model))
    lines = [f"# {story.title}", ""]
    if request.child_name:
        lines.append("- For: " + ", and ".join(
            name + (f", age {age}" if age else "")
            for name, age in ((request.child_name, request.age),
                              (request.sibling_name, request.sibling_age)) if name))
    elif request.age:
        lines.append(f"- For: a {request.age}-year-old")
    lines += [
        f"- Written: {when(story.created_at, timezone)}",
        f"- Length: {request.length}, about {minutes} min to read aloud",
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


def story_json(story: BackupStory, file: str, picture: str | None = None,
               narration: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {
        "uid": str(story.uid), "title": story.title, "body": story.body,
        "created_at": iso_time(story.created_at, exact=True),
        **request_json(story.request),
        "favourite": story.favourite, "model": story.model,
        "prompt_tokens": story.prompt_tokens, "completion_tokens": story.completion_tokens,
        "sequel_of": str(story.sequel_of_uid) if story.sequel_of_uid else None,
        "file": file,
        **({"picture": picture} if picture else {}),
        **({"narration": narration} if narration else {}),
    }


def build_zip(stories: list[BackupStory], timezone: tzinfo, *, exported_at: datetime,
              children: list[Child] | None = None,
              narrations: dict[uuid.UUID, list[NarrationPart]] | None = None) -> bytes:
    buffer = io.BytesIO()
    entries = []
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for story in stories:
            file = f"stories/{markdown_name(story, timezone)}"
            archive.writestr(file, story_markdown(story, timezone))
            picture = None
            if story.picture is not None:
                picture = member_name(story.uid, image_type(story.picture) or "image/png")
                archive.writestr(picture, story.picture, compress_type=zipfile.ZIP_STORED)
            narration = write_parts(archive, story.uid, (narrations or {}).get(story.uid, []))
            entries.append(story_json(story, file, picture, narration))
        document = {"format": FORMAT, "version": FORMAT_VERSION,
                    "exported_at": iso_time(exported_at, exact=True), "count": len(entries),
                    "children": [child_json(child) for child in children or []],
                    "stories": entries}
        archive.writestr(STORIES_JSON, json.dumps(document, ensure_ascii=False, indent=1))
    return buffer.getvalue()


async def export_zip(shelf: ShelfStore, timezone: tzinfo) -> bytes:
    """Every story on the shelf (not the recently deleted ones), and the child profiles,
    as a backup zip."""
    stories = await shelf.export_stories()
    children = await Children(shelf.db).all()
    narrations = await NarrationBackups(shelf.db).export()
    exported_at = datetime.now(UTC)
    return await asyncio.to_thread(build_zip, stories, timezone, exported_at=exported_at,
                                   children=children, narrations=narrations)
