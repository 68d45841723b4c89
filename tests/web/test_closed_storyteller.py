"""A mode that cannot work closes the form: once the app knows no story can be written
(start-up found the storyteller's endpoint missing, or its model no longer offered), the
story form and the one-tap buttons are closed with the reason, as the day's limit closes
them, and `POST /stories/generate` answers 503 `storyteller_unavailable` without making a
job. A replay is still answered as ever."""

from __future__ import annotations

import html
import logging
import re

import pytest

from app.i18n import gettext, speaking
from tests.helpers.app import JSON, new_key, post_story, serve, wait_for_job
from tests.helpers.sql import fetch_one
from tests.helpers.waits import until

pytestmark = pytest.mark.anyio

NO_RESPONSES = "Stories can't be written: this storyteller has no %(endpoint)s (set %(setting)s)."
MODEL_GONE = "Stories can't be written: the storyteller no longer offers %(model)s (set " \
             "STORY_MODEL)."


async def jobs_made(db) -> int:
    return (await fetch_one(db, "SELECT count(*) AS n FROM story_jobs"))["n"]


def limit_note(page: str) -> str:
    (note,) = re.findall(r'<p class="notice" id="limit-note"[^>]*>(.*?)</p>', page, re.S)
    return html.unescape(note)


def assert_closed(page: str, reason: str) -> None:
    """Closed as the day's limit closes it: the reason above the fields, every field and
    one-tap button disabled, no "Write the story", no stories-left count."""
    assert reason in limit_note(page)
    assert '<fieldset class="form-fields" disabled>' in page
    assert "Write the story</button>" not in page and "stories left today" not in page
    assert re.search(r'<button class="button big" type="submit" disabled><span>Tonight, for',
                     page)
    assert not re.search(r'<button class="button big" type="submit"><span>', page)


async def with_a_child(client) -> None:
    added = await client.post("/children", data={"name": "Mia", "age": "5"},
                              headers={"Accept": "text/html"})
    assert added.status_code in (200, 201, 303), added.text


async def test_a_server_without_the_responses_api_closes_the_form_and_refuses_stories(
    make_app, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.responses_api = False
    async with serve(make_app(llm_api="responses"), from_own_pages=True) as client:
        await with_a_child(client)
        await until(lambda: "event=endpoint_missing" in caplog.text, "the start-up check")
        page = (await client.get("/")).text
        answer = await post_story(client)
        typed = await client.post("/stories/generate", data={
            "idempotency_key": new_key(), "prompt": "an owl", "for": "other"})
    reason = NO_RESPONSES % {"endpoint": "/responses", "setting": "LLM_API=chat"}
    assert_closed(page, reason)
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"] == {"code": "storyteller_unavailable", "message": reason}
    assert "Retry-After" in answer.headers
    assert typed.status_code == 503 and reason in limit_note(typed.text)
    assert await jobs_made(db) == 0 and fake_llm.total_calls == 0


async def test_a_model_the_provider_no_longer_offers_closes_the_form_in_its_language(
    make_app, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.retired_models = {"gpt-4o-mini"}
    async with serve(make_app(story_model="gpt-4o-mini"), from_own_pages=True) as client:
        await with_a_child(client)
        await until(lambda: "event=model_unavailable" in caplog.text, "the start-up check")
        page = (await client.get("/")).text
        spanish = await client.post(
            "/stories/generate", json={"prompt": "un búho"},
            headers={**JSON, "Idempotency-Key": new_key(), "Accept-Language": "es"})
    assert_closed(page, MODEL_GONE % {"model": "gpt-4o-mini"})
    with speaking("es"):
        in_spanish = gettext(MODEL_GONE) % {"model": "gpt-4o-mini"}
    assert in_spanish != MODEL_GONE % {"model": "gpt-4o-mini"}
    assert spanish.status_code == 503
    assert spanish.json()["error"] == {"code": "storyteller_unavailable",
                                       "message": in_spanish}
    assert await jobs_made(db) == 0
    assert fake_llm.unbilled_requests == [] and fake_llm.total_calls == 0


async def test_once_a_job_finds_the_model_gone_a_replay_is_answered_and_a_new_story_refused(
    make_app, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.models_api = False  # nothing known at start-up: the first job finds out
    fake_llm.retired_models = {"gpt-4o-mini"}
    async with serve(make_app(story_model="gpt-4o-mini")) as client:
        await until(lambda: "event=model_check_skipped" in caplog.text, "the start-up check")
        assert "limit-note" not in (await client.get("/")).text
        key = new_key()
        job_id = (await post_story(client, key=key)).json()["job_id"]
        assert (await wait_for_job(client, job_id))["error_code"] == "model_unavailable"
        replay = await post_story(client, key=key)
        refused = await post_story(client)
        page = (await client.get("/")).text
    assert replay.status_code == 202 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["job_id"] == job_id
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "storyteller_unavailable"
    assert "gpt-4o-mini" in refused.json()["error"]["message"]
    assert MODEL_GONE % {"model": "gpt-4o-mini"} in limit_note(page)
    assert await jobs_made(db) == 1
