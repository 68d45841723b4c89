"""Failures are codes, not sentences (issue 52): a failed job stores its failure's code, the
JSON API says it as `error_code` (which never changes) and renders `error` from it in the
request's Accept-Language; every JSON refusal's message follows Accept-Language too, its
code unchanged. The card's advice and its "Try again" follow the code, whatever the words.

(The codes are written out here, as a client would: a code renamed in app/failures.py breaks
the contract and these tests.)"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import uuid

import pytest

from app.i18n import gettext, speaking
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.jobs import add_job
from tests.helpers.sql import execute, fetch_val

pytestmark = pytest.mark.anyio
HX = {"HX-Request": "true"}
SPANISH = {**ACCEPT_JSON, "Accept-Language": "es-ES,es;q=0.9,en;q=0.5"}


async def job_json(client, job_id: int, headers: dict[str, str] = ACCEPT_JSON) -> dict:
    return (await client.get(f"/stories/jobs/{job_id}", headers=headers)).json()


@pytest.mark.parametrize(("mode", "code", "error"), [
    ("500", "storyteller_failed", "the storyteller failed"),
    ("429", "storyteller_busy", "the storyteller is busy (rate limited)"),
    ("refusal", "declined", "the storyteller declined to write this story"),
    ("empty", "storyteller_empty", "the storyteller sent nothing"),
    ("malformed", "storyteller_unreadable", "the storyteller sent an unreadable answer"),
])
async def test_a_failed_job_says_its_failure_code_and_stores_nothing_else(
    client, fake_llm, db, mode, code, error
):
    fake_llm.mode = mode
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"], job["error"]) == ("failed", code, error)
    stored = await fetch_val(db, "SELECT error_text FROM story_jobs WHERE id = :id",
                             {"id": job_id})
    assert stored == code  # the provider's words ("HTTP 500") went to the log only


async def test_a_job_still_running_or_done_has_no_error_code(client, fake_llm):
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    assert job["status"] == "completed"
    assert "error_code" in job and (job["error_code"], job["error"]) == (None, None)


async def test_silence_past_the_timeout_is_storyteller_timeout(make_app, fake_llm):
    fake_llm.delay_s = 2  # no word for longer than LLM_TIMEOUT_S
    async with serve(make_app(llm_timeout_s=0.5)) as client:
        job = await wait_for_job(client, (await post_story(client)).json()["job_id"])
    assert (job["error_code"], job["error"]) == (
        "storyteller_timeout", "the storyteller took too long")


async def test_a_stream_cut_after_its_first_words_is_cut_short_and_offers_finish(
    client, fake_llm
):
    fake_llm.mode = "closed_early"  # words, then the connection closed with no finish
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    card = html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)
    assert job["error_code"] == "cut_short" and job["text_so_far"]
    assert "Finish this story" in card


async def test_the_familys_stop_is_stopped_and_still_says_cancelled(client, fake_llm):
    fake_llm.hold()
    try:
        job_id = (await post_story(client)).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, job_id)
        await client.post(f"/stories/jobs/{job_id}/cancel", json={})
        job = await wait_for_job(client, job_id)
    finally:
        fake_llm.release()
    # The contract: error_code `stopped`; the cancel's `error = "cancelled"` (in English).
    assert (job["status"], job["error_code"], job["error"]) == ("failed", "stopped", "cancelled")


async def test_a_job_whose_process_died_is_interrupted_by_the_sweeper(make_app, fake_llm, db):
    store = JobStore(db)
    job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="lost"), "h")
    assert (await store.claim_next(uuid.uuid4())).id == job.id  # a process that then died
    await execute(db, "UPDATE story_jobs SET heartbeat_at = now() - interval '10 minutes'"
                      " WHERE id = :id", {"id": job.id})
    async with serve(make_app()) as client:  # its sweep at start-up ends the job
        swept = await job_json(client, job.id)
    assert (swept["status"], swept["error_code"], swept["error"]) == (
        "failed", "interrupted", "interrupted")
    assert await fetch_val(db, "SELECT error_text FROM story_jobs WHERE id = :id",
                           {"id": job.id}) == "interrupted"


async def test_a_failed_jobs_error_speaks_the_readers_language_and_its_code_stays(
    client, fake_llm
):
    fake_llm.mode = "429"
    job_id = (await post_story(client)).json()["job_id"]
    await wait_for_job(client, job_id)
    english, spanish = await job_json(client, job_id), await job_json(client, job_id, SPANISH)
    with speaking("es"):
        said = gettext("the storyteller is busy (rate limited)")
    assert said != "the storyteller is busy (rate limited)"  # translated (app/locale/es)
    assert (spanish["error_code"], spanish["error"]) == ("storyteller_busy", said)
    assert (english["error_code"], english["error"]) == (
        "storyteller_busy", "the storyteller is busy (rate limited)")


async def test_a_json_refusal_speaks_the_readers_language_and_its_code_stays(client):
    refused = await client.get("/stories/jobs/987654", headers=SPANISH)
    english = await client.get("/stories/jobs/987654", headers=ACCEPT_JSON)
    with speaking("es"):
        said = gettext("There is no story job with that number.")
    assert said != "There is no story job with that number."
    assert refused.status_code == english.status_code == 404
    assert refused.json()["error"] == {"code": "not_found", "message": said}
    assert english.json()["error"] == {
        "code": "not_found", "message": "There is no story job with that number."}
    assert "Accept-Language" in refused.headers["vary"]


async def test_the_json_api_follows_accept_language_not_the_households_pages(make_app):
    async with serve(make_app(), from_own_pages=True) as client:
        await client.post("/children/language", json={"language": "es"})  # the pages: Spanish
        page = (await client.get("/stories/jobs/987654")).text
        refused = await client.get("/stories/jobs/987654", headers=ACCEPT_JSON)
    with speaking("es"):
        assert gettext("There is no story job with that number.") in html.unescape(page)
    assert refused.json()["error"]["message"] == "There is no story job with that number."


async def test_a_reworded_message_keeps_its_advice_and_its_try_again(
    client, fake_llm, monkeypatch
):
    from app import failures

    fake_llm.mode = "429"
    job_id = (await post_story(client)).json()["job_id"]
    await wait_for_job(client, job_id)
    busy = failures.FAILURES["storyteller_busy"]
    monkeypatch.setitem(failures.FAILURES, "storyteller_busy", dataclasses.replace(
        busy, message="the storyteller has too much to do", what="So much to do!"))
    job = await job_json(client, job_id)
    card = html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)
    assert (job["error_code"], job["error"]) == (
        "storyteller_busy", "the storyteller has too much to do")
    assert "So much to do!" in card
    assert "Nothing is lost: try again in a minute." in card  # the advice, by its code
    assert f"/stories/jobs/{job_id}/retry" in card
