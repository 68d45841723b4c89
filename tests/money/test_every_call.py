"""Every call that may have reached the provider is in the ledger, once, whatever happened
after: a background response whose following failed (cancelled at the provider first), a
call cut off by a crash (story or picture), a picture the app refused; a refused request
(the provider's error status) is not. Against a real PostgreSQL and the fake provider over
HTTP, in both API modes where both apply."""

from __future__ import annotations

import asyncio
import json
import logging
import struct
import time
import uuid
import zlib

import pytest

from app.money.ledger import amount
from app.money.prices import PriceTable
from app.money.settings import prices as parsed_prices
from app.queue.check import check_invariants
from app.queue.store import JobStore
from app.stories import StoryRequest
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.jobs import add_job
from tests.helpers.locks import holding
from tests.helpers.pictures import picture_when
from tests.helpers.sql import execute, fetch_all, fetch_one, fetch_val
from tests.helpers.waits import WAIT_S
from tests.money.test_ledger import PRICES

pytestmark = pytest.mark.anyio

BUDGET = 5_000_000
PICTURE_SET_ASIDE = 11_000  # fake-image: 0.011 US dollars per picture


async def until(check, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not await check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


async def swept_when_owner_dies(database_url: str, sweeper, job_id: int) -> list[int]:
    """The process that owns the job is found gone (as a host's liveness check finds a dead
    pid), and a sweep ends the job whatever its heartbeat says: both in one transaction
    that holds the owner's row, so its next beat (which would register it again) waits.
    The jobs that sweep interrupted."""
    async with holding(database_url) as sweeper_side:
        await execute(sweeper_side.db, "UPDATE workers SET gone_at = now() WHERE boot_id ="
                      " (SELECT claimed_by FROM story_jobs WHERE id = :id)", {"id": job_id})
        _, interrupted, _ = await sweeper_side.sweep_dead_running(sweeper.heartbeat_stale_s)
    return interrupted


async def ledger(db) -> list[tuple]:
    rows = await fetch_all(db, "SELECT job_id, kind, model, cost_micros, estimated FROM spend"
                               " ORDER BY id")
    return [(r["job_id"], r["kind"], r["model"], r["cost_micros"], r["estimated"])
            for r in rows]


async def set_aside_of(db, job_id: int) -> int:
    return await fetch_val(db, "SELECT set_aside_micros FROM story_jobs WHERE id = :id",
                           {"id": job_id})


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.slow
async def test_a_key_refused_while_following_cancels_the_response_then_charges_it(
        make_app, fake_llm, db, status):
    """The key is revoked while the story is written at the provider: its streams close
    and every retrieve answers 401/403. The response is cancelled at the provider (or it
    would be written, and billed, in full), then the job fails keeping its words, its
    create charged (estimated) in the same statement; the card says who must fix what,
    and offers no "Finish", which would be refused just the same."""
    fake_llm.chunk_delay_s = 0.01
    fake_llm.hold_after_chunks = 6  # words written, the response still going on
    fake_llm.hold()
    app = make_app(llm_api="responses", prices=PRICES, monthly_budget_micros=BUDGET)
    try:
        async with serve(app) as client:
            job_id = (await post_story(client)).json()["job_id"]
            await until(lambda: fetch_val(db, "SELECT text_so_far <> '' FROM story_jobs"
                                              " WHERE id = :id", {"id": job_id}),
                        "no words saved")
            fake_llm.retrieve_status = status
            done = await wait_for_job(client, job_id)
            [response_id] = fake_llm.response_ids_for(job_id)
            assert (done["status"], done["error_code"]) == ("failed", "key_refused")
            assert fake_llm.response(response_id)["status"] == "cancelled"
            assert (fake_llm.creates_for(job_id), fake_llm.cancels_for(job_id)) == (1, 1)
            set_aside = await set_aside_of(db, job_id)
            assert await ledger(db) == [(job_id, "story", "fake-model", set_aside, True)]
            spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
            assert (spend["spent_usd"], spend["reserved_usd"]) == (amount(set_aside), "0")
            card = (await client.get(f"/stories/jobs/{job_id}")).text
            assert "OPENAI_API_KEY" in card and "Finish this story" not in card
            assert await fetch_val(db, "SELECT text_so_far FROM story_jobs WHERE id = :id",
                                   {"id": job_id})  # the words are kept
    finally:
        fake_llm.release()


@pytest.mark.parametrize("llm_api", ["chat", "responses"])
@pytest.mark.slow
async def test_a_call_cut_off_by_a_crash_before_any_word_is_charged_once(
        make_app, fake_llm, db, database_url, llm_api):
    """The process dies while its call is at the provider and nothing has come back (with
    LLM_API=responses: the create accepted, its answer, and so the response id, not yet
    back): the sweep that fails the job charges the call, estimated, once."""
    if llm_api == "chat":
        fake_llm.hold()
    else:
        fake_llm.hold_create()
    app = make_app(llm_api=llm_api, prices=PRICES, monthly_budget_micros=BUDGET)
    try:
        async with serve(app) as client:
            job_id = (await post_story(client, {"prompt": "a fox", "child_name": "Mia"})
                      ).json()["job_id"]
            await asyncio.to_thread(fake_llm.wait_for_call, job_id)
            sweeper = app.state.services.sweeper
            assert await swept_when_owner_dies(database_url, sweeper, job_id) == [job_id]
            assert (await sweeper.sweep()).interrupted == []
            set_aside = await set_aside_of(db, job_id)
            assert await ledger(db) == [(job_id, "story", "fake-model", set_aside, True)]
            row = await fetch_one(db, "SELECT child_name, price FROM spend")
            assert row["child_name"] == "Mia"
            assert json.loads(row["price"])["output_per_mtok"] == "0.6"
            assert fake_llm.calls_for(job_id) == 1
    finally:
        fake_llm.release()
        fake_llm.release_create()


async def picture_job_of(client, db) -> tuple[int, int]:
    """A story written, and its picture job: (story id, picture job id)."""
    job = (await post_story(client)).json()
    done = await wait_for_job(client, job["job_id"])
    assert done["status"] == "completed", done
    await until(lambda: fetch_val(db, "SELECT count(*) > 0 FROM story_jobs"
                                      " WHERE kind = 'picture'"), "no picture job")
    picture = await fetch_val(db, "SELECT id FROM story_jobs WHERE kind = 'picture'")
    return done["story_id"], picture


@pytest.fixture
def drawing(make_app, fake_llm):
    fake_llm.story = "The Whale\n\nOnce upon a time a whale hummed."
    return make_app(prices=PRICES, monthly_budget_micros=BUDGET, illustrator="openai",
                    image_model="fake-image")


@pytest.mark.slow
async def test_a_picture_cut_off_by_a_crash_is_charged_once(drawing, fake_llm, db,
                                                          database_url):
    fake_llm.images.hold()
    try:
        async with serve(drawing) as client:
            story_id, picture = await picture_job_of(client, db)
            await asyncio.to_thread(fake_llm.images.wait_for_call, picture)
            sweeper = drawing.state.services.sweeper
            assert await swept_when_owner_dies(database_url, sweeper, picture) == [picture]
            assert (await sweeper.sweep()).interrupted == []
            rows = await ledger(db)
            assert rows[1:] == [(picture, "picture", "fake-image", PICTURE_SET_ASIDE, True)]
            assert len(rows) == 2 and rows[0][1] == "story"
    finally:
        fake_llm.images.release()


def decompression_bomb() -> bytes:
    """A PNG of a few hundred bytes that says it is 50,000 pixels square."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 50_000, 50_000, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\0" * 6251 * 8)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("mode", ["garbage", "too_big", "bomb", "refuse"])
@pytest.mark.slow
async def test_a_picture_the_app_refused_is_charged_and_one_the_provider_refused_is_not(
        drawing, fake_llm, db, settings, mode):
    """Bytes that are no picture (unreadable, too big, a decompression bomb) were drawn,
    and billed, all the same: the failed picture job's call is charged (estimated). A
    request the provider refused (its 400) wrote and billed nothing: no row, and the
    invariant check is content either way."""
    if mode == "too_big":
        fake_llm.images.picture = b"\x89PNG\r\n\x1a\n" + bytes(4 * 2**20)
    elif mode == "bomb":
        fake_llm.images.picture = decompression_bomb()
    else:
        fake_llm.images.mode = mode
    async with serve(drawing) as client:
        story_id, picture = await picture_job_of(client, db)
        state = await picture_when(client, story_id)
        assert state["status"] == "failed"
        assert fake_llm.images.calls_for(picture) == 1
        rows = [row for row in await ledger(db) if row[1] == "picture"]
        if mode != "refuse":
            assert rows == [(picture, "picture", "fake-image", PICTURE_SET_ASIDE, True)]
        else:
            assert rows == []
        report = await check_invariants(db, settings)
        assert report.count("provider calls not in the ledger") == 0, report.format()


@pytest.mark.parametrize("llm_api", ["chat", "responses"])
async def test_a_story_with_no_reported_usage_keeps_counted_tokens_marked_estimated(
        make_app, fake_llm, db, llm_api):
    """A local server reports no usage: the story's tokens are counted from its prompt and
    text, marked estimated on the story and in the ledger, the same numbers in both."""
    fake_llm.report_usage = False
    async with serve(make_app(llm_api=llm_api, prices=PRICES)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        assert (await wait_for_job(client, job_id))["status"] == "completed"
        story = await fetch_one(db, "SELECT prompt_tokens, completion_tokens, usage_estimated,"
                                    " title, body FROM stories")
        row = await fetch_one(db, "SELECT input_tokens, output_tokens, estimated, cost_micros"
                                  " FROM spend")
        assert story["usage_estimated"] and row["estimated"]
        assert (story["prompt_tokens"], story["completion_tokens"]) == (
            row["input_tokens"], row["output_tokens"])
        assert story["prompt_tokens"] > 100  # the instructions alone are hundreds
        text = f"{story['title']}\n\n{story['body']}"
        assert story["completion_tokens"] == -(-len(text) // 4)
        assert row["cost_micros"] == await set_aside_of(db, job_id)


async def test_the_check_reports_a_call_sent_that_is_not_in_the_ledger(make_app, fake_llm,
                                                                        db, settings):
    async with serve(make_app(prices=PRICES)) as client:
        job_id = (await post_story(client)).json()["job_id"]
        assert (await wait_for_job(client, job_id))["status"] == "completed"
    assert (await check_invariants(db, settings)).count("provider calls not in the ledger") == 0
    await execute(db, "DELETE FROM spend")
    report = await check_invariants(db, settings)
    assert report.count("provider calls not in the ledger") == 1 and report.broken


async def test_a_call_the_job_lost_before_it_was_sent_is_never_made(fake_llm, db, settings):
    """The mark is guarded by the owner: a job no longer ours makes no call."""
    store = JobStore(db)
    owner = uuid.uuid4()
    job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt="an owl"), "h")
    assert job is not None and (await store.claim_next(owner)).id == job.id
    assert await store.mark_call_sent(job.id, uuid.uuid4(), ("fake-model", None)) is None
    held = await store.mark_call_sent(job.id, owner, ("fake-model", None))
    assert held is not None and not held.cancel_requested


@pytest.mark.slow
async def test_with_a_budget_unpriced_models_are_named_once_at_start_up_and_on_the_home_page(
        make_app, fake_llm, db, caplog, monkeypatch):
    monkeypatch.setattr("app.runtime.WARM_PRICES_AFTER_S", 0.0)
    caplog.set_level(logging.INFO, logger="bedtime")
    # Models the pinned table has no price for: a local server's, and the newest pictures'
    # (genai-prices 0.2.5 prices gpt-6.2-sol, which stood here before).
    story_model, image_model = "SmolLM2-135M-Instruct", "gpt-image-2.6-flare"
    assert PriceTable().price_of(story_model) is None
    assert PriceTable().price_of(image_model) is None
    app = make_app(story_model=story_model, monthly_budget_micros=BUDGET,
                   illustrator="openai", image_model=image_model)
    async with serve(app) as client:
        def warnings() -> list[str]:
            return [r.getMessage() for r in caplog.records
                    if "event=unpriced_models" in r.getMessage()]

        async def warned() -> bool:
            return bool(warnings())

        await until(warned, "no warning about unpriced models")
        [line] = warnings()
        assert story_model in line and image_model in line and "PRICES" in line
        home = (await client.get("/")).text
        assert story_model in home and "does not count" in home
        assert "PRICES" not in home  # the log names the setting, for whoever runs the app
    caplog.clear()
    async with serve(make_app(story_model=story_model)) as client:  # no budget: quiet
        assert "does not count" not in (await client.get("/")).text


@pytest.mark.slow
async def test_the_largest_prices_allowed_go_through_intake_ledger_and_pages(
        make_app, fake_llm, db):
    """PRICES at their most (1,000 US dollars per million tokens and per picture) and the
    largest MONTHLY_BUDGET: no arithmetic on money raises anywhere a price goes."""
    most = {"input_per_mtok": 1000, "output_per_mtok": 1000, "cached_per_mtok": 1000,
            "per_image": 1000}
    prices = parsed_prices("PRICES", json.dumps({"fake-model": most, "fake-image": most}))
    fake_llm.story = "The Whale\n\nOnce upon a time a whale hummed."
    app = make_app(prices=prices, monthly_budget_micros=1_000_000 * 1_000_000,
                   illustrator="openai", image_model="fake-image")
    async with serve(app) as client:
        assert (await client.get("/")).status_code == 200
        job_id = (await post_story(client, {"prompt": "a whale " * 40})).json()["job_id"]
        done = await wait_for_job(client, job_id)
        assert done["status"] == "completed", done
        picture = await picture_when(client, done["story_id"])
        assert picture["status"] == "ready"
        rows = await ledger(db)
        assert [row[1] for row in rows] == ["story", "picture"]
        assert rows[1][3] == 1000 * 1_000_000  # a picture at its price per image
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
        assert spend["by_kind"]["picture"] == "1000.00"
        for page in ("/", "/spend"):
            assert (await client.get(page)).status_code == 200
