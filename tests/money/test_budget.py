"""The monthly cap: the intake sets aside each job's largest possible cost under its lock and
refuses, with 429 budget_reached, a job that would take spent + set aside past
MONTHLY_BUDGET. Racing requests (in one process and across two) never pass it; the
set-aside is released on completion, on failure and on a sweep after a crash; a replay is
answered before the check; a picture that does not fit is skipped, and the story page says
so. Against a real PostgreSQL and the fake provider over HTTP."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import replace
from decimal import Decimal

import httpx
import pytest

from app.money import Price
from app.money.meter import Meter
from app.money.prices import PriceTable
from app.requests import parse_story_request
from app.runtime import meter_for
from app.stories import StoryRequest
from tests.helpers.app import ACCEPT_JSON, JSON, post_story, serve, wait_for_job
from tests.helpers.locks import holding
from tests.helpers.processes import AppProcess
from tests.helpers.sql import execute, fetch_all, fetch_one, fetch_val
from tests.helpers.waits import HTTP_TIMEOUT_S, until
from tests.money.test_ledger import PRICES

pytestmark = pytest.mark.anyio

BODY = {"prompt": "a fox who counts the stars"}
# The fake is a server of one's own (OPENAI_BASE_URL): no room for reasoning in the cap.
SET_ASIDE = PriceTable(dict(PRICES)).set_aside(parse_story_request(BODY), "fake-model", 0)
SET_ASIDE_MIA = PriceTable(dict(PRICES)).set_aside(
    parse_story_request(BODY | {"child_name": "Mia"}), "fake-model", 0)
FITS = 5  # stories whose set-asides the budget holds at once
BUDGET = FITS * SET_ASIDE + SET_ASIDE // 2


async def month_money(db) -> tuple[int, int]:
    row = await fetch_one(db, "SELECT * FROM month_spend(date_trunc('month', now()))")
    return row["spent"], row["set_aside"]


@pytest.fixture
def capped(make_app, fake_llm):
    fake_llm.hold()  # every story stays being written: its set-aside stays held
    return make_app(prices=PRICES, monthly_budget_micros=BUDGET, queue_max=100,
                    daily_story_limit=1000, worker_concurrency=2)


@pytest.mark.slow
async def test_twelve_racing_requests_never_pass_the_budget(capped, fake_llm, db):
    async with serve(capped) as client:
        answers = await asyncio.gather(*(post_story(client, BODY) for _ in range(12)))
        accepted = [a for a in answers if a.status_code == 202]
        refused = [a for a in answers if a.status_code == 429]
        assert (len(accepted), len(refused)) == (FITS, 12 - FITS), [a.text for a in answers]
        for answer in refused:
            error = answer.json()["error"]
            assert error["code"] == "budget_reached"
            assert "$" in error["message"] and "budget" in error["message"]
            assert 0 < int(answer.headers["retry-after"]) <= 31 * 86400
        spent, set_aside = await month_money(db)
        assert spent + set_aside <= BUDGET and set_aside == FITS * SET_ASIDE
        # Nothing was written for a refusal.
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == FITS
        # A replay is answered before the check: the same job, not a refusal.
        key = "replayed-after-the-cap"
        fake_llm.release()
        for job in accepted:
            await wait_for_job(client, job.json()["job_id"])
        spent, set_aside = await month_money(db)
        assert set_aside == 0 and spent == 5 * 195  # released; the real cost written
        again = await post_story(client, BODY, key=key)
        assert again.status_code == 202  # room again: real costs are far below set-asides
        replay = await post_story(client, BODY, key=key)
        assert replay.status_code == 202 and replay.json()["job_id"] == again.json()["job_id"]


@pytest.mark.slow
async def test_a_replay_is_answered_even_when_the_budget_is_used_up(capped, fake_llm, db):
    async with serve(capped) as client:
        keys = [uuid.uuid4().hex for _ in range(FITS)]
        for key in keys:
            assert (await post_story(client, BODY, key=key)).status_code == 202
        assert (await post_story(client, BODY)).status_code == 429
        replay = await post_story(client, BODY, key=keys[0])
        assert replay.status_code == 202


@pytest.mark.slow
async def test_the_set_aside_is_released_on_failure_and_on_a_sweep(capped, fake_llm, db,
                                                                    database_url):
    async with serve(capped) as client:
        first = (await post_story(client, BODY)).json()["job_id"]
        await wait_for_job(client, first, ("running",))
        assert (await month_money(db))[1] == SET_ASIDE
        await asyncio.to_thread(fake_llm.wait_for_call, first)
        # The process writing it "dies": its heartbeat stops, and a sweep fails it. Its
        # call reached the provider (before any word came back): charged, estimated.
        # Backdated in the sweeper's own transaction: the worker's next beat waits.
        async with holding(database_url) as sweeper_side:
            await execute(sweeper_side.db, "UPDATE story_jobs SET heartbeat_at ="
                          " now() - interval '1 hour' WHERE id = :id", {"id": first})
            _, interrupted, _ = await sweeper_side.sweep_dead_running(60)
        assert interrupted == [first]
        assert await month_money(db) == (SET_ASIDE, 0)
        # A job that fails releases its set-aside too, and costs nothing.
        fake_llm.mode = "500"
        fake_llm.release()
        second = (await post_story(client, BODY)).json()["job_id"]
        assert (await wait_for_job(client, second))["status"] == "failed"
        assert await month_money(db) == (SET_ASIDE, 0)  # a 500: refused, billed nothing


@pytest.mark.slow
async def test_a_story_swept_with_words_written_is_charged_its_set_aside(
        capped, fake_llm, db, database_url):
    """A process killed while its story streamed: the provider billed the words it wrote,
    so the sweep that fails the job charges its set-aside, estimated, in the same statement,
    once."""
    fake_llm.chunk_delay_s = 0.01
    fake_llm.hold_after_chunks = 4
    async with serve(capped) as client:
        job = (await post_story(client, BODY | {"child_name": "Mia"})).json()["job_id"]

        async def words_saved() -> bool:
            return await fetch_val(db, "SELECT text_so_far <> '' FROM story_jobs"
                                       " WHERE id = :id", {"id": job})

        await until(words_saved, "the first words, saved")
        async with holding(database_url) as sweeper_side:
            # Its process "dies": backdated in the sweeper's own transaction, so the
            # worker's next beat (every 0.2 s) waits for the row and cannot undo it first.
            await execute(sweeper_side.db, "UPDATE story_jobs SET heartbeat_at ="
                          " now() - interval '1 hour' WHERE id = :id", {"id": job})
            assert (await sweeper_side.sweep_dead_running(60))[1] == [job]
            assert (await sweeper_side.sweep_dead_running(60))[1] == []  # once
        rows = await fetch_all(db, "SELECT * FROM spend")
        assert [(r["job_id"], r["kind"], r["model"], r["child_name"], r["cost_micros"],
                 r["estimated"]) for r in rows] == [
            (job, "story", "fake-model", "Mia", SET_ASIDE_MIA, True)]
        assert json.loads(rows[0]["price"])["output_per_mtok"] == "0.6"
        assert await month_money(db) == (SET_ASIDE_MIA, 0)
        fake_llm.release()


def drawing_at_a_story_s_set_aside(make_app, fake_llm, *, budget: int):
    """An app that draws a picture for each story, a picture costing one story's set-aside,
    under a month's `budget`."""
    fake_llm.story = "The Whale\n\nOnce upon a time a whale hummed."
    picture = Price(per_image=Decimal(SET_ASIDE) / 1_000_000)
    return make_app(prices=PRICES | {"fake-image": picture}, monthly_budget_micros=budget,
                    illustrator="openai", image_model="fake-image")


@pytest.mark.slow
async def test_a_picture_that_does_not_fit_is_skipped_and_the_page_says_so(
        make_app, fake_llm, db):
    # Room for one story's set-aside, not for a picture's beside its real cost.
    app = drawing_at_a_story_s_set_aside(make_app, fake_llm, budget=SET_ASIDE + 100)
    async with serve(app) as client:
        job = (await post_story(client, BODY)).json()
        done = await wait_for_job(client, job["job_id"])
        assert done["status"] == "completed"
        story = (await client.get(f"/stories/{done['story_id']}", headers=ACCEPT_JSON)).json()
        assert story["picture"]["status"] == "failed"
        assert fake_llm.images.total_calls() == 0  # never drawn
        page = (await client.get(f"/stories/{done['story_id']}")).text
        assert "No picture this time: this month's budget had no room for one." in page
        # Its Draw button says so before the tap (a redraw would be refused): no form.
        assert "No more pictures this month" in page
        assert f'action="/stories/{done["story_id"]}/picture"' not in page
        # A line, not an empty frame the size of a picture (3:2, 450 px on a tablet).
        assert '<figure class="picture"' not in page and 'class="picture picture-missing"' in page
        assert await month_money(db) == (195, 0)


@pytest.mark.slow
async def test_the_budget_holds_across_two_processes(database_url, fake_llm, tmp_path):
    fake_llm.hold()
    env = {"MONTHLY_BUDGET": f"{BUDGET / 1_000_000:.6f}", "QUEUE_MAX": "100",
           "STORY_MODEL": "fake-model", "ALLOW_OPEN": "1", "WORKER_CONCURRENCY": "2",
           "PRICES": json.dumps({"fake-model": {"input_per_mtok": 0.15,
                                                "output_per_mtok": 0.6}})}
    apps = [AppProcess(database_url, fake_llm.url, tmp_path / f"app-{n}.log") for n in (0, 1)]
    try:
        for app in apps:
            app.env |= env
            await app.start()
        clients = [httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) for app in apps]
        try:
            answers = await asyncio.gather(*(
                clients[n % 2].post("/stories/generate", json=BODY,
                                    headers={**JSON, "Idempotency-Key": uuid.uuid4().hex})
                for n in range(12)))
        finally:
            for client in clients:
                await client.aclose()
        codes = sorted(answer.status_code for answer in answers)
        assert codes == [202] * FITS + [429] * (12 - FITS), [a.text for a in answers]
        conn_db = await _pool(database_url)
        try:
            spent, set_aside = await month_money(conn_db)
            assert spent + set_aside <= BUDGET
        finally:
            await conn_db.close()
    finally:
        fake_llm.release()
        for app in apps:
            app.stop()


async def _pool(url: str):
    from app.db import connect_pool

    db = connect_pool(url)
    await db.connect()
    return db


def test_the_set_aside_is_the_whole_token_budget_at_the_model_s_prices():
    # The story's own tokens at 0.6 $/MTok, and the prompt: above a story's real cost (195),
    # so no story can pass the cap; OpenAI itself adds 8,000 tokens of room for reasoning.
    assert 195 < SET_ASIDE < 2_000
    with_reasoning = PriceTable(dict(PRICES)).set_aside(parse_story_request(BODY), "fake-model")
    assert 5_000 < with_reasoning < 10_000


# A short story's most possible cost, as the home page reckons it (no idea typed yet).
SHORT = PriceTable(dict(PRICES)).set_aside(StoryRequest(prompt="", length="short"), "fake-model",
                                           0)


async def spent_already(db, micros: int) -> None:
    await execute(db, "INSERT INTO spend (kind, model, cost_micros)"
                  " VALUES ('story', 'fake-model', :micros)", {"micros": micros})


@pytest.mark.parametrize(("spent", "says"), [
    (0, None),
    (int(0.5 * 10 * SHORT), None),  # half used, room for several stories
    (int(0.85 * 10 * SHORT), "have used"),  # 80 % and more, with room for a short story
    (10 * SHORT - SHORT // 2, "no room for another story"),  # under 100 % yet full
], ids=["nothing", "half", "eighty", "full"])
@pytest.mark.slow
async def test_the_home_page_says_calmly_when_the_budget_is_nearly_or_wholly_used(
    make_app, db, spent, says
):
    """Once 80 % is used, one calm line; once even a short story's most possible cost does
    not fit (with a small budget that comes before 80 %), the line says there is no room,
    and a story asked for then is refused as it says."""
    app = make_app(prices=PRICES, monthly_budget_micros=10 * SHORT)
    if spent:
        await spent_already(db, spent)
    async with serve(app) as client:
        page = (await client.get("/")).text
        notes = re.findall(r'<p class="budget-note" role="status">(.*?)</p>', page, re.S)
        notes += re.findall(r'<p class="notice" id="limit-note">(.*?)</p>', page, re.S)
        if says is None:
            assert notes == []
            return
        (note,) = notes
        assert says in note and "$" in note
        if "no room" not in says:
            assert "See the spending" in note
        refused = await post_story(client, {"prompt": "a fox", "length": "short"})
        assert refused.status_code == (429 if "no room" in says else 202), refused.text


@pytest.mark.parametrize(("spent_shorts", "says"), [
    (8.5, "Nearly all of this month's budget is used."),
    (10, "This month's budget is used up."),  # the whole month spent
    (12, "This month's budget is used up."),  # spent past it (a call's real cost)
], ids=["nearly", "full", "over"])
async def test_the_spending_page_says_used_up_once_the_month_is_full_or_over(
    make_app, db, settings, spent_shorts, says
):
    """"Nearly all" is for a month with room left; a full month, or one past its budget,
    is used up, as the home page's closed form says."""
    short = shortest_set_aside(settings)
    app = make_app(prices=PRICES, monthly_budget_micros=10 * short)
    await spent_already(db, int(spent_shorts * short))
    async with serve(app) as client:
        page = (await client.get("/spend")).text
    assert says in page
    assert ("Nearly all" in page) == ("Nearly" in says)


def shortest_set_aside(settings) -> int:
    """A short story's most possible cost as this app's meter reckons it (its reasoning
    room included), whatever the prices."""
    meter = meter_for(replace(settings, prices=PRICES, monthly_budget_micros=1))
    return meter.story_set_aside(StoryRequest(prompt="", length="short"))


@pytest.mark.slow
async def test_no_room_for_a_short_story_closes_the_form_as_the_day_s_limit_does(
    make_app, db, settings
):
    """The form, its fields and the one-tap buttons closed with the reason, before anyone
    taps; no "N stories left today" beside it."""
    short = shortest_set_aside(settings)
    app = make_app(prices=PRICES, monthly_budget_micros=10 * short)
    async with serve(app, from_own_pages=True) as client:
        added = await client.post("/children", data={"name": "Mia", "age": "5"},
                                  headers={"Accept": "text/html"})
        assert added.status_code in (200, 201, 303), added.text
        page = (await client.get("/")).text
        assert page.count('type="submit" disabled') == 0
        assert "Write the story" in page and "stories left today" in page
        await spent_already(db, 10 * short - short // 2)
        page = (await client.get("/")).text
    (note,) = re.findall(r'<p class="notice" id="limit-note">(.*?)</p>', page, re.S)
    assert "no room for another story" in note
    assert '<fieldset class="form-fields" disabled>' in page
    assert "Write the story</button>" not in page
    assert "No more stories this month" in page
    assert "stories left today" not in page
    assert re.search(r'<button class="button big" type="submit" disabled><span>Tonight, for',
                     page)
    assert 'class="budget-note"' not in page  # said once, where the form is


@pytest.mark.slow
async def test_with_room_for_a_short_story_only_the_form_and_the_refusal_say_so(
        make_app, db, settings):
    """The budget speaks in lengths: a medium story refused names the lengths that still
    fit, and the form closes the others, saying why, with a short story chosen."""
    meter = meter_for(replace(settings, prices=PRICES, monthly_budget_micros=1))
    short = meter.story_set_aside(parse_story_request(BODY | {"length": "short"}))
    medium = meter.story_set_aside(parse_story_request(BODY | {"length": "medium"}))
    budget = 10 * medium
    app = make_app(prices=PRICES, monthly_budget_micros=budget)
    await spent_already(db, budget - (short + medium) // 2)  # room for a short one only
    async with serve(app) as client:
        refused = await post_story(client, BODY | {"length": "medium"})
        assert refused.status_code == 429
        message = refused.json()["error"]["message"]
        assert "these lengths still fit: Short." in message and "More stories" not in message
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 0
        page = (await client.get("/")).text
        assert "This month&#39;s budget has room for shorter stories only." in page
        assert re.search(r'value="short"\s+checked>', page)
        for length in ("medium", "long"):
            assert re.search(rf'value="{length}"\s+disabled>', page), length
        assert '<fieldset class="form-fields" disabled>' not in page  # open for a short one
        assert (await post_story(client, BODY | {"length": "short"})).status_code == 202


def test_the_set_aside_is_the_cap_the_call_is_sent_with():
    """A server of one's own (OPENAI_BASE_URL) gets no room for hidden reasoning in its cap,
    so its story sets aside no room for it either: a small budget is not refused early."""
    from app.config import load_settings
    from app.money import Usage
    from app.storytelling.limits import token_budget

    def meter(**env: str) -> Meter:
        env |= {"STORY_MODEL": "fake-model", "OPENAI_API_KEY": "sk-test",
                "PRICES": '{"fake-model": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}'}
        return meter_for(load_settings(env, env_file="/nonexistent/.env"))

    request = parse_story_request(BODY)
    own, openai = meter(OPENAI_BASE_URL="http://127.0.0.1:9/v1"), meter()
    assert own.reasoning_tokens == 0 and openai.reasoning_tokens > 0
    price = PRICES["fake-model"]
    gap = (price.charge(Usage(output_tokens=token_budget(request.length, openai.reasoning_tokens)))
           - price.charge(Usage(output_tokens=token_budget(request.length, 0))))
    assert openai.story_set_aside(request) - own.story_set_aside(request) == gap > 0


@pytest.mark.slow
async def test_a_redraw_passes_the_budget_s_door_and_is_charged_when_refused_after_the_call(
        make_app, fake_llm, db):
    # Room for a story, its picture and one redraw.
    app = drawing_at_a_story_s_set_aside(make_app, fake_llm, budget=3 * SET_ASIDE + 100)
    async with serve(app) as client:
        job = (await post_story(client, BODY)).json()
        story_id = (await wait_for_job(client, job["job_id"]))["story_id"]
        await until(lambda: picture_status(client, story_id, "ready"), "the first picture")
        # A redraw the provider bills and the app then refuses (not a picture): set aside
        # before it was accepted, charged that much after, estimated.
        fake_llm.images.mode = "garbage"
        redraw = await client.post(f"/stories/{story_id}/picture",
                                   headers={**JSON, "Idempotency-Key": "redraw-1"})
        assert redraw.status_code == 202
        redraw_id = redraw.json()["job_id"]
        assert await fetch_val(db, "SELECT set_aside_micros FROM story_jobs WHERE id = :id",
                               {"id": redraw_id}) == SET_ASIDE
        await until(lambda: job_status(db, redraw_id, "failed"), "the redraw refused")
        charged = await fetch_one(db, "SELECT cost_micros, estimated FROM spend"
                                      " WHERE job_id = :id", {"id": redraw_id})
        assert (charged["cost_micros"], charged["estimated"]) == (SET_ASIDE, True)
        assert await month_money(db) == (195 + 2 * SET_ASIDE, 0)
        # No room for another: 429 budget_reached, nothing written, nothing drawn.
        jobs_before = await fetch_val(db, "SELECT count(*) FROM story_jobs")
        refused = await client.post(f"/stories/{story_id}/picture",
                                    headers={**JSON, "Idempotency-Key": "redraw-2"})
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "budget_reached" and "picture" in error["message"]
        assert 0 < int(refused.headers["retry-after"]) <= 31 * 86400
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == jobs_before
        assert fake_llm.images.total_calls() == 2
        # The same key, later, with room again (a new month, say), would make the job:
        # nothing was kept of the refusal.
        assert await fetch_val(db, "SELECT count(*) FROM story_jobs WHERE idempotency_key"
                                   " LIKE '%' || :story || ':%'", {"story": str(story_id)}) == 1


async def picture_status(client, story_id: int, status: str) -> bool:
    story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
    return (story["picture"] or {}).get("status") == status


async def job_status(db, job_id: int, status: str) -> bool:
    return await fetch_val(db, "SELECT status FROM story_jobs WHERE id = :id",
                           {"id": job_id}) == status
