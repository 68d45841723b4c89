"""A story's title as the model writes its first line: a "Title:" label before it, in any
of the 8 languages and in markdown, is no part of the title; a title that only begins with
the word keeps it."""

from __future__ import annotations

from datetime import UTC

import pytest

from app.shelf.backup import export_zip
from app.shelf.store import ShelfStore
from app.stories import StoryRequest, split_title
from app.storytelling.openai import build_prompt
from app.storytelling.reader import Reader
from tests.helpers.app import ACCEPT_JSON, post_story, wait_for_job
from tests.helpers.backups import stories_json

BODY = "Once upon a time the moon yawned. Goodnight."


@pytest.mark.parametrize(("line", "title"), [
    ("Title: The Sleepy Moon", "The Sleepy Moon"),
    ("title: the sleepy moon", "the sleepy moon"),
    ("TITLE: The Sleepy Moon", "The Sleepy Moon"),
    ("Título: La luna dormilona", "La luna dormilona"),  # es, pt
    ("Titulo: A lua sonolenta", "A lua sonolenta"),
    ("Titre : La lune endormie", "La lune endormie"),  # fr, with its space before the colon
    ("Titre : « La lune endormie »", "La lune endormie"),
    ("Titel: Der schläfrige Mond", "Der schläfrige Mond"),  # de, nl
    ("Titel: De slaperige maan", "De slaperige maan"),
    ("Titolo: La luna assonnata", "La luna assonnata"),  # it
    ("Tytuł: Śpiący księżyc", "Śpiący księżyc"),  # pl
    ("TYTUŁ: Śpiący księżyc", "Śpiący księżyc"),
    ("**Title:** The Sleepy Moon", "The Sleepy Moon"),
    ("**Title: The Sleepy Moon**", "The Sleepy Moon"),
    ("*Titre* : La lune", "La lune"),
    ("# Title: The Sleepy Moon", "The Sleepy Moon"),
    ("## Titel: Der Mond", "Der Mond"),
    ('Title: "The Sleepy Moon"', "The Sleepy Moon"),
    ("Title - The Sleepy Moon", "The Sleepy Moon"),
    ("Title — The Sleepy Moon", "The Sleepy Moon"),
])
def test_a_title_label_is_dropped_in_every_language(line, title):
    assert split_title(f"{line}\n\n{BODY}") == (title, BODY)


@pytest.mark.parametrize("line", [
    "Titles of the Night",
    "Title Fight at the Zoo",
    "Titel-loos",
    "The Title: A Story of Names",
    "Titanic Dreams: A Voyage",
    "Entitled: The Cat Who Wanted Everything",
])
def test_a_title_that_merely_starts_with_the_word_is_kept(line):
    assert split_title(f"{line}\n\n{BODY}") == (line, BODY)


def test_a_label_on_a_line_of_its_own_is_not_the_title():
    assert split_title(f"**Title:**\n\nThe Sleepy Moon\n\n{BODY}") == ("The Sleepy Moon", BODY)
    assert split_title(f"Title:\n\n{BODY}") == ("A Bedtime Story", BODY)


def test_a_label_with_nothing_after_it_keeps_the_text_whole():
    assert split_title("Title:") == ("A Bedtime Story", "Title:")


@pytest.mark.anyio
async def test_a_labelled_title_shows_without_its_label_on_the_page_library_and_export(
    client, fake_llm, db
):
    fake_llm.story = f"Title: The Sleepy Moon\n\n{BODY}"
    job = await wait_for_job(client, (await post_story(client)).json()["job_id"])
    assert job["status"] == "completed", job
    story_id = job["story_id"]
    page = (await client.get(f"/stories/{story_id}")).text
    library = (await client.get("/stories")).text
    listed = (await client.get("/stories", headers=ACCEPT_JSON)).json()["stories"]
    exported = stories_json(await export_zip(ShelfStore(db), UTC))
    assert "The Sleepy Moon" in page and "Title:" not in page
    assert "The Sleepy Moon" in library and "Title:" not in library
    assert [story["title"] for story in listed] == ["The Sleepy Moon"]
    assert [story["title"] for story in exported["stories"]] == ["The Sleepy Moon"]


# -- what the reader takes for a title (app/storytelling/reader.py) -------------------------

IDEA = StoryRequest(prompt="a dragon who is afraid of the dark", length="short")


def shown(text: str, request: StoryRequest = IDEA) -> str:
    return Reader(request, prompt=build_prompt(request), job_id=1).shown(text)


@pytest.mark.parametrize(("first_line", "title"), [
    ("The story's title is: The Sleepy Moon", "The Sleepy Moon"),
    ("**The story's title is:** The Sleepy Moon", "The Sleepy Moon"),
    ("The title of the story is: The Sleepy Moon", "The Sleepy Moon"),
    ("# The Sleepy Moon", "The Sleepy Moon"),
    ("Where Did the Moon Go?", "Where Did the Moon Go?"),
])
def test_a_line_that_is_a_title_once_its_label_is_gone_is_the_title(first_line, title):
    assert shown(f"{first_line}\nOnce upon a time. Goodnight.") == (
        f"{title}\n\nOnce upon a time. Goodnight.")


@pytest.mark.parametrize("first_line", [
    "Ladies,",  # a greeting
    "Once upon a time, there was a small dragon.",  # a sentence
    "Once upon a time, in a valley full of soft green hills, a small dragon lay awake "
    "and counted every star",  # a paragraph: past 80 characters
])
def test_a_line_that_is_no_title_stays_in_the_story_under_the_idea_s_title(first_line):
    assert shown(f"{first_line}\nHe slept. Goodnight.") == (
        f"The Dragon Who Is Afraid of the Dark\n\n{first_line}\n\nHe slept. Goodnight.")


def test_a_first_line_past_a_title_s_length_is_the_story_before_it_ends():
    """SmolLM2 may begin with the story itself: once its first line is too long for a
    title, the card shows it as the story under the idea's title, not as a heading."""
    begun = "In the ocean, there was a big whale who could only sleep at night. He had lots"
    assert shown(begun[:70]) == begun[:70]  # a title, perhaps: no telling yet
    assert shown(begun + " of teeth") == (
        f"The Dragon Who Is Afraid of the Dark\n\n{begun} of teeth")


def test_the_idea_s_title_names_the_children_as_the_demo_does():
    request = StoryRequest(prompt="a dragon who is afraid of the dark", child_name="Mia",
                           sibling_name="Leo")
    assert shown("Ladies,\nHe slept.", request).startswith(
        "Mia, Leo and the Dragon Who Is Afraid of the Dark\n\n")


@pytest.mark.parametrize("text", [
    "Title: The Moon\nOnce upon a time.\nThe end.",
    "Ladies,\nthe fox slept.\n",
    "The Moon\n\nOnce upon a ",
    "<idea>an owl</idea>\nThe Owl\n\nOnce <name>Mia</name> slept.",
])
def test_shaping_a_shaped_text_changes_nothing(text):
    """A story picked up again from its saved words (an adopted background story) reads on
    as if it had never been put down."""
    once = shown(text)
    assert shown(once) == once
    assert shown(once + "more words.") == shown(text + "more words.")
