"""The story form's chooser, as app/shelf/story_form.py reads it: what is sent, what the
form shows again, where a refusal goes, and what is remembered for the next story."""

from __future__ import annotations

import pytest

from app.shelf.store import ShelfStore
from app.shelf.story_form import read_story_form

pytestmark = pytest.mark.anyio

TYPED = {"prompt": "a brave snail\r\nat night", "child_name": "Mia", "age": "5",
         "length": "short", "language": "en", "child_id": "", "sibling_id": ""}


@pytest.fixture
def shelf(db):
    return ShelfStore(db)


async def test_a_profile_chosen_sends_its_id_and_leaves_the_name_and_age_boxes_out(shelf):
    form = await read_story_form(shelf, TYPED | {"for": "7"})
    assert form.sent() == {"prompt": "a brave snail\nat night", "length": "short",
                           "language": "en", "child_id": "7"}
    assert form.then is None
    assert form.remembered()["for"] == "7" and form.remembered()["child_name"] == ""
    assert form.refused_field("child_id") == "for"  # the profile is gone: the chooser says


async def test_someone_else_sends_the_boxes_and_remembers_them(shelf):
    form = await read_story_form(shelf, TYPED | {"for": "other"})
    assert form.sent()["child_name"] == "Mia" and "child_id" not in form.sent()
    assert form.remembered() | {"prompt": ""} == {
        "for": "other", "prompt": "", "child_name": "Mia", "age": "5", "length": "short",
        "language": "en", "child_id": "", "sibling_id": ""}


async def test_a_one_tap_post_is_taken_as_it_is_and_a_gone_profile_is_a_notice(shelf):
    form = await read_story_form(shelf, {"prompt": "the moon", "child_id": "3"})
    assert form.chosen == "" and form.sent() == {"prompt": "the moon", "child_id": "3"}
    assert form.refused_field("child_id") is None  # above the form: no chooser was used
    assert form.refused_field(None) == "prompt"
