"""Background generation (LLM_API=responses), in-process: the one create, the id saved
first, the story followed by id (again after a dropped stream), the provider's outcomes,
adoption by another worker, and a worker that lost its job storing nothing.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import replace as dataclass_replace

import pytest

from app.queue.check import Invariants
from app.queue.jobs import Status
from app.queue.store import JobStore
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.locks import holding
from tests.helpers.sql import execute, fetch_one
from tests.helpers.waits import until

pytestmark = pytest.mark.anyio


@pytest.fixture
def make_background_app(make_app):
    def build(**overrides: object):
        return make_app(llm_api="responses", **overrides)
    return build


async def test_one_create_then_the_story_is_followed_by_id(make_background_app, fake_llm, db):
    fake_llm.chunk_delay_s = 0.01
    async with serve(make_background_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    assert fake_llm.calls_for(job_id) == 1 and fake_llm.creates_for(job_id) == 1
    assert fake_llm.retrieves_for(job_id) >= 1
    [response_id] = fake_llm.response_ids_for(job_id)
    row = await fetch_one(db, "SELECT response_id, response_sequence FROM story_jobs"
                              " WHERE id = :id", {"id": job_id})
    assert row["response_id"] == response_id
    story = await fetch_one(db, "SELECT title, body, prompt_tokens, completion_tokens"
                                " FROM stories WHERE job_id = :id", {"id": job_id})
    assert story["title"] == f"The Story of Job {job_id}"
    assert story["body"].startswith("Once upon a time, a gentle tale about:")
    assert (story["prompt_tokens"], story["completion_tokens"]) == (42, 314)
    sent = next(r for r in fake_llm.requests if r["api"] == "responses")
    assert sent["body"]["background"] is True and sent["body"]["store"] is True
    assert sent["body"]["metadata"] == {"job_id": str(job_id)}
    assert sent["headers"]["x-story-job-id"] == str(job_id)


@pytest.mark.slow
async def test_a_dropped_stream_is_followed_again_from_the_last_event(
    make_background_app, fake_llm, db
):
    fake_llm.drop_stream_after_events = 6  # every streamed retrieve is cut after 6 events
    async with serve(make_background_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    assert fake_llm.creates_for(job_id) == 1
    assert fake_llm.retrieves_for(job_id) >= 3  # followed again, for free
    [response_id] = fake_llm.response_ids_for(job_id)
    written = fake_llm.response(response_id)["output"][0]["content"][0]["text"]
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": job_id})
    assert f"{story['title']}\n\n{story['body']}" == written.strip()  # each word once


@pytest.mark.parametrize(("mode", "code"), [
    ("failed", "storyteller_failed"),
    ("refusal", "declined"),
    ("500", "storyteller_failed"),
])
async def test_the_providers_failures_fail_the_job_with_its_failure_code(
    make_background_app, fake_llm, mode, code
):
    fake_llm.mode = mode
    async with serve(make_background_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert (job["status"], job["error_code"]) == ("failed", code)
    assert fake_llm.calls_for(job_id) == 1


async def test_a_story_cut_off_by_its_budget_ends_at_its_last_sentence(
    make_background_app, fake_llm, db
):
    fake_llm.mode = "length"
    async with serve(make_background_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    body = (await fetch_one(db, "SELECT body FROM stories WHERE job_id = :id",
                            {"id": job_id}))["body"]
    assert body.endswith('"Goodnight," said the owl.')


async def test_a_server_without_the_responses_api_says_to_use_chat(
    make_background_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    async with serve(make_background_app()) as client:
        # Lost after the start-up check found it (which would refuse the story, 503).
        await until(lambda: "event=endpoint_checked endpoint=/responses" in caplog.text,
                    "the start-up check")
        fake_llm.responses_api = False
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
        home = (await client.get("/")).text
    assert (job["status"], job["error_code"]) == ("failed", "storyteller_failed")
    assert "This storyteller has no /responses (set LLM_API=chat)." in home


async def _started_elsewhere(settings, db, fake_llm, *, dead_boot: uuid.UUID,
                             heartbeat: str = "now() - interval '1 hour'") -> tuple[int, str]:
    """A job claimed by a process that has since died, its story started at the provider
    with the app's own storyteller and the id saved with the app's own statement."""
    from tests.helpers.jobs import started_at_the_provider

    job_id, response_id = await started_at_the_provider(settings, JobStore(db), dead_boot)
    await execute(db, f"UPDATE story_jobs SET heartbeat_at = {heartbeat} WHERE id = :id",
                  {"id": job_id})
    return job_id, response_id


async def test_a_job_whose_process_died_is_adopted_and_completed_without_a_second_create(
    make_background_app, settings, fake_llm, db, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    background = dataclass_replace(settings, llm_api="responses")
    job_id, response_id = await _started_elsewhere(background, db, fake_llm,
                                                   dead_boot=uuid.uuid4())
    async with serve(make_background_app()) as client:
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    assert fake_llm.creates_for(job_id) == 1  # the dead process's, and no other
    assert f"event=job_adopted job_id={job_id} response_id={response_id}" in caplog.text
    assert await Invariants(db).ids("check_unreachable_stories") == []


async def test_the_sweeper_leaves_a_job_with_a_response_id_to_be_adopted(settings, db, fake_llm):
    background = dataclass_replace(settings, llm_api="responses")
    job_id, _ = await _started_elsewhere(background, db, fake_llm, dead_boot=uuid.uuid4())
    assert await JobStore(db).sweep_dead_running(60) == ([], [], [])
    assert (await JobStore(db).get(job_id)).status == Status.RUNNING


async def test_a_response_the_provider_forgot_ends_interrupted_keeping_its_words(
    make_background_app, settings, fake_llm, db
):
    background = dataclass_replace(settings, llm_api="responses")
    job_id, response_id = await _started_elsewhere(background, db, fake_llm,
                                                   dead_boot=uuid.uuid4())
    await execute(db, "UPDATE story_jobs SET text_so_far = 'The Owl\n\nOnce upon a time.'"
                      " WHERE id = :id", {"id": job_id})
    fake_llm.forget(response_id)
    async with serve(make_background_app()) as client:
        job = await wait_for_job(client, job_id)
        page = await client.get(f"/stories/jobs/{job_id}", headers=ACCEPT_JSON)
    assert (job["status"], job["error"]) == ("failed", "interrupted")
    assert page.json()["text_so_far"] == "The Owl\n\nOnce upon a time."
    assert fake_llm.creates_for(job_id) == 1


async def test_a_worker_that_lost_its_job_to_an_adopter_stops_and_stores_nothing(
    make_background_app, settings, fake_llm, db, database_url, caplog
):
    from app.queue.wakeup import Wakeup
    from app.queue.worker import Worker
    from app.runtime import make_storyteller

    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.chunk_delay_s = 0.02
    fake_llm.hold_after_chunks = 3
    fake_llm.hold()
    async with serve(make_background_app()) as client:
        job_id = (await post_story(client)).json()["job_id"]
        store = JobStore(db)
        for _ in range(500):  # until the first owner has saved words and their event number
            row = await fetch_one(db, "SELECT text_so_far, response_sequence FROM story_jobs"
                                      " WHERE id = :id", {"id": job_id})
            if row["text_so_far"] and row["response_sequence"] is not None:
                break
            await asyncio.sleep(0.02)
        # The first owner looks dead (cut off from the database): another process adopts.
        # Backdated in the adopter's own transaction: the row is locked from here on, so
        # the first owner's next beat (every 0.2 s) waits and cannot undo it first.
        adopter_boot = uuid.uuid4()
        async with holding(database_url) as adopter_side:
            await execute(adopter_side.db, "UPDATE story_jobs SET heartbeat_at ="
                          " now() - interval '1 hour' WHERE id = :id", {"id": job_id})
            adopted = await adopter_side.adopt(adopter_boot, 60)
        assert adopted is not None and adopted.id == job_id
        assert adopted.response_sequence is not None and adopted.text_so_far
        storyteller = make_storyteller(dataclass_replace(settings, llm_api="responses"))
        adopter = Worker(store, Wakeup(None, recheck_s=1), storyteller, boot_id=adopter_boot,
                         llm_timeout_s=10, heartbeat_interval_s=0.2)
        fake_llm.release()
        try:
            await adopter.process(adopted)
        finally:
            await storyteller.aclose()
        job = await wait_for_job(client, job_id)
        for _ in range(200):
            if f"event=job_lost job_id={job_id}" in caplog.text:
                break
            await asyncio.sleep(0.02)
    assert job["status"] == "completed", job
    assert f"event=job_lost job_id={job_id}" in caplog.text  # the first owner stopped
    assert fake_llm.creates_for(job_id) == 1
    assert fake_llm.cancels_for(job_id) == 0  # the loser did not stop the adopter's story
    stories = await fetch_one(db, "SELECT count(*) AS n, min(body) AS body FROM stories"
                                  " WHERE job_id = :id", {"id": job_id})
    assert stories["n"] == 1
    [response_id] = fake_llm.response_ids_for(job_id)
    written = fake_llm.response(response_id)["output"][0]["content"][0]["text"]
    assert written.strip().endswith(stories["body"])  # each word once


async def test_an_owner_holding_its_row_keeps_its_job_from_an_adopter(settings, db, fake_llm,
                                                                         database_url):
    background = dataclass_replace(settings, llm_api="responses")
    owner = uuid.uuid4()
    job_id, _ = await _started_elsewhere(background, db, fake_llm, dead_boot=owner)
    store = JobStore(db)
    async with holding(database_url) as owner_side:
        # The owner's save holds the row (its transaction still open): the adopter, which
        # skips locked rows, takes nothing.
        assert await owner_side.save_text_so_far(job_id, owner, "The Owl", sequence=4)
        assert await store.adopt(uuid.uuid4(), 60) is None
    job = await store.get(job_id)
    assert job.status == Status.RUNNING and job.response_sequence == 4


async def test_released_jobs_are_adopted_at_once_and_before_pending_ones(settings, db, fake_llm):
    background = dataclass_replace(settings, llm_api="responses")
    owner = uuid.uuid4()
    job_id, _ = await _started_elsewhere(background, db, fake_llm, dead_boot=owner,
                                         heartbeat="now()")
    store = JobStore(db)
    from app.stories import StoryRequest
    from tests.helpers.jobs import add_job
    await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="waiting"), "h2")
    assert await store.adopt(uuid.uuid4(), 60) is None  # its owner is alive
    assert await store.release(job_id, owner, "The Owl\n\nOnce", sequence=7)
    assert not await store.release(job_id, owner, "again", sequence=8)  # not ours any more
    adopter = uuid.uuid4()
    adopted = await store.adopt(adopter, 60)
    assert adopted is not None and adopted.id == job_id
    assert (adopted.text_so_far, adopted.response_sequence) == ("The Owl\n\nOnce", 7)
    assert await store.save_text_so_far(job_id, owner, "late", sequence=9) is None


async def test_a_chat_process_still_adopts_a_story_started_in_background_mode(
    make_app, settings, fake_llm, db
):
    # Background mode was switched off between two deploys: the story started before the
    # switch is followed by its id, not started again, and not left running forever.
    background = dataclass_replace(settings, llm_api="responses")
    job_id, _ = await _started_elsewhere(background, db, fake_llm, dead_boot=uuid.uuid4())
    async with serve(make_app(llm_api="chat")) as client:
        job = await wait_for_job(client, job_id)
    assert job["status"] == "completed", job
    assert fake_llm.calls_for(job_id) == 1


async def test_new_jobs_wait_while_a_paid_story_is_about_to_be_adopted(settings, db, fake_llm):
    background = dataclass_replace(settings, llm_api="responses")
    owner = uuid.uuid4()
    job_id, _ = await _started_elsewhere(background, db, fake_llm, dead_boot=owner,
                                         heartbeat="now() - interval '3 seconds'")
    store = JobStore(db)
    from app.stories import StoryRequest
    from tests.helpers.jobs import add_job
    waiting = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="waiting"), "h2")
    worker = uuid.uuid4()
    # Its owner missed beats for 3 s: deferring past 2 s, the new job waits for it.
    assert await store.claim_next(worker, defer_s=2) is None
    assert await store.adopt(worker, 5) is None  # not dead enough to adopt yet
    assert (await store.adopt(worker, 2)).id == job_id
    # Adopted (beating again): new jobs are taken as ever.
    assert (await store.claim_next(worker, defer_s=2)).id == waiting.id


async def test_a_story_whose_owner_stopped_beating_is_adopted_within_seconds(
    make_background_app, settings, fake_llm, db
):
    # The default stale limit is a minute; adoption needs only a few missed beats.
    background = dataclass_replace(settings, llm_api="responses")
    job_id, _ = await _started_elsewhere(background, db, fake_llm, dead_boot=uuid.uuid4(),
                                         heartbeat="now() - interval '1.5 seconds'")
    async with serve(make_background_app(heartbeat_stale_s=60)) as client:
        started = asyncio.get_running_loop().time()
        job = await wait_for_job(client, job_id)
        took_s = asyncio.get_running_loop().time() - started
    assert job["status"] == "completed" and took_s < 5, (job, took_s)
