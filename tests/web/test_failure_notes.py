"""A failed card says "try again" only where trying again can help; otherwise what is
wrong, in a parent's words (app/web/failures.py)."""

from __future__ import annotations

import html

import pytest

from app.queue.jobs import FailReason
from app.storytelling.availability import model_gone_message
from app.web.failures import TRY_AGAIN, failure_note
from tests.helpers.app import post_story, wait_for_job

pytestmark = pytest.mark.anyio
HX = {"HX-Request": "true"}


@pytest.mark.parametrize("error_text", [
    FailReason.INTERRUPTED, FailReason.EXPIRED, "the storyteller took too long",
    "could not reach the storyteller", "the storyteller is busy (rate limited)",
    "the storyteller failed (HTTP 500)", "the storyteller failed (HTTP 503)",
    "the storyteller stopped mid-story", "the storyteller stopped before the story began",
    "something went wrong while writing",
])
def test_what_trying_again_can_mend_offers_it(error_text):
    note = failure_note(error_text)
    assert note.retry and "try again" in (note.advice or "").lower()


@pytest.mark.parametrize(("error_text", "says"), [
    (model_gone_message("gpt-4o-mini"), "The storyteller's model is no longer offered"),
    ("the storyteller failed (model_not_found)", "The storyteller's model is no longer offered"),
    ("the storyteller has no background mode (set LLM_API=chat)", "in the background"),
    ("the storyteller failed (HTTP 400)", "refused the app's request"),
    ("the storyteller failed (HTTP 401)", "didn't accept the app's key"),
    ("the storyteller declined to write this story", "wouldn't write a story about this idea"),
    ("the storyteller sent nothing", "sent nothing back"),
])
def test_what_trying_again_cannot_mend_says_what_is_wrong_and_offers_no_retry(error_text, says):
    note = failure_note(error_text)
    assert not note.retry
    assert says in note.what
    assert note.advice != TRY_AGAIN


def test_a_stopped_story_adds_nothing_and_may_be_started_again():
    note = failure_note(FailReason.CANCELLED)
    assert (note.what, note.advice, note.retry) == ("You stopped this story.", None, True)


def test_an_unknown_reason_is_shown_as_it_is_and_may_be_tried_again():
    note = failure_note("the storyteller sent <odd> things")
    assert "(the storyteller sent <odd> things)" in note.what and note.retry


async def test_a_declined_idea_asks_for_another_and_offers_no_try_again(client, fake_llm):
    fake_llm.mode = "refusal"
    job_id = (await post_story(client)).json()["job_id"]
    assert (await wait_for_job(client, job_id))["status"] == "failed"
    card = html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)
    assert "The storyteller wouldn't write a story about this idea." in card
    assert "Please try a different idea." in card
    assert "Nothing is lost" not in card and "Try again" not in card
    assert f'/stories/jobs/{job_id}/retry' not in card


async def test_a_busy_storyteller_still_says_nothing_is_lost_and_offers_try_again(
    client, fake_llm
):
    fake_llm.mode = "429"
    job_id = (await post_story(client)).json()["job_id"]
    assert (await wait_for_job(client, job_id))["status"] == "failed"
    card = html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)
    assert "The storyteller is busy just now." in card and "try again" in card
    assert f'/stories/jobs/{job_id}/retry' in card
