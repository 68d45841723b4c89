"""A failed card says "try again" only where trying again can help; otherwise what is
wrong, in a parent's words, from the failure's code (app/failures.py)."""

from __future__ import annotations

import html

import pytest

from app.failures import FAILURES, TRY_AGAIN, failure_of
from app.i18n import gettext, speaking
from tests.helpers.app import post_story, wait_for_job

pytestmark = pytest.mark.anyio
HX = {"HX-Request": "true"}


@pytest.mark.parametrize("code", [
    "interrupted", "expired", "storyteller_timeout", "storyteller_unreachable",
    "storyteller_busy", "storyteller_failed", "storyteller_unreadable", "cut_short",
    "not_saved", "internal",
])
def test_what_trying_again_can_mend_offers_it(code):
    failure = failure_of(code)
    assert failure.retry and "try again" in (failure.advice or "").lower()


@pytest.mark.parametrize(("code", "says"), [
    ("model_unavailable", "The storyteller's model is no longer offered"),
    ("key_refused", "didn't accept the app's key"),
    ("declined", "wouldn't write a story about this idea"),
    ("storyteller_empty", "sent nothing back"),
])
def test_what_trying_again_cannot_mend_says_what_is_wrong_and_offers_no_retry(code, says):
    failure = failure_of(code)
    assert not failure.retry
    assert says in (failure.what or "")
    assert failure.advice and failure.advice != TRY_AGAIN


def test_a_stopped_story_adds_nothing_and_may_be_started_again():
    stopped = FAILURES["stopped"]
    assert (stopped.what, stopped.advice, stopped.retry) == ("You stopped this story.", None, True)


def test_a_cut_says_whether_it_came_before_the_first_word():
    cut = FAILURES["cut_short"]
    assert cut.what_for(words_kept=True) == "The storyteller stopped in the middle of the story."
    assert cut.what_for(words_kept=False) == "The storyteller stopped before the story began."
    assert FAILURES["declined"].what_for(words_kept=False) == FAILURES["declined"].what


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


async def test_a_failed_card_speaks_the_pages_language(client, fake_llm):
    fake_llm.mode = "429"
    job_id = (await post_story(client)).json()["job_id"]
    assert (await wait_for_job(client, job_id))["status"] == "failed"
    card = html.unescape((await client.get(f"/stories/jobs/{job_id}",
                                           headers={**HX, "Accept-Language": "es"})).text)
    with speaking("es"):
        said = gettext("The storyteller is busy just now.")
    assert said != "The storyteller is busy just now." and said in card
