"""Idempotency-Key: a retry returns the same job, and never makes a second LLM call."""

from __future__ import annotations

import asyncio
import hashlib

import httpx
import pytest

from app.requests import parse_story_request, request_hash
from app.stories import StoryRequest
from tests.helpers.app import JSON, post_story, serve, wait_for_job
from tests.helpers.forms import form_key
from tests.helpers.sql import execute, fetch_val
from tests.web.test_children import add_child

pytestmark = pytest.mark.anyio

BODY = {"prompt": "a dragon who is afraid of the dark", "child_name": "Mia", "age": 5}


async def test_a_replay_returns_the_same_job_with_its_current_status(client, fake_llm):
    first = await post_story(client, BODY, key="bedtime-1")
    job_id = first.json()["job_id"]
    await wait_for_job(client, job_id)
    again = await post_story(client, BODY, key="bedtime-1")
    assert again.status_code == 202
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["location"] == f"/stories/jobs/{job_id}"
    assert again.json() == {"job_id": job_id, "status": "completed",
                            "poll_url": f"/stories/jobs/{job_id}"}
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.total_calls == 1


async def test_the_same_request_normalised_is_a_replay(client):
    first = await post_story(client, {"prompt": "owls", "length": "medium", "age": 4}, key="k")
    for body in (
        {"age": 4, "prompt": "  owls  "},
        {"prompt": "owls", "age": 4, "child_name": None},
        {"prompt": "owls", "age": 4, "child_name": ""},
    ):
        again = await post_story(client, body, key="k")
        assert again.status_code == 202, body
        assert again.json()["job_id"] == first.json()["job_id"]


async def test_the_quoted_key_is_the_same_key(client):
    first = await post_story(client, BODY, key="abc")
    again = await post_story(client, BODY, key='"abc"')
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["job_id"] == first.json()["job_id"]


async def test_the_same_key_with_another_body_is_refused(client, db):
    await post_story(client, BODY, key="k1")
    for body in ({**BODY, "age": 6}, {**BODY, "length": "long"}, {"prompt": "a whale"}):
        response = await post_story(client, body, key="k1")
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


async def test_fifty_racing_copies_make_one_job_and_one_call(make_app, fake_llm, db):
    fake_llm.hold()  # keep the job running while the copies race
    async with serve(make_app(queue_max=1)) as client:
        responses = await asyncio.gather(
            *(client.post("/stories/generate", json=BODY,
                          headers={**JSON, "Idempotency-Key": "race"}) for _ in range(50))
        )
        assert [r.status_code for r in responses] == [202] * 50
        job_ids = {r.json()["job_id"] for r in responses}
        assert len(job_ids) == 1
        assert sum(r.headers.get("idempotent-replayed") == "true" for r in responses) == 49
        fake_llm.release()
        job = await wait_for_job(client, job_ids.pop())
    assert job["status"] == "completed"
    assert fake_llm.total_calls == 1
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


# -- what the client sent: a profile's values are not part of the request ---------------


async def one_tap(client, child_id: int, key: str) -> httpx.Response:
    return await post_story(client, {"prompt": "a sleepy owl", "child_id": child_id}, key=key)


async def test_a_replay_after_its_profile_is_edited_is_still_a_replay(client, db):
    mia = await add_child(client, {"name": "Mia", "age": 5, "likes": "foxes"})
    first = await one_tap(client, mia["child_id"], "tonight")
    await execute(db, "UPDATE children SET name = 'Amelia', age = 9, length = 'long',"
                      " language = 'fr', likes = 'trains' WHERE id = :id",
                  {"id": mia["child_id"]})
    again = await one_tap(client, mia["child_id"], "tonight")
    assert again.status_code == 202, again.text
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["job_id"] == first.json()["job_id"]
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


async def test_a_replay_after_its_profile_is_deleted_is_still_a_replay(client, db):
    mia = await add_child(client, {"name": "Mia", "age": 5})
    leo = await add_child(client, {"name": "Leo", "age": 3})
    first = await one_tap(client, mia["child_id"], "tonight")
    both = {"prompt": "a sleepy owl", "child_id": mia["child_id"], "sibling_id": leo["child_id"]}
    together = await post_story(client, both, key="together")
    assert (await client.post(f"/children/{mia['child_id']}/delete", json={})).status_code == 204
    again = await one_tap(client, mia["child_id"], "tonight")
    assert again.status_code == 202, again.text
    assert again.json()["job_id"] == first.json()["job_id"]
    replayed = await post_story(client, both, key="together")
    assert replayed.status_code == 202, replayed.text
    assert replayed.json()["job_id"] == together.json()["job_id"]
    new = await one_tap(client, mia["child_id"], "another night")  # a new job: no profile
    assert new.status_code == 422 and "child_id" in new.json()["error"]["message"]


async def test_a_replay_naming_a_profile_is_answered_before_the_queue_bound(make_app, fake_llm):
    fake_llm.hold()
    async with serve(make_app(queue_max=1, daily_story_limit=2)) as client:
        mia = await add_child(client, {"name": "Mia"})
        first = await one_tap(client, mia["child_id"], "tonight")
        await asyncio.to_thread(fake_llm.wait_for_call, first.json()["job_id"])
        await one_tap(client, mia["child_id"], "waiting")  # the queue is full, the day's used
        await edit_profile(client, mia["child_id"])
        again = await one_tap(client, mia["child_id"], "tonight")
        fake_llm.release()
    assert again.status_code == 202 and again.json()["job_id"] == first.json()["job_id"]


async def edit_profile(client, child_id: int) -> None:
    """The profile edited, as the Children page does it."""
    response = await client.post(f"/children/{child_id}", json={"name": "Amelia", "age": 9})
    assert response.status_code == 200, response.text


async def test_the_same_key_naming_another_profile_is_refused(client):
    mia = await add_child(client, {"name": "Mia", "age": 5})
    twin = await add_child(client, {"name": "Mia", "age": 5})  # the same values
    await one_tap(client, mia["child_id"], "tonight")
    other = await one_tap(client, twin["child_id"], "tonight")
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"


async def test_a_one_tap_form_sent_again_after_the_profile_changed_is_the_same_story(
    make_app, db, fake_llm
):
    async with serve(make_app(), from_own_pages=True) as browser:
        mia = await add_child(browser, {"name": "Mia", "age": 5})
        form = {"prompt": "a sleepy owl", "child_id": str(mia["child_id"]),
                "idempotency_key": form_key((await browser.get("/")).text)}
        first = await browser.post("/stories/generate", data=form)
        await edit_profile(browser, mia["child_id"])
        again = await browser.post("/stories/generate", data=form)
    assert first.status_code == again.status_code == 303
    assert again.headers["location"] == first.headers["location"]
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 1


def test_a_request_naming_no_profile_hashes_as_it_always_has():
    """Jobs made before the profiles' ids counted must still replay: the same digest."""
    canonical = '{"age": 4, "child_name": "Mia", "length": "medium", "prompt": "owls"}'
    assert request_hash(StoryRequest(prompt="owls", child_name="Mia", age=4)) == (
        hashlib.sha256(canonical.encode()).hexdigest())
    assert request_hash(parse_story_request({"prompt": " owls ", "child_name": "Mia",
                                             "age": 4})) == hashlib.sha256(
        canonical.encode()).hexdigest()
