"""A backup's stories put on the shelf: the only code besides the job store that makes a
job, and the only code that knows the names of the import's queries (sql/queries/imports.sql).

    result = await import_backup(db, data)   # ImportResult(restored=3, already_here=9)

Every story is checked first (app/shelf/backup_reading.py reads them); then all are
written in one transaction, in the file's order (a backup lists them oldest first, so a
sequel finds the story it continues), each with a completed job of its own at its own time,
marked imported: (new) -> running -> completed, the job store's two import transitions. A
story whose uid is already here is skipped, so importing twice adds nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from app.illustrating.small import small_version
from app.logs import log
from app.queries import Queryable, Statements, transaction_on
from app.requests import request_hash, to_params
from app.shelf.archive import Source
from app.shelf.backup_narrations import NarrationBackups, read_part
from app.shelf.backup_pictures import read_picture
from app.shelf.backup_reading import read_stories
from app.shelf.children import Children
from app.shelf.store import BackupStory
from app.stories import Child

# Who claimed an imported job (story_jobs.claimed_by): no process, the import itself.
IMPORTER = uuid.uuid5(uuid.NAMESPACE_URL, "urn:bedtime-stories:import")


@dataclass(frozen=True)
class ImportResult:
    restored: int
    already_here: int
    children_restored: int = 0


async def import_backup(db: Queryable, source: Source) -> ImportResult:
    """Restore every story of a backup that is not here yet (by uid), and its child
    profiles (each unless one with the same name and age is here already), or none: all
    are checked before any is written, then all are written in one transaction. A backup
    whose profiles would take the household past CHILDREN_MAX is refused (BackupError),
    counted under the profiles' lock so that two imports racing cannot pass it together."""
    children: list[Child] = []
    total = await asyncio.to_thread(checked_stories, source, children)
    async with transaction_on(db) as connection:
        children_restored = await Children(db).restore(children, on=connection)
        with contextlib.closing(read_stories(source)) as stories:
            restored = await ImportStore(connection).import_stories(stories, source)
    return ImportResult(restored=restored, already_here=total - restored,
                        children_restored=children_restored)


def checked_stories(source: Source, children: list[Child]) -> int:
    """How many stories the backup holds, every one, its picture and narration checked."""
    total = 0
    for story in read_stories(source, children):
        if story.picture_file is not None:
            read_picture(source, story.picture_file)
        for part in story.narration:
            assert part.file is not None
            read_part(source, part.file)
        total += 1
    return total


class ImportStore(Statements):
    """`db`: one connection whose open transaction every statement joins (the import's)."""

    async def import_stories(self, stories: Iterable[BackupStory], source: Source) -> int:
        """Put a backup's stories on the shelf, each (with its request's hash) given a
        completed job of its own, made and finished at the story's own time and marked
        imported; a story whose uid is here already is skipped. An error from `stories`,
        such as a story found not valid, rolls every one back with the transaction. The
        number restored."""
        restored = 0
        for story in stories:
            restored += await self._import_story(story, source)
        return restored

    async def _import_story(self, story: BackupStory, source: Source) -> bool:
        if await self._val("story_by_uid", {"uid": story.uid}):
            return False
        job_id = await self._val("import_job", {
            "request": json.dumps(to_params(story.request)), "uid": story.uid,
            "request_hash": request_hash(story.request), "sequel_of_uid": story.sequel_of_uid,
            "created_at": story.created_at, "importer": IMPORTER,
        })
        if job_id is None:  # imported already (by a concurrent import of the same file)
            return False
        story_id = await self._val("import_story", {
            "uid": story.uid, "job_id": job_id, "title": story.title, "body": story.body,
            "model": story.model, "prompt_tokens": story.prompt_tokens,
            "completion_tokens": story.completion_tokens, "created_at": story.created_at,
            "favourite": story.favourite,
        })
        completed = await self._one("complete_imported_job", {
            "job_id": job_id, "story_id": story_id, "created_at": story.created_at})
        if completed is None:  # the guard lost: logged once, as the job store does
            log("guard_lost", level=logging.WARNING, job_id=job_id,
                transition="complete_imported")
        assert completed is not None, "an imported job is ours until it commits"
        if story.picture_file is not None:
            await self._import_picture(story_id, story, source)
        for part in story.narration:  # as it was, byte for byte: read aloud by no job here
            assert part.file is not None
            audio = await asyncio.to_thread(read_part, source, part.file)
            await NarrationBackups(self.db).restore(story_id, part, audio)
        return True

    async def _import_picture(self, story_id: int, story: BackupStory, source: Source) -> None:
        """The story's picture as the backup holds it, its small version made here."""
        assert story.picture_file is not None
        data, content_type = await asyncio.to_thread(read_picture, source, story.picture_file)
        small, small_type = await asyncio.to_thread(small_version, data, content_type)
        await self._val("import_picture", {
            "story_id": story_id, "content_type": content_type, "image": data,
            "small_type": small_type, "small": small, "model": story.model})
