"""The family's shelf in the database: stories on it, found, starred, deleted and restored,
their sequels, and the whole shelf for a backup. The only code that knows the shelf
queries' names (sql/queries/shelf.sql); none of them writes a job's status.

    shelf = ShelfStore(db)
    story = await shelf.get_story(17)           # None: not on the shelf
    page = await shelf.library("owl", page=1)   # a search, favourites first
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.languages import DEFAULT_LANGUAGE, language_of
from app.lengths import minutes_to_read, reading_minutes
from app.queries import Statements
from app.queue.jobs import CardStory, PictureState, Screening, picture_state
from app.requests import request_from_row
from app.shelf.backup_narrations import NarrationPart
from app.stories import (
    DELETED_KEEP_S,
    StoryRequest,
    listeners,
    text_language,
)

LIBRARY_PAGE_SIZE = 50

# A search this short (or with no letters or digits) is a plain substring, not words.
SEARCH_LETTERS_MAX_CHARS = 2
SEARCH_WORDS_MAX = 10
_SEARCH_WORD = re.compile(r"[^\W_]+")

@dataclass(frozen=True)
class StoredStory:
    id: int
    job_id: int
    title: str
    body: str
    model: str
    created_at: datetime
    request: StoryRequest
    favourite: bool = False
    uid: uuid.UUID | None = None  # the same in every installation a backup restores it to
    sequel_of_title: str | None = None  # the story it continues, while that is on the shelf

    @property
    def reading_minutes(self) -> int:
        return reading_minutes(self.body, self.language)

    @property
    def language(self) -> str:
        """The language its text is in (for `lang`): as asked, unless the demo wrote it."""
        return text_language(self.request.language, self.model)

@dataclass(frozen=True)
class BackupStory:
    """A story as a backup keeps it: all it takes to put it on another shelf. Its request's
    `sequel_of` is unused (ids differ between installations): `sequel_of_uid` says it."""

    uid: uuid.UUID
    title: str
    body: str
    created_at: datetime
    request: StoryRequest
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    favourite: bool = False
    sequel_of_uid: uuid.UUID | None = None
    sequel_of_title: str | None = None
    picture: bytes | None = None  # exported: its bytes; read from a backup: None
    picture_file: str | None = None  # read from a backup: its zip member
    narration: tuple[NarrationPart, ...] = ()  # read from a backup: its parts' members

@dataclass(frozen=True)
class StorySummary:
    id: int
    job_id: int
    title: str
    child_name: str | None
    created_at: datetime
    favourite: bool = False
    # The library's rows say more (the home page's short list does not need it):
    prompt: str | None = None  # what the story was about
    age: int | None = None
    length: str | None = None
    words: int = 0
    characters: int = 0  # those of its text but its spaces (a language without spaces')
    series_id: int | None = None
    sequel_of: int | None = None
    sequel_of_title: str | None = None  # the story it continues, while that is on the shelf
    sibling_name: str | None = None  # a sibling story's second child
    language: str = DEFAULT_LANGUAGE  # asked for (its text's: the `text_language` filter)
    model: str = ""

    @property
    def reading_minutes(self) -> int:
        """Minutes to read it aloud, slowly; at least one."""
        spoken = language_of(text_language(self.language, self.model))
        return minutes_to_read(self.words if spoken.spaced else self.characters, spoken)

    @property
    def listeners(self) -> str | None:
        return listeners(self.child_name, self.sibling_name)

_LIBRARY_COLUMNS = ("prompt", "age", "length", "words", "characters", "series_id",
                    "sequel_of", "sequel_of_title", "sibling_name", "language", "model")

def _summary(row: Any) -> StorySummary:
    return StorySummary(
        id=row["id"], job_id=row["job_id"], title=row["title"], child_name=row["child_name"],
        created_at=row["created_at"], favourite=row["favourite"],
        **{name: row[name] for name in _LIBRARY_COLUMNS if name in row},
    )

@dataclass(frozen=True)
class LibraryPage:
    stories: list[StorySummary]
    more: bool  # another page follows

@dataclass(frozen=True)
class DeletedStory:
    id: int
    title: str
    child_name: str | None
    prompt: str
    created_at: datetime
    deleted_at: datetime
    purge_at: datetime  # when it goes for good
    sibling_name: str | None = None
    language: str = DEFAULT_LANGUAGE  # asked for (its text's: the `text_language` filter)
    model: str = ""

    @property
    def listeners(self) -> str | None:
        return listeners(self.child_name, self.sibling_name)

def search_words(search: str) -> list[str]:
    """The words of a library search (letters and digits only, so they are safe to put in
    a tsquery); [] when the search is short or has none: then it is a plain substring."""
    if len(search) <= SEARCH_LETTERS_MAX_CHARS:
        return []
    return _SEARCH_WORD.findall(search.lower())[:SEARCH_WORDS_MAX]


class ShelfStore(Statements):
    async def get_story(self, story_id: int) -> StoredStory | None:
        row = await self._one("get_story", {"story_id": story_id})
        if row is None:
            return None
        return StoredStory(
            id=row["id"],
            job_id=row["job_id"],
            title=row["title"],
            body=row["body"],
            model=row["model"],
            created_at=row["created_at"],
            request=request_from_row(json.loads(row["job"])),
            favourite=row["favourite"],
            uid=row["uid"],
            sequel_of_title=row["sequel_of_title"],
        )

    async def list_stories(self, *, limit: int | None = None) -> list[StorySummary]:
        """The stories on the shelf, newest first (all of them, or the newest `limit`)."""
        rows = await self._all("list_stories", {"limit": limit})
        return [_summary(row) for row in rows]

    async def library(
        self, search: str = "", *, page: int = 1, per_page: int = LIBRARY_PAGE_SIZE
    ) -> LibraryPage:
        """One page of the library: series together, favourites first, then newest.

        `search` ('' for all) matches the title, the child's name and what the story was
        about: by words (full-text, each word a prefix: "drag" finds "dragon"), or for one
        or two characters, or signs only, as a plain case-insensitive substring."""
        search = search.replace("\x00", "").strip()
        params: dict[str, object] = {"limit": per_page + 1, "offset": (page - 1) * per_page}
        words = search_words(search)
        if not search:
            query = "library_page"
        elif words:
            query = "search_library_words"
            params["query"] = " & ".join(f"{word}:*" for word in words)
        else:
            query = "search_library_letters"
            params["search"] = search
        rows = await self._all(query, params)
        return LibraryPage([_summary(row) for row in rows[:per_page]], more=len(rows) > per_page)

    async def search_library(self, search: str = "", *, limit: int = 500) -> list[StorySummary]:
        """The first `limit` stories of the library that match `search` (see `library`)."""
        return (await self.library(search, per_page=limit)).stories

    async def story_title(self, story_id: int) -> str | None:
        """The title of a story on the shelf; None once it has been deleted (or while it
        is hidden by its screening)."""
        title: str | None = await self._val("story_title", {"story_id": story_id})
        return title

    async def story_for_card(
        self, story_id: int, *, with_body: bool = False
    ) -> CardStory | None:
        """A stored story's title, screening, (`with_body`, once shown) its text and its
        model; None once it has been deleted."""
        found = await self.card_story(story_id, with_body=with_body)
        return found[0] if found is not None else None

    async def card_story(
        self, story_id: int, *, with_body: bool = False
    ) -> tuple[CardStory, PictureState] | None:
        """story_for_card's story, and where its picture stands, in the same round trip."""
        row = await self._one("story_for_card", {"story_id": story_id, "with_body": with_body})
        if row is None:
            return None
        screening = row["screening"]
        story = CardStory(row["title"], Screening(screening) if screening is not None else None,
                          row["body"], row["model"])
        return story, picture_state(row, story_id)

    async def delete_story(self, story_id: int) -> bool:
        """Take a story off the shelf; False when it was not there."""
        row = await self._one("delete_story", {"story_id": story_id})
        return row is not None

    async def set_favourite(self, story_id: int, favourite: bool) -> bool:
        """Mark or unmark a favourite; False when the story is not on the shelf."""
        row = await self._one("set_favourite", {"story_id": story_id, "favourite": favourite})
        return row is not None

    async def restore_story(self, story_id: int, *, keep_s: float = DELETED_KEEP_S) -> bool:
        """Undo a delete (within `keep_s`); False when there was nothing to restore."""
        row = await self._one("restore_story", {"story_id": story_id, "keep_s": float(keep_s)})
        return row is not None

    async def recently_deleted(
        self, *, keep_s: float = DELETED_KEEP_S, limit: int = 500
    ) -> list[DeletedStory]:
        """Stories that can still be restored, the most recently deleted first."""
        rows = await self._all("recently_deleted", {"keep_s": float(keep_s), "limit": limit})
        return [DeletedStory(id=row["id"], title=row["title"], child_name=row["child_name"],
                             sibling_name=row["sibling_name"],
                             prompt=row["prompt"], created_at=row["created_at"],
                             deleted_at=row["deleted_at"], purge_at=row["purge_at"],
                             language=row["language"], model=row["model"])
                for row in rows]

    async def deleted_story_title(
        self, story_id: int, *, keep_s: float = DELETED_KEEP_S
    ) -> str | None:
        """The title of a story that was deleted and can still be restored."""
        title: str | None = await self._val("deleted_story_title",
                               {"story_id": story_id, "keep_s": float(keep_s)})
        return title

    async def deleted_story(
        self, story_id: int, *, keep_s: float = DELETED_KEEP_S
    ) -> DeletedStory | None:
        """A story that was deleted and can still be restored (its page offers Restore);
        None when it is on the shelf, gone for good, or never was."""
        if await self.deleted_story_title(story_id, keep_s=keep_s) is None:
            return None
        # Found among those "recently deleted" lists (sql/queries/shelf.sql has no query
        # for one of them by id yet).
        for story in await self.recently_deleted(keep_s=keep_s):
            if story.id == story_id:
                return story
        return None

    async def count_recently_deleted(self, *, keep_s: float = DELETED_KEEP_S) -> int:
        count: int = await self._val("count_recently_deleted", {"keep_s": float(keep_s)})
        return count

    async def story_sequels(self, story_id: int) -> list[tuple[int, str]]:
        """(id, title) of the stories on the shelf that continue this one, oldest first."""
        rows = await self._all("story_sequels", {"story_id": story_id})
        return [(row["id"], row["title"]) for row in rows]

    async def export_stories(self) -> list[BackupStory]:
        """Every story on the shelf, oldest first, as a backup keeps it."""
        rows = await self._all("export_stories")
        return [
            BackupStory(
                uid=row["uid"], title=row["title"], body=row["body"],
                created_at=row["created_at"],
                request=request_from_row(json.loads(row["job"])),
                model=row["model"], prompt_tokens=row["prompt_tokens"],
                completion_tokens=row["completion_tokens"], favourite=row["favourite"],
                sequel_of_uid=row["sequel_of_uid"], sequel_of_title=row["sequel_of_title"],
                picture=bytes(row["picture"]) if row["picture"] is not None else None,
            )
            for row in rows
        ]
