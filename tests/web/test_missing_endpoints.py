"""A server without an endpoint the settings use (/images/generations, /responses,
/moderations) is named as such, with the setting that mends it: once at start-up (one
WARNING, a notice on the home page), on the page of a job that failed that way, and never
blamed on a model. "Draw a picture" is not offered while the illustrator has no endpoint.
And a model the provider stops offering while a background story is followed is named."""

from __future__ import annotations

import asyncio
import html
import logging
import time

import pytest

from tests.helpers.app import JSON, new_key, post_story, serve, wait_for_job
from tests.helpers.pictures import STORY_TEXT, picture_when
from tests.helpers.waits import WAIT_S, until

pytestmark = pytest.mark.anyio
NO_IMAGES = "this storyteller has no /images/generations (set ILLUSTRATOR=off)"
NO_RESPONSES = "this storyteller has no /responses (set LLM_API=chat)"
NO_MODERATIONS = "this storyteller has no /moderations (set MODERATION=off)"


async def home_when(client, says: str) -> str:
    """The home page once it says `says` (the start-up check runs once the app serves)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        page = html.unescape((await client.get("/")).text)
        if says in page or time.monotonic() > deadline:
            return page
        await asyncio.sleep(0.05)


def warnings_of(caplog, event: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and f"event={event}" in r.getMessage()]


async def test_a_server_without_the_images_api_is_named_and_offers_no_picture(
    make_app, fake_llm, caplog
):
    fake_llm.story = STORY_TEXT
    fake_llm.images.mode = "no_route"
    caplog.set_level(logging.INFO)
    async with serve(make_app(illustrator="openai", image_model="fake-image")) as client:
        home = await home_when(client, NO_IMAGES[1:])
        assert "This storyteller has no /images/generations (set ILLUSTRATOR=off)." in home
        job = await wait_for_job(client, (await post_story(client)).json()["job_id"])
        picture = await picture_when(client, job["story_id"])
        page = html.unescape((await client.get(f"/stories/{job['story_id']}")).text)
    assert picture["status"] == "failed"
    assert f"The picture could not be drawn: {NO_IMAGES}" in page
    assert "does not offer this model" not in page and "IMAGE_MODEL" not in page
    assert "Draw a picture" not in page
    assert fake_llm.images.total_calls() == 0  # neither the check nor the job drew anything
    [warning] = warnings_of(caplog, "endpoint_missing")
    assert "endpoint=/images/generations" in warning and "ILLUSTRATOR=off" in warning


async def test_an_image_model_the_server_lacks_is_still_the_model(make_app, fake_llm):
    fake_llm.story = STORY_TEXT
    fake_llm.images.mode = "model_not_found"
    async with serve(make_app(illustrator="openai", image_model="fake-image")) as client:
        job = await wait_for_job(client, (await post_story(client)).json()["job_id"])
        picture = await picture_when(client, job["story_id"])
        page = html.unescape((await client.get(f"/stories/{job['story_id']}")).text)
        home = html.unescape((await client.get("/")).text)
    assert picture["status"] == "failed"
    assert "does not offer this model (set IMAGE_MODEL)" in page and "Draw a picture" in page
    assert "has no /images/generations" not in page + home
    # The start-up check asked (a GET: 405, the route is there), and drew nothing.
    assert "/images/generations" in fake_llm.probes


async def test_a_server_without_the_responses_api_is_named_at_start_up(
    make_app, fake_llm, caplog
):
    fake_llm.responses_api = False
    caplog.set_level(logging.INFO)
    async with serve(make_app(llm_api="responses")) as client:
        home = await home_when(client, NO_RESPONSES[1:])
    assert "This storyteller has no /responses (set LLM_API=chat)." in home
    assert len(warnings_of(caplog, "endpoint_missing")) == 1
    # Nothing to write with: the form is closed (tests/web/test_closed_storyteller.py).
    assert "Stories can't be written: this storyteller has no /responses" in home


async def test_a_job_that_meets_a_missing_responses_api_names_it_on_its_card(
    make_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO)
    async with serve(make_app(llm_api="responses")) as client:
        # The start-up check found the route (a 405); the server loses it afterwards.
        await until(lambda: "event=endpoint_checked endpoint=/responses" in caplog.text,
                    "the start-up check")
        fake_llm.responses_api = False
        job = await wait_for_job(client, (await post_story(client)).json()["job_id"])
        card = html.unescape((await client.get(f"/stories/jobs/{job['job_id']}",
                                               headers={"HX-Request": "true"})).text)
        home = await home_when(client, NO_RESPONSES[1:])
    assert "This storyteller has no /responses (set LLM_API=chat)." in home
    # The provider answered an error (the home page names the setting); never a model's.
    assert (job["status"], job["error_code"]) == ("failed", "storyteller_failed")
    assert "The storyteller answered with an error." in card
    assert "no longer offered" not in card and "STORY_MODEL" not in card
    [warning] = warnings_of(caplog, "endpoint_missing")  # the job's, said once
    assert 'seen_by="job ' in warning


async def test_a_server_without_moderations_is_named_and_refuses_nothing_silently(
    make_app, fake_llm
):
    fake_llm.moderations_api = False
    async with serve(make_app(moderation=True)) as client:
        home = await home_when(client, NO_MODERATIONS[1:])
        answer = await client.post("/stories/generate", json={"prompt": "a calm sea"},
                                   headers={**JSON, "Idempotency-Key": new_key()})
    assert "This storyteller has no /moderations (set MODERATION=off)." in home
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "moderation_unavailable"
    assert NO_MODERATIONS in answer.json()["error"]["message"]


async def test_a_server_with_every_endpoint_says_nothing(make_app, fake_llm, caplog):
    caplog.set_level(logging.INFO)
    app = make_app(llm_api="responses", illustrator="openai", moderation=True)
    async with serve(app) as client:
        # Each endpoint's start-up check has had its answer (a 405: the route is there).
        await until(lambda: all(f"event=endpoint_checked endpoint={endpoint}" in caplog.text
                                for endpoint in ("/responses", "/images/generations",
                                                 "/moderations")), "the start-up checks")
        home = html.unescape((await client.get("/")).text)
    assert "has no /" not in home and not warnings_of(caplog, "endpoint_missing")
    assert fake_llm.images.total_calls() == 0 and fake_llm.total_calls == 0
    assert not fake_llm.moderation_inputs


async def test_a_model_gone_while_a_background_story_is_followed_is_named(
    make_app, fake_llm
):
    fake_llm.retired_while_writing = {"fake-model"}  # created, then no longer offered
    async with serve(make_app(llm_api="responses")) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        home = html.unescape((await client.get("/")).text)
    assert (job["status"], job["error_code"]) == ("failed", "model_unavailable")
    assert fake_llm.creates_for(job_id) == 1
    assert "no longer offers <code>fake-model</code>" in home  # said on the home page, as at create
