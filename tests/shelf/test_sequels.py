"""Another story like this one, and what happens next: each one new job, with the right
request, and one call at the storyteller."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from app.queue.store import JobStore
from app.requests import PREVIOUSLY_MAX_CHARS
from app.shelf.sequels import characters, sentences, summary
from app.shelf.store import ShelfStore
from tests.helpers.app import JSON, new_key, wait_for_job
from tests.helpers.shelving import shelve
from tests.helpers.sql import fetch_one, fetch_val

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages

KEY = re.compile(r'name="idempotency_key" value="([^"]+)"')
EARLIER = ("Pip and the Owl\n\nOnce upon a time, Pip met a small owl named Hoot. Hoot said "
           "hello to Pip.\n\nThey counted the stars together. They flew over the hill to see "
           "Luna, who was fast asleep.\n\nGoodnight, Pip.")


def form_of(page: str) -> dict[str, str]:
    """The story form's fields as the page filled them in (what a tap on "Write" sends)."""
    fields = {"idempotency_key": KEY.search(page).group(1)}
    fields["prompt"] = html.unescape(
        re.search(r'<textarea id="prompt"[^>]*>(.*?)</textarea>', page, re.S).group(1))
    for name in ("child_name", "age", "sequel_of"):
        match = re.search(rf'name="{name}"[^>]*value="([^"]*)"', page)
        if match:
            fields[name] = html.unescape(match.group(1))
    fields["length"] = re.search(r'name="length" value="(\w+)" checked', page).group(1)
    return fields


async def write(client: httpx.AsyncClient, fields: dict[str, str]) -> int:
    """Send the form (without JavaScript) and wait for the story; the new job's id."""
    response = await client.post("/stories/generate", data=fields)
    assert response.status_code == 303, response.text
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    assert (await wait_for_job(client, job_id))["status"] == "completed"
    return job_id


async def first_story(client: httpx.AsyncClient, fake_llm) -> tuple[int, int]:
    page = (await client.get("/")).text
    fields = form_of(page) | {"prompt": "an owl who cannot sleep", "child_name": "Mia",
                              "age": "5", "length": "long"}
    fake_llm.story = EARLIER
    job_id = await write(client, fields)
    fake_llm.story = None
    job = (await client.get(f"/stories/jobs/{job_id}", headers={"Accept": "application/json"}))
    return job_id, job.json()["story_id"]


async def test_another_like_this_fills_the_form_and_makes_one_job(client, db, fake_llm):
    _, story_id = await first_story(client, fake_llm)
    story_page = (await client.get(f"/stories/{story_id}")).text
    assert f'href="/?like={story_id}#story-form"' in story_page
    page = (await client.get(f"/?like={story_id}")).text
    fields = form_of(page)
    assert fields["prompt"] == "an owl who cannot sleep"
    assert (fields["child_name"], fields["age"], fields["length"]) == ("Mia", "5", "long")
    assert "sequel_of" not in fields
    fields["prompt"] += " and counts the stars"  # editable, as any form
    before = await fetch_val(db, "SELECT count(*) FROM story_jobs")
    job_id = await write(client, fields)
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == before + 1
    row = await fetch_one(db, "SELECT * FROM story_jobs WHERE id = :id", {"id": job_id})
    assert (row["prompt"], row["child_name"], row["age"], row["length"]) == (
        "an owl who cannot sleep and counts the stars", "Mia", 5, "long")
    assert row["sequel_of"] is None and row["previously"] is None
    assert fake_llm.calls_for(job_id) == 1


async def test_what_happens_next_is_one_small_request_that_links_back(client, db, fake_llm):
    first_job, story_id = await first_story(client, fake_llm)
    unrelated = await write(client, form_of((await client.get("/")).text)
                            | {"prompt": "a whale who sings", "child_name": "Theo"})
    story_page = (await client.get(f"/stories/{story_id}")).text
    assert f'href="/?sequel={story_id}#story-form"' in story_page
    page = (await client.get(f"/?sequel={story_id}")).text
    fields = form_of(page)
    assert fields["sequel_of"] == str(story_id)
    assert fields["prompt"] == "what happens next in “Pip and the Owl”"
    assert (fields["child_name"], fields["age"], fields["length"]) == ("Mia", "5", "long")
    assert "What happens next in “<bdi>Pip and the Owl</bdi>”" in page

    job_id = await write(client, fields)
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.calls_for(first_job) == 1
    row = await fetch_one(db, "SELECT * FROM story_jobs WHERE id = :id", {"id": job_id})
    assert row["sequel_of"] == story_id and row["child_name"] == "Mia" and row["age"] == 5
    assert "Pip and the Owl" in row["previously"]
    assert "Characters: Mia, Pip, Hoot, Luna" in row["previously"]
    sent = next(r for r in fake_llm.requests if r["job_id"] == str(job_id))
    message = sent["body"]["messages"][-1]["content"]
    assert "<earlier>" in message and "Pip and the Owl" in message and "Hoot" in message
    # A summary: how it began and where it ended, from the stored text; not the whole text.
    assert "It began: Once upon a time, Pip met a small owl named Hoot." in message
    assert ("It ended: They counted the stars together. They flew over the hill to see Luna, "
            "who was fast asleep.") in message
    assert "said hello to Pip" not in message and "Goodnight, Pip" not in message
    assert "from where it ended" in message
    assert len(message) < 1500

    sequel_id = (await client.get(f"/stories/jobs/{job_id}",
                                  headers={"Accept": "application/json"})).json()["story_id"]
    sequel_page = (await client.get(f"/stories/{sequel_id}")).text
    assert (f'Continues <a href="/stories/{story_id}">“<bdi>Pip and the Owl</bdi>”</a>'
            in sequel_page)
    assert f'href="/stories/{sequel_id}"' in (await client.get(f"/stories/{story_id}")).text
    # The library keeps the two together (the earlier first), though another came between.
    library = (await client.get("/stories")).text
    order = [int(i) for i in re.findall(r'class="shelf-link" href="/stories/(\d+)"', library)]
    unrelated_story = (await client.get(f"/stories/jobs/{unrelated}",
                                        headers={"Accept": "application/json"})).json()
    assert order == [story_id, sequel_id, unrelated_story["story_id"]]
    assert "is-sequel" in library and "continues “<bdi>Pip and the Owl</bdi>”" in library


async def test_a_refused_sequel_form_keeps_its_sequel(client, fake_llm):
    _, story_id = await first_story(client, fake_llm)
    fields = form_of((await client.get(f"/?sequel={story_id}")).text) | {"prompt": " "}
    response = await client.post("/stories/generate", data=fields)
    assert response.status_code == 422
    assert f'name="sequel_of" value="{story_id}"' in response.text
    # A story that is not on the shelf is no sequel: an ordinary story is written.
    fields = form_of((await client.get("/")).text) | {"prompt": "a fox", "sequel_of": "999"}
    job_id = await write(client, fields)
    assert fake_llm.calls_for(job_id) == 1


async def test_the_json_api_is_unchanged(client):
    response = await client.post(
        "/stories/generate", json={"prompt": "a fox", "sequel_of": 1},
        headers={**JSON, "Idempotency-Key": new_key()},
    )
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"


async def test_characters_are_the_listener_and_the_names_the_story_uses(db):
    store = JobStore(db)
    story_id = await shelve(store, "k1", title="Night", child_name="Ada", body=(
        "Once upon a time, in a lighthouse, there lived Ada. One evening, as the moon rose, "
        "Ada met a patient tortoise called Moss. \"We can go slowly,\" said Moss. Goodnight, "
        "Ada. The End."))
    story = await ShelfStore(store.db).get_story(story_id)
    assert characters(story) == ["Ada", "Moss"]


# -- the summary, from the stored text ----------------------------------------------------


def test_a_summary_is_the_title_the_idea_the_cast_how_it_began_and_where_it_ended():
    body = ("Once upon a time, in a lighthouse by a sleepy sea, there lived Ada.\n\n"
            "Ada met a patient tortoise called Moss. They walked and walked.\n\n"
            "At last they reached the top of the hill. Moss tucked Ada in under the stars, "
            "and the sea hummed below.\n\nGoodnight, Ada. The End.\n\n"
            "(This story was written by the demo storyteller, offline.)")
    assert summary("Ada and Moss", body, "a slow tortoise", ["Ada", "Moss"]) == (
        "Title: Ada and Moss\n"
        "It was about: a slow tortoise\n"
        "Characters: Ada, Moss\n"
        "It began: Once upon a time, in a lighthouse by a sleepy sea, there lived Ada.\n"
        "It ended: At last they reached the top of the hill. Moss tucked Ada in under the "
        "stars, and the sea hummed below.")


def test_a_short_story_s_summary_says_no_sentence_twice():
    assert summary("Tiny", "Ada slept.", "sleep", []) == (
        "Title: Tiny\nIt was about: sleep\nIt began: Ada slept.")
    two = summary("Two", "Ada yawned. Ada slept.", "sleep", ["Ada"])
    assert two.endswith("It began: Ada yawned.\nIt ended: Ada slept.")
    assert summary("Empty", "", "sleep", []) == "Title: Empty\nIt was about: sleep"


def test_a_summary_of_the_longest_texts_fits_its_column():
    long_sentence = " ".join(["word"] * 400) + "."
    made = summary("T" * 200, f"{long_sentence}\n\n{long_sentence} {long_sentence}",
                   "p" * 500, [f"Name{n}" + "x" * 30 for n in range(6)])
    assert len(made) <= PREVIOUSLY_MAX_CHARS
    began = next(line for line in made.splitlines() if line.startswith("It began: "))
    ended = next(line for line in made.splitlines() if line.startswith("It ended: "))
    assert began.endswith("word…") and ended.endswith("word…")  # clipped at a word


def test_sentences_keep_dialogue_whole():
    assert sentences('"Who goes there?" asked the owl. "Only Mia," said Mia!\n\nThe end') == [
        '"Who goes there?" asked the owl.', '"Only Mia," said Mia!', "The end"]
