"""The card's reading view: the draft grows in the story's type, and the finished card's
last answer puts the story where the draft was, with the newest stories (out of band) on
the home page only in that answer."""

from __future__ import annotations

import re

import anyio
import pytest

from tests.helpers.app import wait_for_job
from tests.helpers.forms import HX, job_id_of, submit

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]  # `client`: on the app's own pages

STORY = ("The Lantern Fox\n\nA small fox carried a lantern through the wood.\n\n"
         "The owls hushed as she passed.\n\nAt the end of the path, her den was warm.")
PARAGRAPHS = ["A small fox carried a lantern through the wood.",
              "The owls hushed as she passed.", "At the end of the path, her den was warm."]
OOB_SHELF = 'id="newest-stories" hx-swap-oob="true"'


def polls(html: str) -> bool:
    """Whether the status card's opening tag asks again in 3 s."""
    tag = re.search(r"<article[^>]*>", html)
    assert tag, html
    return 'hx-trigger="every 3s"' in tag.group(0)


def from_page(path: str) -> dict[str, str]:
    """A poll's headers as htmx sends them from a page of the app."""
    return {**HX, "HX-Current-URL": f"http://testserver{path}"}


def story_text(html: str) -> str:
    match = re.search(r'<div class="story-text job-draft[^"]*"[^>]*>(.*?)</div>', html, re.S)
    assert match, html
    return match.group(1)


async def test_the_finished_cards_poll_answer_has_the_story_in_place_and_the_shelf_once(
    client, fake_llm
):
    fake_llm.story = STORY
    fake_llm.hold()
    job_id = job_id_of(await submit(client))
    await anyio.to_thread.run_sync(fake_llm.wait_for_call, job_id)
    running = await client.get(f"/stories/jobs/{job_id}", headers=from_page("/"))
    assert polls(running.text) and "hx-swap-oob" not in running.text  # unfinished: no shelf

    fake_llm.release()
    await wait_for_job(client, job_id)
    card = await client.get(f"/stories/jobs/{job_id}", headers=from_page("/"))
    assert not polls(card.text) and "hx-trigger" not in card.text
    text = story_text(card.text)
    assert '<p class="job-title">The Lantern Fox</p>' in text  # its direction: the story text's
    assert re.search(r'class="story-text job-draft job-story" lang="en" dir="ltr"', card.text)
    assert [f"<p>{p}</p>" in text for p in PARAGRAPHS] == [True] * 3
    # The actions come after the text, so it stays where the draft was.
    assert card.text.index("Read the story") > card.text.index(PARAGRAPHS[-1])
    # On the home page: the newest stories again, out of band, no longer empty, and not
    # this one (its card is on the page): the library, where it is.
    shelf = card.text[card.text.index(OOB_SHELF):]
    assert "No stories yet" not in shelf and 'href="/stories"' in shelf
    assert "The Lantern Fox" not in shelf
    assert card.text.count("hx-swap-oob") == 1

    # The same card polled from the job page: the story, no shelf to update there.
    job_page = from_page(f"/stories/jobs/{job_id}")
    card = await client.get(f"/stories/jobs/{job_id}", headers=job_page)
    assert PARAGRAPHS[0] in card.text and "hx-swap-oob" not in card.text

    # The home page's own cards of finished stories stay short: a line, title and Read.
    home = await client.get("/")
    assert "The Lantern Fox" in home.text and PARAGRAPHS[0] not in home.text
    assert 'id="newest-stories"' in home.text and OOB_SHELF not in home.text
    newest = home.text[home.text.index('id="newest-stories"'):]
    assert "The Lantern Fox" not in newest  # its card, not the newest stories too


async def test_the_job_page_without_javascript_grows_the_text_then_shows_the_story(
    client, fake_llm
):
    fake_llm.story = STORY
    fake_llm.hold_after_chunks = 4  # the title and a few words, then it waits
    fake_llm.hold()
    job_id = job_id_of(await submit(client))
    await anyio.to_thread.run_sync(fake_llm.wait_for_call, job_id)
    with anyio.fail_after(10):
        while "job-draft" not in (page := await client.get(f"/stories/jobs/{job_id}")).text:
            await anyio.sleep(0.2)
    assert 'http-equiv="refresh"' in page.text
    assert 'class="story-text job-draft" lang="en"' in page.text  # the reading type

    fake_llm.release()
    await wait_for_job(client, job_id)
    page = await client.get(f"/stories/jobs/{job_id}")
    assert 'http-equiv="refresh"' not in page.text and "hx-swap-oob" not in page.text
    assert [p in story_text(page.text) for p in PARAGRAPHS] == [True] * 3
    assert "Read the story" in page.text
