"""The story appears as it is written: one streamed request, the text so far on the card
and in the JSON, honest progress and estimates (issue 11, items 1, 2 and 6)."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import pytest

from app.languages import READ_ALOUD_WORDS_PER_MIN
from app.lengths import LENGTH_WORDS
from app.queue.estimates import (
    DEFAULT_EXPECTED_S,
    THINKING_PERCENT,
    Estimates,
    progress_percent,
    queue_eta_s,
)
from app.queue.jobs import Job, Status
from app.queue.store import JobStore
from app.stories import Story, StoryRequest
from app.storytelling.demo import DemoStoryteller
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.jobs import add_job
from tests.helpers.processes import AppProcess, submit
from tests.helpers.sql import execute
from tests.helpers.waits import WAIT_S

pytestmark = pytest.mark.anyio

LONG_STORY = "The Owl Who Counted Stars\n\n" + " ".join(
    f"Sentence {n} of a gentle story about an owl." for n in range(60))


async def wait_for_text(client: httpx.AsyncClient, job_id: int, timeout_s: float = 10,
                        words: str = "") -> dict:
    """The job once some of its text (or, given `words`, text with them in it) is saved."""
    deadline = time.monotonic() + timeout_s
    while True:
        job = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
        if job.get("text_so_far") and words in job["text_so_far"]:
            return job
        assert time.monotonic() < deadline, job
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_the_story_streams_onto_the_card_from_one_request(make_app, fake_llm):
    fake_llm.story = LONG_STORY
    fake_llm.hold_after_chunks = 6  # a few words, then the "model" keeps writing later
    fake_llm.hold()
    async with serve(make_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        # the words before the hold, however they were batched on a busy machine
        job = await wait_for_text(client, job_id, words="Sentence 0 of a gentle story")
        assert job["status"] == "running"
        assert LONG_STORY.startswith(job["text_so_far"].strip())
        card = (await client.get(f"/stories/jobs/{job_id}", headers={"HX-Request": "true"})).text
        assert "The Owl Who Counted Stars" in card and "Sentence 0 of a gentle story" in card
        assert 'class="story-text job-draft"' in card and 'hx-trigger="every 3s"' in card
        fake_llm.release()
        done = await wait_for_job(client, job_id)
        assert "text_so_far" not in done
    assert done["status"] == "completed"
    assert fake_llm.calls_for(job_id) == 1
    request = fake_llm.requests[0]["body"]
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}


@pytest.mark.slow
async def test_the_text_so_far_grows_and_the_bar_never_goes_back(make_app, fake_llm, db):
    fake_llm.story = LONG_STORY
    fake_llm.chunk_delay_s = 0.02  # about 5 s for the whole story
    async with serve(make_app(heartbeat_interval_s=0.2)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        seen, bars = [], []
        while True:
            job = (await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)).json()
            if job["status"] in ("completed", "failed"):
                break
            if job["status"] == "pending":
                await asyncio.sleep(0.02)
                continue
            seen.append(job["text_so_far"])
            card = (await client.get(f"/stories/jobs/{job_id}",
                                     headers={"HX-Request": "true"})).text
            if 'value="' in card:
                bars.append(int(card.split('<progress max="100" value="')[1].split('"')[0]))
            await asyncio.sleep(0.1)
    assert all(later.startswith(earlier) for earlier, later in zip(seen, seen[1:], strict=False))
    assert len({len(text) for text in seen}) > 3  # it grew, poll after poll
    assert bars == sorted(bars) and max(bars) > THINKING_PERCENT
    assert fake_llm.total_calls == 1


@pytest.mark.slow
async def test_a_crash_mid_stream_ends_interrupted_after_restart_with_no_second_call(
    database_url, fake_llm, tmp_path
):
    fake_llm.story = LONG_STORY
    fake_llm.hold_after_chunks = 4
    fake_llm.hold()
    app = AppProcess(database_url, fake_llm.url, tmp_path / "app.log")
    conn = await asyncpg.connect(database_url)
    try:
        await app.start()
        async with httpx.AsyncClient(base_url=app.url) as client:
            job_id, = await submit(client, 1, run=0)
        # A loaded machine's new process imports the provider's library before its first
        # words (seconds): WAIT_S, not a guess of how busy the machine is.
        deadline = time.monotonic() + WAIT_S
        while not await conn.fetchval("SELECT text_so_far FROM story_jobs WHERE id = $1",
                                      job_id):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        app.kill9()
        fake_llm.release()
        await app.start()
        while (row := await conn.fetchrow(
                "SELECT status, error_text FROM story_jobs WHERE id = $1", job_id)
               )["status"] == "running":
            assert time.monotonic() < deadline + WAIT_S
            await asyncio.sleep(0.1)
    finally:
        app.stop()
        await conn.close()
    assert (row["status"], row["error_text"]) == ("failed", "interrupted")
    assert fake_llm.calls_for(job_id) == 1


@pytest.mark.slow
async def test_the_demo_storyteller_streams_a_story_of_the_length_asked_for():
    demo = DemoStoryteller(delay_s=0.2, seed=7)
    for length in ("short", "medium", "long"):
        seen: list[str] = []
        story = await demo.write(StoryRequest(prompt="an owl", length=length), job_id=1,
                                 on_text=seen.append)
        assert len(seen) > 50 and all(b.startswith(a) for a, b in zip(seen, seen[1:],
                                                                       strict=False))
        assert seen[-1].startswith(story.title)
        words = len(story.body.split())
        assert 0.9 * LENGTH_WORDS[length] <= words <= 1.3 * LENGTH_WORDS[length], (length, words)
    # The form's labels, read aloud slowly: about 2, 4 and 7 minutes.
    assert [round(LENGTH_WORDS[n] / READ_ALOUD_WORDS_PER_MIN) for n in ("short", "medium",
                                                                         "long")] == [2, 4, 7]


# -- the estimates -----------------------------------------------------------------------


def job(status: Status = Status.RUNNING, *, text: str = "", started_s_ago: float = 0,
        length: str = "medium") -> Job:
    now = datetime.now(UTC)
    return Job(id=1, idempotency_key="k", request_hash="h",
               request=StoryRequest(prompt="p", length=length), status=status, story_id=None,
               error_text=None, created_at=now - timedelta(seconds=started_s_ago + 1),
               started_at=now - timedelta(seconds=started_s_ago), completed_at=None,
               text_so_far=text)


def test_progress_creeps_while_thinking_then_follows_the_words():
    now = time.time()
    assert progress_percent(job(started_s_ago=0), expected_s=90, now=now) == 0
    assert progress_percent(job(started_s_ago=600), expected_s=90, now=now) == THINKING_PERCENT
    words = LENGTH_WORDS["medium"]
    half = progress_percent(job(text="word " * (words // 2), started_s_ago=600),
                            expected_s=90, now=now)
    assert 45 <= half <= 55
    assert progress_percent(job(text="word " * (words * 3)), expected_s=90, now=now) == 99
    steps = [progress_percent(job(text="word " * n, started_s_ago=600), expected_s=90, now=now)
             for n in range(0, words * 2, 7)]
    assert steps == sorted(steps)  # never backwards as words arrive
    assert progress_percent(job(Status.COMPLETED), expected_s=90, now=now) == 100
    assert progress_percent(job(Status.PENDING), expected_s=90, now=now) == 0


def test_a_waiting_job_is_ready_after_the_jobs_ahead_of_it():
    assert queue_eta_s(position=1, running=0, slots=1, expected_s=90) == 90  # starts at once
    assert queue_eta_s(position=1, running=1, slots=1, expected_s=90) == 180
    assert queue_eta_s(position=8, running=1, slots=1, expected_s=90) == 810  # ~12 minutes
    assert queue_eta_s(position=3, running=2, slots=4, expected_s=60) == 75
    assert queue_eta_s(position=2, running=0, slots=0, expected_s=60) is None  # no worker


async def test_expected_time_comes_from_recent_history_per_length_and_model(db):
    store = JobStore(db)
    estimates = Estimates(store.db, model="fake-model", defaults=DEFAULT_EXPECTED_S)
    assert await estimates.expected_s("short") == DEFAULT_EXPECTED_S["short"]

    async def finished(length: str, seconds: float, model: str) -> None:
        made = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="p", length=length), "h")
        boot = uuid.uuid4()
        claimed = await store.claim_next(boot)
        assert claimed.id == made.id
        story_id = await store.insert_story(made.id, boot, Story(title="t", body="b", model=model))
        assert await store.complete(made.id, boot, story_id)
        await execute(db, "UPDATE story_jobs SET completed_at = started_at"
                         " + make_interval(secs => :s) WHERE id = :id",
                         {"s": seconds, "id": made.id})

    for seconds in (30, 40, 50):
        await finished("short", seconds, "fake-model-2026-01-01")  # a dated model name
    await finished("long", 300, "fake-model")  # too few long ones yet: the default stands
    for seconds in (500, 600, 700):
        await finished("short", seconds, "another-model")  # not ours
    fresh = Estimates(store.db, model="fake-model", defaults=DEFAULT_EXPECTED_S)
    assert await fresh.expected_s("short") == 40
    assert await fresh.expected_s("long") == DEFAULT_EXPECTED_S["long"]
    assert await estimates.expected_s("short") == DEFAULT_EXPECTED_S["short"]  # cached a while


@pytest.mark.slow
async def test_the_pending_card_says_how_long_and_starts_without_a_waiting_flash(
    make_app, fake_llm
):
    fake_llm.hold()
    async with serve(make_app(queue_max=10)) as client:
        first = (await post_story(client, {"prompt": "one"})).json()["job_id"]
        await asyncio.to_thread(fake_llm.wait_for_call, first)
        waiting = [(await post_story(client, {"prompt": f"n{n}"})).json()["job_id"]
                   for n in range(8)]
        last = (await client.get(f"/stories/jobs/{waiting[-1]}",
                                 headers={"HX-Request": "true"})).text
        assert "Number 8 in line: ready in about" in last
        minutes = int(last.split("ready in about ")[1].split(" minute")[0])
        assert minutes >= 8  # nine stories to write first, one at a time
        fake_llm.release()
    # With nobody in line, a new job's card says it is starting, not waiting its turn.
    fake_llm.hold()
    async with serve(make_app()) as client:
        response = await client.post(
            "/stories/generate", data={"prompt": "alone", "idempotency_key": uuid.uuid4().hex},
            headers={"HX-Request": "true", "Origin": "http://testserver"})
        assert "Waiting its turn" not in response.text
        fake_llm.release()
