"""A story read aloud over HTTP: each part one call to the fake provider (over real HTTP),
in both shapes (Chat Completions' audio output, a speech server), charged once; the same key
answers the same job; one reading at a time; the whole narration served as one MP3 with
Range requests; asking again reads only the parts missing."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from app.money import Price
from app.narrating.audio import mp3
from tests.helpers.app import ACCEPT_JSON, JSON, new_key, serve
from tests.helpers.narrations import (
    LONG,
    LONG_STORY,
    SHORT_STORY,
    ask_narration,
    narration_when,
)
from tests.helpers.pictures import story_of
from tests.helpers.sql import execute, fetch_all, fetch_val

pytestmark = pytest.mark.anyio

VOICE_PRICE = Price(input_per_mtok=Decimal("2.5"), output_per_mtok=Decimal("10"),
                    audio_output_per_mtok=Decimal("64"))


async def narration_jobs(db, story_id: int) -> list[dict]:
    return await fetch_all(db, "SELECT * FROM story_jobs WHERE narration_of = :id ORDER BY id",
                           {"id": story_id})


@pytest.fixture
def speech_app(make_app, fake_llm):
    fake_llm.story = LONG_STORY
    return make_app(narrator="speech", voice_model="kokoro", voice="af_heart")


@pytest.fixture
def audio_app(make_app, fake_llm):
    fake_llm.story = SHORT_STORY
    return make_app(narrator="openai", voice_model="fake-voice",
                    prices={"fake-voice": VOICE_PRICE})


async def test_a_long_story_is_read_in_parts_each_one_speech_call(speech_app, fake_llm, db):
    async with serve(speech_app) as client:
        story_id = await story_of(client, LONG)
        asked = await ask_narration(client, story_id)
        assert asked.status_code == 202
        narration = await narration_when(client, story_id)
        assert narration["status"] == "ready", narration
        jobs = await narration_jobs(db, story_id)
        assert [job["narration_part"] for job in jobs] == [0, 1, 2]
        assert asked.json()["job_id"] == jobs[0]["id"]
        assert {job["kind"] for job in jobs} == {"narration"}
        assert {job["status"] for job in jobs} == {"completed"}
        for job in jobs:
            assert fake_llm.audio.calls_for(job["id"]) == 1
        assert fake_llm.audio.total_calls() == 3 and fake_llm.total_calls == 1  # the story
        bodies = [sent["body"] for sent in fake_llm.audio.requests]
        assert all(sent["api"] == "speech" for sent in fake_llm.audio.requests)
        assert {(b["model"], b["voice"], b["response_format"]) for b in bodies} == {
            ("kokoro", "af_heart", "mp3")}
        assert all(len(b["input"]) <= 4000 for b in bodies)
        assert bodies[0]["input"].startswith("The Fox Who Listened.\n\nMoonlight whispered")
        # Every word read once, in order, cut only between sentences.
        read = " ".join(b["input"] for b in sorted(bodies, key=lambda b: LONG_STORY.find(
            b["input"][-60:])))
        assert read.split()[4:] == LONG_STORY.split()[4:]
        assert all(b["input"].endswith("homeward.") for b in bodies)
        # Served whole: one MP3 whose length is the parts' together.
        whole = await client.get(narration["url"])
        assert whole.status_code == 200 and whole.headers["content-type"] == "audio/mpeg"
        assert whole.headers["accept-ranges"] == "bytes"
        assert "immutable" in whole.headers["cache-control"]
        assert mp3(whole.content).seconds == pytest.approx(narration["seconds"], abs=0.1)
        assert narration["seconds"] == pytest.approx(len(LONG_STORY) / 15, rel=0.05)


async def test_chat_audio_output_reads_a_part_once_and_it_is_charged_once(audio_app, fake_llm,
                                                                          db):
    async with serve(audio_app) as client:
        story_id = await story_of(client, {"prompt": "a whale", "child_name": "Mia"})
        job_id = (await ask_narration(client, story_id)).json()["job_id"]
        narration = await narration_when(client, story_id)
        assert narration["status"] == "ready"
        assert fake_llm.audio.calls_for(job_id) == 1
        [sent] = fake_llm.audio.requests
        body = sent["body"]
        assert sent["headers"]["x-story-job-id"] == str(job_id)
        assert body["modalities"] == ["text", "audio"] and not body.get("stream")
        assert body["audio"] == {"voice": "sage", "format": "mp3"}
        assert body["model"] == "fake-voice"
        assert body["messages"][-1]["content"].startswith("The Whale Who Hummed.")
        [row] = await fetch_all(db, "SELECT * FROM spend WHERE kind = 'narration'")
        assert (row["job_id"], row["model"], row["child_name"], row["estimated"]) == (
            job_id, "fake-voice", "Mia", False)
        audio_tokens = int(narration["seconds"] * 20)
        text_tokens = row["output_tokens"] - audio_tokens
        expected = (row["input_tokens"] * Decimal("2.5") + text_tokens * Decimal("10")
                    + audio_tokens * Decimal("64")) / 1_000_000
        assert row["cost_micros"] == int((expected * 1_000_000).to_integral_value())
        assert json.loads(row["price"])["audio_output_per_mtok"] == "64"
        assert await fetch_val(db, "SELECT set_aside_micros FROM story_jobs WHERE id = :id",
                               {"id": job_id}) > row["cost_micros"]
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
        assert "narration" in spend["by_kind"]


async def test_the_same_key_answers_the_same_job_and_one_reading_at_a_time(audio_app,
                                                                          fake_llm, db):
    fake_llm.audio.hold()
    async with serve(audio_app) as client:
        story_id = await story_of(client)
        key = new_key()
        first = await ask_narration(client, story_id, key)
        again = await ask_narration(client, story_id, key)
        assert first.status_code == again.status_code == 202
        assert first.json() == again.json()
        other = await ask_narration(client, story_id)
        assert other.status_code == 409
        assert other.json()["error"]["code"] == "narration_in_progress"
        story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        assert story["narration"]["status"] in ("pending", "running")
        assert story["narration"]["url"] is None
        fake_llm.audio.release()
        await narration_when(client, story_id)
        assert len(await narration_jobs(db, story_id)) == 1
        assert fake_llm.audio.total_calls() == 1
        replayed = await ask_narration(client, story_id, key)  # after it is read: the same
        assert replayed.status_code == 202 and replayed.json() == first.json()
        whole = await ask_narration(client, story_id)  # a new key, nothing missing
        # The job that read it, to follow as any: nothing is made, nothing is called.
        assert whole.status_code == 200 and whole.json() == first.json()
        assert fake_llm.audio.total_calls() == 1


async def test_asking_again_reads_only_the_parts_missing(speech_app, fake_llm, db):
    async with serve(speech_app) as client:
        story_id = await story_of(client, LONG)
        await ask_narration(client, story_id)
        await narration_when(client, story_id)
        await execute(db, "DELETE FROM story_narration_parts WHERE story_id = :id AND part = 1",
                      {"id": story_id})
        story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        assert story["narration"]["status"] == "failed"
        assert (await client.get(f"/stories/{story_id}/narration")).status_code == 404
        again = await ask_narration(client, story_id)
        assert again.status_code == 202
        narration = await narration_when(client, story_id)
        assert narration["status"] == "ready"
        jobs = await narration_jobs(db, story_id)
        assert [job["narration_part"] for job in jobs] == [0, 1, 2, 1]
        assert jobs[-1]["id"] == again.json()["job_id"]
        assert fake_llm.audio.total_calls() == 4


async def test_a_part_that_fails_is_charged_unless_refused_and_read_again_when_asked(
        speech_app, fake_llm, db):
    fake_llm.audio.mode = "garbage"
    async with serve(speech_app) as client:
        story_id = await story_of(client, LONG)
        await ask_narration(client, story_id)
        narration = await narration_when(client, story_id, ("failed",))
        assert narration == {"status": "failed", "url": None, "seconds": None}
        # Audio it refused was paid for: each part's call is in the ledger.
        jobs = await narration_jobs(db, story_id)
        assert {job["error_text"] for job in jobs} == {"narration_unplayable"}
        assert await fetch_val(db, "SELECT count(*) FROM spend WHERE kind = 'narration'") == 3
        fake_llm.audio.mode = "ok"
        await ask_narration(client, story_id)
        assert (await narration_when(client, story_id))["status"] == "ready"
        assert fake_llm.audio.total_calls() == 6


async def test_an_unknown_story_and_narration_off_are_refused(make_app, fake_llm):
    async with serve(make_app(narrator="speech", voice_model="kokoro")) as client:
        missing = await ask_narration(client, 999_999)
        assert missing.status_code == 404
        assert (await client.get("/stories/999999/narration")).status_code == 404
    fake_llm.story = SHORT_STORY
    async with serve(make_app(narrator="off")) as client:
        story_id = await story_of(client)
        off = await ask_narration(client, story_id)
        assert off.status_code == 409 and off.json()["error"]["code"] == "narrations_off"
        story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        assert story["narration"] is None
    assert fake_llm.audio.total_calls() == 0


async def test_a_json_request_needs_its_key(audio_app):
    async with serve(audio_app) as client:
        story_id = await story_of(client)
        answer = await client.post(f"/stories/{story_id}/narration", json={}, headers=JSON)
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "idempotency_key_missing"


async def test_the_narration_answers_range_requests_as_phones_ask(audio_app, fake_llm):
    fake_llm.audio.seconds = 3.0
    async with serve(audio_app) as client:
        story_id = await story_of(client)
        await ask_narration(client, story_id)
        url = (await narration_when(client, story_id))["url"]
        whole = await client.get(url)
        data, etag, size = whole.content, whole.headers["etag"], len(whole.content)
        first = await client.get(url, headers={"Range": "bytes=0-1"})
        assert first.status_code == 206 and first.content == data[:2]
        assert first.headers["content-range"] == f"bytes 0-1/{size}"
        assert first.headers["content-length"] == "2"
        middle = await client.get(url, headers={"Range": "bytes=100-"})
        assert middle.status_code == 206 and middle.content == data[100:]
        assert middle.headers["content-range"] == f"bytes 100-{size - 1}/{size}"
        tail = await client.get(url, headers={"Range": "bytes=-104"})
        assert tail.status_code == 206 and tail.content == data[-104:]
        past = await client.get(url, headers={"Range": f"bytes={size + 10}-"})
        assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{size}"
        beyond = await client.get(url, headers={"Range": f"bytes=0-{size * 2}"})
        assert beyond.status_code == 206 and beyond.content == data
        assert (await client.get(url, headers={"Range": "bytes=5-2"})).status_code == 416
        several = await client.get(url, headers={"Range": "bytes=0-1,5-6"})
        assert several.status_code == 200 and several.content == data
        stale = await client.get(url, headers={"Range": "bytes=0-1", "If-Range": '"old"'})
        assert stale.status_code == 200 and stale.content == data
        same = await client.get(url, headers={"Range": "bytes=0-1", "If-Range": etag})
        assert same.status_code == 206
        cached = await client.get(url, headers={"If-None-Match": etag})
        assert cached.status_code == 304 and cached.content == b""
        unversioned = await client.get(f"/stories/{story_id}/narration")
        assert unversioned.headers["cache-control"] == "private, no-cache"
        assert unversioned.content == data


async def test_a_narration_the_budget_has_no_room_for_is_refused_and_nothing_written(
        make_app, fake_llm, db):
    fake_llm.story = LONG_STORY
    app = make_app(narrator="openai", voice_model="fake-voice",
                   prices={"fake-voice": VOICE_PRICE, "fake-model": Price()},
                   monthly_budget_micros=500_000)  # $0.50: less than one part's most
    async with serve(app) as client:
        story_id = await story_of(client, LONG)
        before = await fetch_val(db, "SELECT count(*) FROM story_jobs")
        refused = await ask_narration(client, story_id)
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "budget_reached"
        assert "$0.50" in error["message"] and "aloud" in error["message"]
        assert int(refused.headers["retry-after"]) > 0
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == before
        assert await fetch_val(db, "SELECT count(*) FROM spend WHERE kind = 'narration'") == 0
        story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        assert story["narration"] is None
    assert fake_llm.audio.total_calls() == 0
