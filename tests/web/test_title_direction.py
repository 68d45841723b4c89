"""A title's direction follows its story's language (`dir` from the language), never the
first letter it happens to start with; a name inside it is isolated (<bdi>). An English
story for ليلى titled "ليلى's Owl…" reads left to right on every page that shows it."""

from __future__ import annotations

import re

import pytest

from app.languages import direction
from app.web.templates import isolate_names
from tests.helpers.app import post_story, serve, wait_for_job

pytestmark = pytest.mark.anyio

NAME = "ليلى"
TITLE = f"{NAME}'s Owl Who Knits Scarves for the Moon"
STORY = f"{TITLE}\n\nOnce upon a time, {NAME} met an owl.\n\nThe owl knitted all night."
SHOWN = f"<bdi>{NAME}</bdi>&#39;s Owl Who Knits Scarves for the Moon"


def test_the_direction_is_the_language_s():
    assert direction("ar") == "rtl" and direction("ar-EG") == "rtl"
    assert [direction(tag) for tag in ("en", "es", "fr", "de", "pl", "uk", "ja", None)] == [
        "ltr"] * 8


def test_a_name_inside_a_title_is_isolated_and_the_rest_escaped():
    assert str(isolate_names(TITLE, NAME)) == SHOWN
    assert str(isolate_names("Ana & Anabel <3", "Ana", "Anabel", None)) == (
        "<bdi>Ana</bdi> &amp; <bdi>Anabel</bdi> &lt;3")
    assert str(isolate_names("<b>", None)) == "&lt;b&gt;"


def tags_before(page: str, at: int) -> list[str]:
    """The opening tags before the text at `at`, nearest first."""
    return re.findall(r"<[a-z][^>]*>", page[:at])[::-1]


@pytest.mark.slow
async def test_every_page_gives_the_title_its_language_s_direction(make_app, fake_llm):
    fake_llm.story = STORY
    async with serve(make_app()) as client:
        job_id = (await post_story(client, {"prompt": "an owl who knits",
                                            "child_name": NAME})).json()["job_id"]
        story_id = (await wait_for_job(client, job_id))["story_id"]
        await post_story(client, {"prompt": "another"})  # so home lists it among the newest
        pages = {path: (await client.get(path)).text
                 for path in ("/", "/stories", f"/stories/{story_id}",
                              f"/stories/jobs/{job_id}")}
    for path, page in pages.items():
        assert SHOWN in page, path
        for found in re.finditer(re.escape(SHOWN), page):
            tags = tags_before(page, found.start())
            directed = next(tag for tag in tags if " dir=" in tag)  # the nearest to say
            assert 'dir="ltr"' in directed, (path, tags[0], directed)
