"""What a server's stream looks like when it is not a story arriving word by word, and what
the app makes of it (app/storytelling/openai.py, responses.py, reader.py): deltas with no
words are silence, a stream cut before its first word is a cut (Try again), a whole JSON
answer to a streamed request is the story, a request that never left is sent once more,
and an unreadable create is one warning line. Each against the fake over real HTTP."""

from __future__ import annotations

import asyncio
import html
import logging
import re
import time
from decimal import Decimal

import pytest

from app.money import Price
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.fake_llm import free_port
from tests.helpers.proxy import CuttableProxy
from tests.helpers.sql import fetch_all

pytestmark = pytest.mark.anyio
HX = {"HX-Request": "true"}
PRICES = {"fake-model": Price(input_per_mtok=Decimal("0.15"), output_per_mtok=Decimal("0.6"))}
# A job whose storyteller sends no words is failed within LLM_TIMEOUT_S and a follow-up
# retrieve or two, never held on by deltas that bring nothing. 2 s: LLM_TIMEOUT_S bounds the
# create too, and on a loaded machine (load average 18) a create to the in-process fake took
# over 1 s, so the job failed before the deltas this test is about were ever sent.
SILENCE_TIMEOUT_S = 2
SILENCE_BOUND_S = 10.0


async def card_of(client, job_id: int) -> str:
    return html.unescape((await client.get(f"/stories/jobs/{job_id}", headers=HX)).text)


# -- silence means no words ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("llm_api", ["chat", "responses"])
@pytest.mark.parametrize("mode", ["empty_deltas", "role_deltas"])
async def test_deltas_with_no_words_fail_the_job_once_the_timeout_passes(
    make_app, fake_llm, llm_api, mode
):
    fake_llm.mode = mode  # a delta with no words every 0.5 s, for as long as the app listens
    async with serve(make_app(llm_api=llm_api, llm_timeout_s=SILENCE_TIMEOUT_S)) as client:
        started = time.monotonic()
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id, timeout_s=SILENCE_BOUND_S + 5)
        took_s = time.monotonic() - started
    assert (job["status"], job["error_code"]) == ("failed", "storyteller_timeout")
    assert took_s < SILENCE_BOUND_S, took_s
    # The call may reach the fake after the 1 s timeout has failed the job: on a busy
    # machine the fake's thread, in this process, can be that late to read it.
    await asyncio.to_thread(fake_llm.wait_for_call, job_id)
    assert fake_llm.calls_for(job_id) == 1


@pytest.mark.slow
@pytest.mark.parametrize("llm_api", ["chat", "responses"])
async def test_keep_alive_deltas_after_the_first_words_are_silence_and_cut_it_short(
    make_app, fake_llm, llm_api
):
    fake_llm.mode = "keepalive_after_words"  # 3 chunks of words, then deltas with none
    async with serve(make_app(llm_api=llm_api, llm_timeout_s=SILENCE_TIMEOUT_S)) as client:
        started = time.monotonic()
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id, timeout_s=SILENCE_BOUND_S + 5)
        took_s = time.monotonic() - started
        full = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
        card = await card_of(client, job_id)
    assert (job["status"], job["error_code"]) == ("failed", "cut_short")
    assert took_s < SILENCE_BOUND_S, took_s
    assert full["text_so_far"].startswith(f"The Story of Job {job_id}")  # the words kept
    assert "Finish this story" in card
    assert fake_llm.calls_for(job_id) == 1


# -- a cut before the first word is a cut ------------------------------------------------------


@pytest.mark.parametrize("mode", ["closed_before_words", "done_before_words"])
async def test_a_stream_cut_before_its_first_word_is_a_cut_and_offers_try_again(
    client, fake_llm, mode
):
    fake_llm.mode = mode  # a role delta, then the connection closed, or [DONE] and no finish
    job_id = (await post_story(client)).json()["job_id"]
    job = await wait_for_job(client, job_id)
    full = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
    card = await card_of(client, job_id)
    assert (job["status"], job["error_code"]) == ("failed", "cut_short")
    assert full["text_so_far"] == ""
    assert "The storyteller stopped before the story began." in card
    assert "Try again" in card and f"/stories/jobs/{job_id}/retry" in card
    assert "Finish this story" not in card
    assert "sent nothing" not in card and "shorter length" not in card
    assert "another idea" not in card
    assert fake_llm.calls_for(job_id) == 1  # a request that reached the server: never again


# -- a whole JSON answer to a streamed request is read -----------------------------------------


async def test_a_whole_json_answer_to_a_streamed_request_is_the_story_and_its_usage_counts(
    make_app, fake_llm, db
):
    fake_llm.mode = "whole_answer"  # `"stream": true` answered with one chat.completion
    async with serve(make_app(prices=PRICES)) as client:
        job_id = (await post_story(client, {"prompt": "a fox"})).json()["job_id"]
        job = await wait_for_job(client, job_id)
        assert job["status"] == "completed", job
        story = (await client.get(f"/stories/{job['story_id']}", headers=ACCEPT_JSON)).json()
    assert story["title"] == f"The Story of Job {job_id}"
    assert story["body"] == "Once upon a time, a gentle tale about: a fox"
    [row] = await fetch_all(db, "SELECT * FROM spend")  # its reported usage, not an estimate
    assert (row["input_tokens"], row["output_tokens"], row["estimated"]) == (42, 314, False)
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.total_calls == 1


# -- a request that never left is sent once more -----------------------------------------------


class _HealOnReconnect(logging.Handler):
    """Lets connections through the proxy the moment the app says it connects again for
    a job: the first try is refused, the second reaches the fake."""

    def __init__(self, proxy: CuttableProxy) -> None:
        super().__init__()
        self.proxy = proxy

    def emit(self, record: logging.LogRecord) -> None:
        # Not for the start-up's model check (job_id=none): its own try is refused twice.
        if re.search(r"event=provider_reconnect .*job_id=\d", record.getMessage()):
            self.proxy.heal()


async def test_a_refused_connection_is_tried_once_more_and_the_story_written(
    make_app, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    bedtime = logging.getLogger("bedtime")
    with CuttableProxy(fake_llm.url) as proxy:
        proxy.cut()  # connections refused until the app connects again
        handler = _HealOnReconnect(proxy)
        bedtime.addHandler(handler)
        try:
            async with serve(make_app(openai_base_url=proxy.url, prices=PRICES)) as client:
                job_id = (await post_story(client)).json()["job_id"]
                job = await wait_for_job(client, job_id)
        finally:
            bedtime.removeHandler(handler)
    assert job["status"] == "completed", job
    assert fake_llm.calls_for(job_id) == 1
    reconnects = [r for r in caplog.records if "event=provider_reconnect" in r.getMessage()
                  and f"job_id={job_id}" in r.getMessage()]
    assert len(reconnects) == 1 and reconnects[0].levelno == logging.WARNING
    [row] = await fetch_all(db, "SELECT * FROM spend")  # one call, billed once
    assert (row["job_id"], row["estimated"]) == (job_id, False)


async def test_a_storyteller_never_reached_fails_the_job_and_charges_nothing(
    make_app, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    closed = f"http://127.0.0.1:{free_port()}/v1"
    async with serve(make_app(openai_base_url=closed, prices=PRICES,
                              monthly_budget_micros=1_000_000)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
    assert (job["status"], job["error_code"]) == ("failed", "storyteller_unreachable")
    assert await fetch_all(db, "SELECT * FROM spend") == []  # nothing left, nothing billed
    assert (spend["spent_usd"], spend["reserved_usd"]) == ("0", "0")
    reconnects = [r for r in caplog.records if "event=provider_reconnect" in r.getMessage()
                  and f"job_id={job_id}" in r.getMessage()]
    assert len(reconnects) == 1  # tried twice in all, never a third time


# -- an unreadable create is one warning line --------------------------------------------------


async def test_an_unreadable_responses_create_is_one_warning_line(make_app, fake_llm, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.mode = "malformed"  # the create answered with garbage
    async with serve(make_app(llm_api="responses")) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"]) == ("failed", "storyteller_unreadable")
    assert fake_llm.creates_for(job_id) == 1
    records = [r for r in caplog.records if r.name == "bedtime"]
    assert [r for r in records if r.levelno >= logging.ERROR or r.exc_info] == [], caplog.text
    failed = [r for r in records if f"event=job_failed job_id={job_id}" in r.getMessage()]
    assert [r.levelno for r in failed] == [logging.WARNING]
    assert "Traceback" not in caplog.text
