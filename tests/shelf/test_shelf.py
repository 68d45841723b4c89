"""The story shelf in the job store: favourites, soft delete, library search."""

from __future__ import annotations

import pytest

from app.queue.store import JobStore
from app.shelf.store import ShelfStore
from app.stories import StoryRequest
from tests.helpers.jobs import add_job
from tests.helpers.shelving import shelve
from tests.helpers.sql import fetch_all

pytestmark = pytest.mark.anyio


async def test_migration_adds_the_shelf_columns(db):
    columns = {
        row["column_name"]: row["is_nullable"]
        for row in await fetch_all(db,
            "SELECT column_name, is_nullable FROM information_schema.columns"
            " WHERE table_name = 'stories'"
        )
    }
    assert columns["favourite"] == "NO" and columns["deleted_at"] == "YES"


async def test_a_deleted_story_is_gone_but_its_job_still_points_at_it(db):
    store, shelf = JobStore(db), ShelfStore(db)
    story_id = await shelve(store, "k1", title="The Moon")
    assert await shelf.delete_story(story_id) is True
    assert await shelf.delete_story(story_id) is False  # already off the shelf
    assert await shelf.get_story(story_id) is None
    assert await shelf.story_title(story_id) is None
    assert await shelf.set_favourite(story_id, True) is False
    assert await shelf.list_stories() == [] and await shelf.search_library() == []
    job = await store.get_by_key("k1")
    assert job is not None and job.story_id == story_id and job.status == "completed"


async def test_search_is_literal_and_matches_title_or_child(db):
    store, shelf = JobStore(db), ShelfStore(db)
    percent = await shelve(store, "k1", title="100% Sleepy", child_name="Ada")
    other = await shelve(store, "k2", title="The Owl", child_name="Theo")
    assert [s.id for s in await shelf.search_library("100%")] == [percent]
    assert [s.id for s in await shelf.search_library("%")] == [percent]
    assert [s.id for s in await shelf.search_library("_")] == []
    assert [s.id for s in await shelf.search_library("THEO")] == [other]
    assert [s.id for s in await shelf.search_library()] == [other, percent]
    await shelf.set_favourite(percent, True)
    assert [s.id for s in await shelf.search_library()] == [percent, other]
    assert [s.id for s in await shelf.list_stories()] == [other, percent]  # the JSON order


async def test_the_last_request_gives_the_form_its_defaults(db):
    store = JobStore(db)
    assert await store.last_request() is None
    request = StoryRequest(prompt="a", child_name="Mia", age=5, length="long")
    await add_job(store, "k1", request, "h1")
    last = await store.last_request()
    assert last == StoryRequest(prompt="a", child_name="Mia", age=5, length="long")
