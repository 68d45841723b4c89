"""Sibling stories (issue 21): one story for two of the household's children, asked for by
`child_id` and `sibling_id` (or the home page's "Together" button), which names both in the
prompt, the story's pages, the library and a backup."""

from __future__ import annotations

import re
from datetime import UTC

import pytest

from app.db import connect_pool, migrate
from app.shelf.backup import export_zip, story_markdown
from app.shelf.imports import import_backup
from app.shelf.store import ShelfStore
from app.stories import StoryRequest
from app.storytelling.demo import DemoStoryteller
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.backups import stories_json
from tests.helpers.sql import fetch_val
from tests.web.test_children import add_child, prompt_of, written

pytestmark = pytest.mark.anyio

MIA = {"name": "Mia", "age": 5, "language": "es", "likes": "foxes and the moon"}
LEO = {"name": "Leo", "age": 7, "length": "long", "likes": "trains",
       "companions": "Rex, a sleepy red dragon"}


async def siblings(client) -> tuple[int, int]:
    mia, leo = await add_child(client, MIA), await add_child(client, LEO)
    return mia["child_id"], leo["child_id"]


async def test_a_sibling_story_names_both_children_to_the_storyteller(client, fake_llm):
    mia, leo = await siblings(client)
    story = await written(client, {"prompt": "a sleepy owl", "child_id": mia, "sibling_id": leo})
    assert (story["child_name"], story["age"], story["sibling_name"], story["sibling_age"]) == (
        "Mia", 5, "Leo", 7)
    # The first child's usual length and language; the words suit the younger one.
    assert (story["length"], story["language"]) == ("medium", "es")
    prompt = prompt_of(fake_llm.requests[-1])
    assert "two siblings, <name>Mia</name> and <name>Leo</name>" in prompt
    assert "for two children, aged 5 and 7" in prompt and "suit a 5-year-old" in prompt
    assert "The listeners' favourite things" in prompt
    assert "<likes>foxes and the moon; trains</likes>" in prompt
    assert "The listeners' companions" in prompt  # Leo's, in the story for both
    assert "<companions>Rex, a sleepy red dragon</companions>" in prompt
    assert "Write the story in Spanish." in prompt


async def test_the_order_of_the_two_decides_whose_story_it_is_first(client, fake_llm):
    mia, leo = await siblings(client)
    story = await written(client, {"prompt": "a sleepy owl", "child_id": leo, "sibling_id": mia})
    assert (story["child_name"], story["sibling_name"], story["length"], story["language"]) == (
        "Leo", "Mia", "long", "en")
    assert "<name>Leo</name> and <name>Mia</name>" in prompt_of(fake_llm.requests[-1])


@pytest.mark.parametrize("ask", [
    {"sibling_id": "mia"},                      # without child_id
    {"child_id": "mia", "sibling_id": "mia"},   # the same child twice
    {"child_id": "mia", "sibling_id": 424242},  # no such child
    {"child_id": "mia", "sibling_id": "7"},     # not an id
])
async def test_a_sibling_id_not_valid_is_refused_naming_it_and_writes_nothing(
    client, db, fake_llm, ask
):
    mia, _ = await siblings(client)
    body = {"prompt": "a sleepy owl",
            **{name: mia if value == "mia" else value for name, value in ask.items()}}
    response = await post_story(client, body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and "sibling_id" in error["message"]
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0
    assert fake_llm.requests == []


async def test_a_sibling_story_replays_and_is_not_the_same_request_as_one_child_s(client):
    mia, leo = await siblings(client)
    both = {"prompt": "a sleepy owl", "child_id": mia, "sibling_id": leo}
    first = await post_story(client, both, key="together")
    again = await post_story(client, both, key="together")
    assert again.status_code == 202 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["job_id"] == first.json()["job_id"]
    alone = await post_story(client, {"prompt": "a sleepy owl", "child_id": mia}, key="together")
    assert alone.status_code == 422
    assert alone.json()["error"]["code"] == "idempotency_key_reused"


async def test_the_pages_and_the_library_say_it_is_for_both(client):
    mia, leo = await siblings(client)
    story = await written(client, {"prompt": "a sleepy owl", "child_id": mia, "sibling_id": leo})
    page = (await client.get(f"/stories/{story['story_id']}")).text
    assert "For <bdi>Mia</bdi>, age 5, and <bdi>Leo</bdi>, age 7" in page
    library = (await client.get("/stories")).text
    assert "for <bdi>Mia</bdi> and <bdi>Leo</bdi> ·" in library
    home = (await client.get("/")).text
    assert "for <bdi>Mia</bdi> and <bdi>Leo</bdi>" in home
    # Found by either child's name.
    for name in ("Leo", "le", "Mia"):
        found = (await client.get("/stories", params={"q": name})).text
        assert story["title"] in found, name


async def test_the_home_page_offers_a_story_for_both_in_one_tap(make_app, db, fake_llm):
    async with serve(make_app(), from_own_pages=True) as browser:
        await add_child(browser, {"name": "Solo"})
        assert "Together:" not in (await browser.get("/")).text  # one child: no pair
        await add_child(browser, MIA)
        await add_child(browser, LEO)
        home = (await browser.get("/")).text
        assert re.findall(r"Together: <bdi>(\w+)</bdi> and <bdi>(\w+)</bdi>", home) == [
            ("Solo", "Mia"), ("Solo", "Leo"), ("Mia", "Leo")]
        forms = re.findall(r'<form method="post" action="/stories/generate"'
            r' data-spends="stories">(.*?)</form>', home, re.S)
        tap = next(dict(re.findall(r'name="(\w+)" value="([^"]*)"', form)) for form in forms
                   if "Together: <bdi>Mia</bdi> and <bdi>Leo</bdi>" in form)
        response = await browser.post("/stories/generate", data=tap)
        assert response.status_code == 303
        job = await wait_for_job(browser, int(response.headers["location"].rsplit("/", 1)[1]))
        story = (await browser.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()
        assert (story["child_name"], story["sibling_name"]) == ("Mia", "Leo")
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


async def test_a_backup_carries_a_sibling_story_and_restores_it(client, db, second_installation):
    mia, leo = await siblings(client)
    story = await written(client, {"prompt": "a sleepy owl", "child_id": mia, "sibling_id": leo})
    data = await export_zip(ShelfStore(db), UTC)
    exported = stories_json(data)
    (entry,) = exported["stories"]
    assert (entry["sibling_name"], entry["sibling_age"]) == ("Leo", 7)
    stored = await ShelfStore(db).get_story(story["story_id"])
    assert stored is not None
    assert "- For: Mia, age 5, and Leo, age 7" in story_markdown(stored, UTC)
    async with connect_pool(second_installation) as other:
        await migrate(other)
        assert (await import_backup(other, data)).restored == 1
        restored = stories_json(await export_zip(ShelfStore(other), UTC))
    assert restored["stories"] == exported["stories"]


def test_the_demo_storyteller_names_both_children_from_the_title_on():
    request = StoryRequest(prompt="a sleepy owl", child_name="Mia", sibling_name="Leo",
                           length="short")
    title, paragraphs = DemoStoryteller(delay_s=0).compose(request, job_id=1)
    assert title.startswith("Mia, Leo and ")
    assert "Leo was there too" in paragraphs[1] and "Mia" in paragraphs[0]
