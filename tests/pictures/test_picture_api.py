"""A story's picture over HTTP: drawn once by the Images API (the fake, over real HTTP),
served with its type, ETag and cache, redrawn by key, refused kindly; the demo's own."""

from __future__ import annotations

import asyncio

import pytest

from app.illustrating.small import SMALL_MAX_BYTES, image_type
from tests.helpers.app import ACCEPT_JSON, JSON, new_key, serve
from tests.helpers.pictures import STORY_TEXT, picture_when, story_of
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio


@pytest.fixture
def drawing_app(make_app, fake_llm):
    fake_llm.story = STORY_TEXT
    return make_app(illustrator="openai", image_model="fake-image")


@pytest.mark.slow
async def test_a_story_gets_one_picture_from_the_images_api(drawing_app, fake_llm, db):
    async with serve(drawing_app) as client:
        story_id = await story_of(client, {"prompt": "a humming whale", "child_name": "Mia"})
        picture = await picture_when(client, story_id)
        assert picture["status"] == "ready" and picture["url"].startswith(
            f"/stories/{story_id}/picture?v=")
        job_id = picture["job_id"]
        assert fake_llm.images.calls_for(job_id) == 1
        assert fake_llm.images.total_calls() == 1
        [sent] = fake_llm.images.requests
        body = sent["body"]
        assert (body["model"], body["n"], body["quality"], body["output_format"]) == (
            "fake-image", 1, "low", "webp")
        assert sent["headers"]["x-story-job-id"] == str(job_id)
        # From the story, with the bedtime style; nothing of the family's own words.
        assert "The Whale Who Hummed" in body["prompt"] and "No text" in body["prompt"]
        assert "a humming whale" not in body["prompt"] and "Mia" not in body["prompt"]
        # The image: its own type, its ETag, a year's cache at its versioned URL.
        answer = await client.get(picture["url"])
        assert answer.status_code == 200 and answer.headers["content-type"] == "image/webp"
        assert image_type(answer.content) == "image/webp"
        assert "immutable" in answer.headers["cache-control"]
        assert "sandbox" in answer.headers["content-security-policy"]
        again = await client.get(picture["url"],
                                 headers={"If-None-Match": answer.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        stale = await client.get(f"/stories/{story_id}/picture")
        assert stale.headers["cache-control"] == "private, no-cache"
        small = await client.get(f"/stories/{story_id}/picture?size=small")
        assert small.status_code == 200 and len(small.content) <= SMALL_MAX_BYTES
        assert small.headers["content-type"] == "image/webp"
        # Stored before the job completed: the job is completed and the bytes are there.
        assert await fetch_val(db, "SELECT octet_length(image) FROM story_pictures"
                                   " WHERE job_id = :id", {"id": job_id}) == len(answer.content)


async def test_a_refused_picture_fails_kindly_and_leaves_the_story_alone(drawing_app, fake_llm):
    fake_llm.images.mode = "refuse"
    async with serve(drawing_app) as client:
        story_id = await story_of(client)
        before = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        picture = await picture_when(client, story_id)
        assert picture["status"] == "failed" and picture["url"] is None
        assert fake_llm.images.calls_for(picture["job_id"]) == 1
        after = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        assert {k: v for k, v in after.items() if k != "picture"} == {
            k: v for k, v in before.items() if k != "picture"}
        page = (await client.get(f"/stories/{story_id}")).text
        assert "The picture could not be drawn: the illustrator would not draw this story" in page
        assert "Draw a picture" in page and "Traceback" not in page
        missing = await client.get(f"/stories/{story_id}/picture")
        assert missing.status_code == 404


@pytest.mark.slow
async def test_a_redraw_is_one_job_per_key_and_one_at_a_time(drawing_app, fake_llm):
    async with serve(drawing_app) as client:
        story_id = await story_of(client)
        first = await picture_when(client, story_id)
        fake_llm.images.mode = "hang"
        key = new_key()
        asked = await client.post(f"/stories/{story_id}/picture",
                                  headers={**JSON, "Idempotency-Key": key})
        assert asked.status_code == 202
        job_id = asked.json()["job_id"]
        assert job_id != first["job_id"]
        again = await client.post(f"/stories/{story_id}/picture",
                                  headers={**JSON, "Idempotency-Key": key})
        assert (again.status_code, again.json()["job_id"]) == (202, job_id)
        other = await client.post(f"/stories/{story_id}/picture",
                                  headers={**JSON, "Idempotency-Key": new_key()})
        assert other.status_code == 409 and other.json()["error"]["code"] == "picture_in_progress"
        await asyncio.to_thread(fake_llm.images.wait_for_call, job_id)
        # The old picture stays shown while the new one is drawn.
        shown = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        assert shown["picture"]["status"] == "running"
        unknown = await client.post("/stories/999999/picture",
                                    headers={**JSON, "Idempotency-Key": new_key()})
        assert unknown.status_code == 404
        assert fake_llm.images.calls_for(job_id) == 1


@pytest.mark.slow
async def test_old_stories_offer_a_picture_and_draw_none_by_themselves(make_app, fake_llm, db):
    fake_llm.story = STORY_TEXT
    async with serve(make_app()) as client:  # pictures off: a story with none
        story_id = await story_of(client)
        assert (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()[
            "picture"] is None
    async with serve(make_app(illustrator="openai", image_model="fake-image")) as client:
        newer = await story_of(client)
        await picture_when(client, newer)  # the worker has drawn what there was to draw
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE picture_of = :id",
                               {"id": story_id}) == 0
        page = (await client.get(f"/stories/{story_id}")).text
        assert 'class="picture picture-offer"' in page and "Draw a picture" in page
    assert fake_llm.images.total_calls() == 1


@pytest.mark.slow
async def test_the_demo_draws_its_own_safe_night_scene(make_app, settings):
    app = make_app(storyteller="demo", illustrator="demo", demo_delay_s=0)
    async with serve(app) as client:
        first = await story_of(client, {"prompt": "a lighthouse keeper's cat"})
        picture = await picture_when(client, first)
        answer = await client.get(picture["url"])
        assert answer.headers["content-type"] == "image/svg+xml"
        svg = answer.content
        assert svg.startswith(b"<svg") and b"<script" not in svg and b"href" not in svg
        small = await client.get(f"/stories/{first}/picture?size=small")
        assert small.content == svg  # an SVG is its own small version
        frame = await client.get(f"/stories/{first}/picture/frame", headers={"HX-Request": "true"})
        assert "hx-trigger" not in frame.text and picture["url"] in frame.text
