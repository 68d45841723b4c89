"""Finishing fits any context: the request carries the title, a short note of how the story
began and at most its last 300 kept words, while the stored story is every kept word and
the rest; and a story cut short says it was finished only once a finished story exists."""

from __future__ import annotations

import asyncio
import html
import re
import uuid

import pytest

from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import JSON, new_key, serve, wait_for_job
from tests.helpers.jobs import add_job

pytestmark = pytest.mark.anyio
HX = {"HX-Request": "true"}
# 1,000 words in 200 sentences, then a sentence cut off.
SENTENCES = [f"The owl counted star number {n}." for n in range(1, 201)]


async def interrupted_with(db, words: str):
    """A job whose process wrote `words` and died: the sweeper kept them."""
    store = JobStore(db)
    dead = uuid.uuid4()
    job = await add_job(store, new_key(), StoryRequest(prompt="a lost owl"))
    assert (await store.claim_next(dead)).id == job.id
    assert await store.save_text_so_far(job.id, dead, words)
    await store.db.execute("UPDATE story_jobs SET heartbeat_at = now() - interval '1 hour'"
                           " WHERE id = $1", job.id)
    assert await store.sweep_dead_running(60) == ([], [job.id], [])
    return job


async def finish(client, job_id: int):
    return await client.post(f"/stories/jobs/{job_id}/finish",
                             headers={**JSON, "Idempotency-Key": new_key()})


@pytest.mark.parametrize("llm_api", ["chat", "responses"])
async def test_a_long_story_is_finished_from_its_last_300_words_and_kept_whole(
    make_app, fake_llm, db, llm_api
):
    job = await interrupted_with(db, "The Owl\n\n" + " ".join(SENTENCES) + " She was")
    fake_llm.story = " And then she slept. Goodnight."
    async with serve(make_app(llm_api=llm_api)) as client:
        new_id = (await finish(client, job.id)).json()["job_id"]
        done = await wait_for_job(client, new_id)
        story = (await client.get(f"/stories/{done['story_id']}",
                                  headers={"Accept": "application/json"})).json()
    assert done["status"] == "completed", done
    [sent] = [r for r in fake_llm.requests if r["job_id"] == str(new_id)]
    told = fake_llm._prompt(sent["body"])
    begun = re.findall(r"<begun>(.*?)</begun>", told, re.DOTALL)[-1]  # not the explanation
    assert len(begun.split()) <= 301  # "…" and 300 words
    assert "star number 200." in begun and "star number 100." not in told
    assert "<title>The Owl</title>" in told and "star number 1." in told  # how it began
    assert len(told.split()) < 600
    assert story["title"] == "The Owl"
    assert story["body"] == " ".join(SENTENCES) + " And then she slept. Goodnight."


async def test_the_card_says_finished_only_once_the_finished_story_exists(
    make_app, fake_llm, db
):
    job = await interrupted_with(db, "The Owl\n\nAn owl flew. She was")
    fake_llm.hold()
    async with serve(make_app(llm_timeout_s=120)) as client:  # held as long as it takes
        new_id = (await finish(client, job.id)).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, new_id)
        while_finishing = html.unescape(
            (await client.get(f"/stories/jobs/{job.id}", headers=HX)).text)
        home_while = html.unescape((await client.get("/")).text)
        fake_llm.release()
        assert (await wait_for_job(client, new_id))["status"] == "completed"
        finished = html.unescape((await client.get(f"/stories/jobs/{job.id}", headers=HX)).text)
    for card in (while_finishing, home_while):
        assert "It was finished as a new story" not in card
        assert "It is being finished as a new story." in card
    assert "It was finished as a new story." in finished


async def test_a_finish_that_failed_is_not_called_finished(make_app, fake_llm, db):
    job = await interrupted_with(db, "The Owl\n\nAn owl flew. She was")
    fake_llm.mode = "empty"
    async with serve(make_app()) as client:
        new_id = (await finish(client, job.id)).json()["job_id"]
        assert (await wait_for_job(client, new_id))["status"] == "failed"
        card = html.unescape((await client.get(f"/stories/jobs/{job.id}", headers=HX)).text)
    assert "It was finished as a new story" not in card
