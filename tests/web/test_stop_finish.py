"""Stopping a story (POST /stories/jobs/{id}/cancel) and finishing one cut short
(POST /stories/jobs/{id}/finish), in both provider modes, from the API, the card (htmx)
and a page without JavaScript; raced against the worker's completion deterministically.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import pytest

from app.failures import STOPPED
from app.finishing import carried_words
from app.queue.jobs import Status
from app.queue.store import JobStore
from app.requests import request_hash
from app.stories import Story, StoryRequest
from tests.helpers.app import (
    ACCEPT_JSON,
    JSON,
    SAME_ORIGIN,
    new_key,
    post_story,
    serve,
    wait_for_job,
)
from tests.helpers.ids import duplicate_ids
from tests.helpers.jobs import add_job
from tests.helpers.locks import holding, wait_until_blocked
from tests.helpers.sql import fetch_one, fetch_val

pytestmark = pytest.mark.anyio

HTMX = {"HX-Request": "true", "Origin": "http://testserver"}


async def stop(client, job_id: int, **headers: str):
    return await client.post(f"/stories/jobs/{job_id}/cancel", headers={**JSON, **headers})


async def writing(client, fake_llm, db, **body) -> int:
    """A job whose story is being written, some words saved, the rest held back."""
    fake_llm.chunk_delay_s = 0.01
    fake_llm.hold_after_chunks = 4
    fake_llm.hold()
    job_id = (await post_story(client, body or None)).json()["job_id"]
    for _ in range(500):
        if await fetch_val(db, "SELECT text_so_far <> '' FROM story_jobs WHERE id = :id",
                           {"id": job_id}):
            return job_id
        await asyncio.sleep(0.02)
    raise AssertionError("no words were saved")


@pytest.fixture(params=["chat", "responses"])
def llm_api(request) -> str:
    return request.param


async def test_a_waiting_job_is_stopped_at_once_and_never_sent(client, fake_llm):
    fake_llm.hold()
    running = (await post_story(client)).json()["job_id"]
    await asyncio.to_thread(fake_llm.wait_for_call, running)
    waiting = (await post_story(client, {"prompt": "a second story"})).json()["job_id"]
    answer = await stop(client, waiting)
    assert answer.status_code == 200
    assert (answer.json()["status"], answer.json()["error"]) == ("failed", "cancelled")
    assert answer.json()["error_code"] == "stopped"
    fake_llm.release()
    assert (await wait_for_job(client, running))["status"] == "completed"
    # A later story: the one worker takes the oldest waiting job first, so once it has
    # taken this one (whatever came of it), it would have called for the stopped one.
    later = (await post_story(client, {"prompt": "a third story"})).json()["job_id"]
    await wait_for_job(client, later)
    assert fake_llm.calls_for(later) == 1
    assert fake_llm.calls_for(waiting) == 0


@pytest.mark.slow
async def test_a_story_stopped_before_its_first_line_ended_keeps_its_words_in_the_story(
    make_app, fake_llm, db
):
    """A small model may begin with the story, no title line (SmolLM2 did): stopped before
    that first line ends, its words are the story's beginning, under the idea's title."""
    fake_llm.story = "A whale slept. She dreamed of the sea all night and the moon sang."
    async with serve(make_app()) as client:
        cut = await writing(client, fake_llm, db, prompt="a whale who sleeps by day")
        kept = (await stop(client, cut)).json()["text_so_far"]
        fake_llm.reset()
        fake_llm.story = " She woke at dusk. Goodnight."
        answer = await finish(client, cut)
        assert answer.status_code == 202, answer.text
        job = await wait_for_job(client, answer.json()["job_id"])
    assert kept == "A whale slept. She dreamed of the sea "
    assert job["status"] == "completed", job
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": job["job_id"]})
    assert story["title"] == "The Whale Who Sleeps by Day"
    assert story["body"] == "A whale slept. She woke at dusk. Goodnight."


@pytest.mark.slow
async def test_a_running_story_is_stopped_keeping_its_words(make_app, fake_llm, db, llm_api):
    async with serve(make_app(llm_api=llm_api)) as client:
        job_id = await writing(client, fake_llm, db)
        answer = await stop(client, job_id)
        fake_llm.release()
    assert answer.status_code == 200, answer.text
    job = answer.json()
    assert (job["status"], job["error"]) == ("failed", "cancelled")
    assert job["text_so_far"].startswith(f"The Story of Job {job_id}")
    assert fake_llm.calls_for(job_id) == 1
    if llm_api == "chat":  # the stream was closed
        await asyncio.to_thread(fake_llm.wait_for_chat_closed, str(job_id))
    else:  # the response was cancelled at the provider
        assert fake_llm.cancels_for(job_id) == 1
        [response_id] = fake_llm.response_ids_for(job_id)
        assert fake_llm.response(response_id)["status"] == "cancelled"
    assert await fetch_val(db, "SELECT count(*) FROM stories") == 0


async def test_a_stop_reaches_the_worker_of_another_process(make_app, fake_llm, db):
    # The job runs in one app; the stop arrives at another (worker off) sharing the
    # database: the NOTIFY carries it across.
    async with serve(make_app()) as client, serve(make_app(worker_concurrency=0)) as other:
        job_id = await writing(client, fake_llm, db)
        answer = await stop(other, job_id)
        fake_llm.release()
    assert answer.status_code == 200 and answer.json()["error"] == "cancelled", answer.text


async def test_without_listen_the_heartbeat_hears_the_stop(make_app, fake_llm, db):
    async with serve(make_app()) as client, serve(make_app(worker_concurrency=0,
                                                           pgbouncer=True)) as other:
        job_id = await writing(client, fake_llm, db)
        # No NOTIFY: the flag on the row alone, seen at the owner's next heartbeat.
        await JobStore(db).request_cancel(job_id)
        job = await wait_for_job(client, job_id, timeout_s=5)
        fake_llm.release()
        assert other is not None
    assert (job["status"], job["error"]) == ("failed", "cancelled")


async def test_a_finished_job_cannot_be_stopped(client, fake_llm, db):
    job_id = (await post_story(client)).json()["job_id"]
    await wait_for_job(client, job_id)
    before = await fetch_one(db, "SELECT * FROM story_jobs WHERE id = :id", {"id": job_id})
    answer = await stop(client, job_id)
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "job_finished"
    assert await fetch_one(db, "SELECT * FROM story_jobs WHERE id = :id",
                           {"id": job_id}) == before
    assert (await stop(client, 999_999)).status_code == 404


async def test_stop_from_the_card_and_from_a_page_without_javascript(make_app, fake_llm, db):
    async with serve(make_app()) as client:
        job_id = await writing(client, fake_llm, db)
        card = await client.get(f"/stories/jobs/{job_id}", headers={"HX-Request": "true"})
        assert f'action="/stories/jobs/{job_id}/cancel"' in card.text
        answer = await client.post(f"/stories/jobs/{job_id}/cancel", headers=HTMX)
        assert answer.status_code == 200
        assert "You stopped this story." in answer.text and "Finish this story" in answer.text
        assert "hx-trigger" not in answer.text  # finished: the card stops polling
        fake_llm.release()

        pending_one = await add_job(JobStore(db), new_key(), StoryRequest(prompt="p"))
        fake_llm.hold()
        plain = await client.post(f"/stories/jobs/{pending_one.id}/cancel",
                                  headers={"Origin": "http://testserver"})
        fake_llm.release()
    assert plain.status_code == 303
    assert plain.headers["location"] == f"/stories/jobs/{pending_one.id}"


async def test_a_stop_from_another_site_is_refused(client, fake_llm, db):
    fake_llm.hold()
    job_id = (await post_story(client)).json()["job_id"]
    answer = await client.post(f"/stories/jobs/{job_id}/cancel",
                               headers={"Origin": "https://evil.example"})
    fake_llm.release()
    assert answer.status_code == 403
    assert not await fetch_val(db, "SELECT cancel_requested_at IS NOT NULL FROM story_jobs"
                                   " WHERE id = :id", {"id": job_id})
    assert (await wait_for_job(client, job_id))["status"] == "completed"


async def test_a_completion_that_wins_the_race_makes_the_stop_a_no_op(
    make_app, db, database_url
):
    boot = uuid.uuid4()
    store = JobStore(db)
    job = await add_job(store, new_key(), StoryRequest(prompt="p"))
    async with serve(make_app(worker_concurrency=0)) as client:
        async with holding(database_url) as worker_side:  # the worker is the test's own
            assert (await worker_side.claim_next(boot)).id == job.id
            story_id = await worker_side.insert_story(job.id, boot, Story("T", "B.", "m"))
            assert await worker_side.complete(job.id, boot, story_id)  # holds the row
            stopping = asyncio.create_task(stop(client, job.id))
            await wait_until_blocked(db, "cancel_pending_job")
        answer = await stopping  # answered by the app still serving, the lock released
    assert answer.status_code == 409  # the story came first: it is delivered
    assert (await store.get(job.id)).status == Status.COMPLETED


async def test_a_stop_that_wins_the_race_still_delivers_a_story_that_came(db):
    boot = uuid.uuid4()
    store = JobStore(db)
    job = await add_job(store, new_key(), StoryRequest(prompt="p"))
    assert (await store.claim_next(boot)).id == job.id
    assert await store.request_cancel(job.id)  # asked first; the owner has not seen it
    story_id = await store.insert_story(job.id, boot, Story("T", "B.", "m"))
    assert story_id is not None and await store.complete(job.id, boot, story_id)
    assert not await store.fail(job.id, boot, STOPPED)  # too late: one outcome
    finished = await store.get(job.id)
    assert (finished.status, finished.story_id) == (Status.COMPLETED, story_id)


# -- finish ------------------------------------------------------------------------------


async def finish(client, job_id: int, key: str | None = None):
    return await client.post(f"/stories/jobs/{job_id}/finish",
                             headers={**JSON, "Idempotency-Key": key or new_key()})


@pytest.mark.slow
async def test_a_stopped_story_is_finished_from_its_words_as_one_story(
    make_app, fake_llm, db, llm_api
):
    fake_llm.story = "The Owl\n\nAn owl slept. She was very sleepy indeed and dreamed."
    async with serve(make_app(llm_api=llm_api)) as client:
        cut = await writing(client, fake_llm, db)  # four chunks of two words come
        kept = (await stop(client, cut)).json()["text_so_far"]
        fake_llm.reset()
        fake_llm.story = " and the owl flew home. Goodnight."
        key = new_key()
        answer = await finish(client, cut, key)
        assert answer.status_code == 202, answer.text
        new_id = answer.json()["job_id"]
        assert new_id != cut and answer.headers["location"] == f"/stories/jobs/{new_id}"
        job = await wait_for_job(client, new_id)
        again = await finish(client, cut, key)
        library = (await client.get("/stories", headers=ACCEPT_JSON)).json()["stories"]
    assert job["status"] == "completed", job
    assert again.status_code == 202 and again.json()["job_id"] == new_id
    assert again.headers["idempotent-replayed"] == "true"
    assert fake_llm.calls_for(new_id) == 1
    [sent] = [r for r in fake_llm.requests if r["job_id"] == str(new_id)]
    carried_title, _, carried_body = kept.partition("\n\n")
    sent_text = str(sent["body"])
    assert carried_title in sent_text
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": new_id})
    assert kept == "The Owl\n\nAn owl slept. She was very "
    assert "An owl slept." in sent_text and "She was very" not in sent_text
    assert story["title"] == carried_title == "The Owl"
    # The kept words to their last whole sentence, then the rest, in one paragraph.
    assert story["body"] == "An owl slept. and the owl flew home. Goodnight."
    assert carried_body.startswith("An owl slept.")
    assert [s["title"] for s in library] == [carried_title]  # one story on the shelf


@pytest.mark.slow
async def test_only_a_story_cut_short_with_words_kept_can_be_finished(client, fake_llm, db):
    done = (await post_story(client)).json()["job_id"]
    await wait_for_job(client, done)
    answer = await finish(client, done)
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "nothing_to_finish"
    nothing = await add_job(JobStore(db), new_key(), StoryRequest(prompt="never begun"))
    fake_llm.hold()
    await stop(client, nothing.id)
    fake_llm.release()
    assert (await finish(client, nothing.id)).status_code == 409
    assert (await finish(client, 999_999)).status_code == 404
    missing_key = await client.post(f"/stories/jobs/{done}/finish", headers=JSON)
    assert missing_key.status_code == 400


@pytest.mark.slow
async def test_the_daily_limit_applies_to_a_finish(make_app, fake_llm, db):
    async with serve(make_app(daily_story_limit=1)) as client:
        cut = await writing(client, fake_llm, db)
        await stop(client, cut)
        fake_llm.release()
        answer = await finish(client, cut)
    assert answer.status_code == 429 and answer.json()["error"]["code"] == "daily_limit_reached"


@pytest.mark.slow
async def test_finish_from_the_card(make_app, fake_llm, db):
    async with serve(make_app()) as client:
        cut = await writing(client, fake_llm, db)
        card = (await client.post(f"/stories/jobs/{cut}/cancel", headers=HTMX)).text
        fake_llm.release()
        assert f'name="idempotency_key" value="finish-{cut}"' in card
        answer = await client.post(f"/stories/jobs/{cut}/finish", headers=HTMX,
                                   data={"idempotency_key": f"finish-{cut}"})
        assert answer.status_code == 202 and 'hx-trigger="every 3s"' in answer.text
        twice = await client.post(f"/stories/jobs/{cut}/finish", headers=HTMX,
                                  data={"idempotency_key": f"finish-{cut}"})
        plain = await client.post(f"/stories/jobs/{cut}/finish",
                                  headers={"Origin": "http://testserver"},
                                  data={"idempotency_key": f"finish-{cut}"})
    new_id = await fetch_val(db, "SELECT id FROM story_jobs WHERE finish_of = :id", {"id": cut})
    assert f'id="job-{new_id}"' in answer.text and f'id="job-{new_id}"' in twice.text
    assert plain.status_code == 303 and plain.headers["location"] == f"/stories/jobs/{new_id}"
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE finish_of = :id",
                           {"id": cut}) == 1


@pytest.mark.slow
async def test_the_demo_storyteller_finishes_its_own_story(make_app, db):
    async with serve(make_app(storyteller="demo", demo_delay_s=1.0)) as client:
        job_id = (await post_story(client, {"prompt": "a sleepy fox", "length": "short"})
                  ).json()["job_id"]
        for _ in range(200):
            text = await fetch_val(db, "SELECT text_so_far FROM story_jobs WHERE id = :id",
                                   {"id": job_id})
            if text.count(".") >= 2:
                break
            await asyncio.sleep(0.01)
        await stop(client, job_id)
        new_id = (await finish(client, job_id)).json()["job_id"]
        job = await wait_for_job(client, new_id)
        whole = (await post_story(client, {"prompt": "a sleepy fox", "length": "short"}))
        assert whole.status_code == 202
    assert job["status"] == "completed"
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": new_id})
    assert story["title"].startswith("Pip") or story["title"]  # the demo's own title
    assert story["body"].count("(This story was written by the demo storyteller") == 1


async def interrupted_with(db, words: str):
    """A job about a lost owl, claimed by a process that wrote `words` and died: the
    sweeper judged it interrupted, its words kept."""
    store = JobStore(db)
    dead = uuid.uuid4()
    job = await add_job(store, new_key(), StoryRequest(prompt="a lost owl"))
    assert (await store.claim_next(dead)).id == job.id
    assert await store.save_text_so_far(job.id, dead, words)
    await store.db.execute("UPDATE story_jobs SET heartbeat_at = now() - interval '1 hour'"
                           " WHERE id = $1", job.id)
    assert await store.sweep_dead_running(60) == ([], [job.id], [])  # its process died
    return job


async def test_an_interrupted_story_is_finished_from_its_kept_words(make_app, fake_llm, db):
    job = await interrupted_with(db, "The Owl\n\nAn owl flew. She was")
    fake_llm.story = "And then she slept."
    async with serve(make_app()) as client:
        page = await client.get(f"/stories/jobs/{job.id}")
        assert "Finish this story" in page.text and "An owl flew." in page.text
        new_id = (await finish(client, job.id)).json()["job_id"]
        finished = await wait_for_job(client, new_id)
    assert finished["status"] == "completed"
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": new_id})
    assert (story["title"], story["body"]) == ("The Owl", "An owl flew. And then she slept.")


# -- a story is finished once ------------------------------------------------------------


async def cut_short(client, fake_llm, db) -> int:
    """A story stopped with words kept; the fake then writes the rest at once."""
    fake_llm.story = "The Owl\n\nAn owl slept. She was very sleepy indeed and dreamed."
    cut = await writing(client, fake_llm, db)
    await stop(client, cut)
    fake_llm.reset()
    fake_llm.story = " and the owl flew home. Goodnight."
    return cut


async def test_a_story_cut_short_is_finished_once_whatever_the_keys(client, fake_llm, db):
    cut = await cut_short(client, fake_llm, db)
    first = await finish(client, cut, "finish-from-the-phone")
    assert first.status_code == 202, first.text
    new_id = first.json()["job_id"]
    await wait_for_job(client, new_id)
    for key in ("finish-from-the-tablet", "finish-from-a-script"):
        again = await finish(client, cut, key)
        assert again.status_code == 200, again.text
        assert again.json() == {"job_id": new_id, "status": "completed",
                                "poll_url": f"/stories/jobs/{new_id}"}
        assert again.headers["location"] == f"/stories/jobs/{new_id}"
    assert fake_llm.total_calls == 1
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE finish_of = :id",
                           {"id": cut}) == 1
    library = (await client.get("/stories", headers=ACCEPT_JSON)).json()["stories"]
    assert [story["title"] for story in library] == ["The Owl"]


async def test_two_finishes_racing_with_other_keys_make_one_job(
    client, fake_llm, db, database_url
):
    """One finish holds the intake lock, its job not committed yet; the other waits on the
    lock, then answers with that job, and makes none."""
    cut = await cut_short(client, fake_llm, db)
    job = await JobStore(db).get(cut)
    asked = dataclasses.replace(job.request, finish_of=cut,
                                carried_text=carried_words(job.text_so_far, "Untitled"))
    async with holding(database_url) as held:
        first = await add_job(held, "finish-from-the-phone", asked, request_hash(asked))
        racing = asyncio.create_task(finish(client, cut, "finish-from-the-tablet"))
        await wait_until_blocked(db, "intake_job")
    answer = await racing
    assert answer.status_code == 200, answer.text
    assert answer.json()["job_id"] == first.id
    assert (await wait_for_job(client, first.id))["status"] == "completed"
    assert fake_llm.total_calls == 1
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE finish_of = :id",
                           {"id": cut}) == 1


@pytest.mark.slow
async def test_the_card_of_a_story_finished_already_leads_to_it_and_offers_no_second_finish(
    client, fake_llm, db
):
    cut = await cut_short(client, fake_llm, db)
    assert "Finish this story" in (await client.get(f"/stories/jobs/{cut}")).text
    fake_llm.hold()  # the finish is being written
    new_id = (await finish(client, cut)).json()["job_id"]
    await asyncio.to_thread(fake_llm.wait_for_call, new_id)
    while_running = (await client.get(f"/stories/jobs/{cut}", headers=HTMX)).text
    fake_llm.release()
    await wait_for_job(client, new_id)
    story_id = await fetch_val(db, "SELECT id FROM stories WHERE job_id = :id", {"id": new_id})
    assert f'href="/stories/jobs/{new_id}"' in while_running
    assert "See the story being finished" in while_running
    home = (await client.get("/")).text
    for card in (while_running, (await client.get(f"/stories/jobs/{cut}")).text,
                 (await client.get(f"/stories/jobs/{cut}", headers=HTMX)).text, home):
        assert "Finish this story" not in card and "/finish" not in card
        assert "Start it again" not in card and f"/stories/jobs/{cut}/retry" not in card
    for card in ((await client.get(f"/stories/jobs/{cut}", headers=HTMX)).text, home):
        assert f'href="/stories/{story_id}"' in card and "Read the finished story" in card
    # The home page after a finish: both cards, and no id twice.
    assert f'id="job-{cut}"' in home and f'id="job-{new_id}"' in home
    assert duplicate_ids(home) == []


async def test_a_finish_card_shows_the_words_it_carries_from_the_start(make_app, db):
    job = await interrupted_with(db, "The Owl\n\nAn owl flew.\n\nShe was")
    async with serve(make_app(worker_concurrency=0)) as client:  # it waits in line
        answer = await client.post(f"/stories/jobs/{job.id}/finish", headers=HTMX,
                                   data={"idempotency_key": f"finish-{job.id}"})
        new_id = await fetch_val(db, "SELECT id FROM story_jobs WHERE finish_of = :id",
                                 {"id": job.id})
        polled = (await client.get(f"/stories/jobs/{new_id}", headers=HTMX)).text
    assert answer.status_code == 202
    for card in (answer.text, polled):
        assert f'id="job-{new_id}"' in card and f'data-continues="job-{job.id}"' in card
        assert "in line" in card
        # The words kept, whole, where they were: first, above the news about them; Stop
        # in the header, above the words.
        draft = card.index('class="story-text job-draft"')
        assert draft < card.index("The Owl") < card.index("An owl flew.") < card.index("She was")
        assert card.index("job-head") < card.index("Stop…") < draft < card.index("in line")


@pytest.mark.slow
async def test_a_finish_that_failed_before_any_word_is_tried_again_from_the_same_words(
    client, fake_llm, db
):
    cut = await cut_short(client, fake_llm, db)
    fake_llm.mode = "500"
    failed = (await finish(client, cut)).json()["job_id"]
    assert (await wait_for_job(client, failed))["status"] == "failed"
    fake_llm.mode = "ok"
    retried = await client.post(f"/stories/jobs/{failed}/retry", headers=SAME_ORIGIN)
    assert retried.status_code == 303
    new_id = int(retried.headers["location"].rsplit("/", 1)[1])
    assert new_id not in (cut, failed)
    assert (await wait_for_job(client, new_id))["status"] == "completed"
    story = await fetch_one(db, "SELECT title, body FROM stories WHERE job_id = :id",
                            {"id": new_id})
    assert (story["title"], story["body"]) == (
        "The Owl", "An owl slept. and the owl flew home. Goodnight.")
    assert fake_llm.calls_for(failed) == fake_llm.calls_for(new_id) == 1


# -- the home page's earlier cards are short -----------------------------------------------


@pytest.mark.slow
async def test_on_the_home_page_a_card_cut_short_is_its_first_words_and_its_actions(
    make_app, fake_llm, db
):
    words = " ".join(f"word{n}" for n in range(1, 61))
    job = await interrupted_with(db, f"The Owl\n\n{words}")
    async with serve(make_app()) as client:
        home = await client.get("/")
        whole = await client.get(f"/stories/jobs/{job.id}")  # its own page: every word
    card = home.text[home.text.index(f'id="job-{job.id}"'):]
    card = card[:card.index("</article>")]
    assert "job-compact" in card
    assert "word1 word2" in card and "word16…" in card and "word17" not in card
    assert "Finish this story" in card and "Start it again" in card
    assert "word60" in whole.text and "job-compact" not in whole.text
