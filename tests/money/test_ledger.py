"""The ledger: every billed call recorded once, with its cost from the provider's reported
usage at the price it had then, in the statement that stores what it paid for. Against a
real PostgreSQL and the fake provider over HTTP, in both API modes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import replace
from decimal import Decimal

import pytest

from app.main import create_app
from app.money import Price, Usage
from app.money.ledger import amount
from app.money.prices import PriceTable
from tests.helpers.app import ACCEPT_JSON, JSON, post_story, serve, wait_for_job
from tests.helpers.pictures import picture_when
from tests.helpers.platform import ROOT
from tests.helpers.sql import fetch_all, fetch_val
from tests.helpers.waits import WAIT_S

pytestmark = pytest.mark.anyio

# The fake reports 42 prompt and 314 completion tokens for every story (both APIs).
PRICES = {"fake-model": Price(input_per_mtok=Decimal("0.15"), output_per_mtok=Decimal("0.6")),
          "fake-image": Price(per_image=Decimal("0.011"))}
STORY_COST = 195  # micro-dollars: 42 x 0.15 + 314 x 0.6 = 194.7, half a micro-dollar up


def test_a_cost_is_the_usage_at_the_price_rounded_to_the_micro_dollar():
    price = PRICES["fake-model"]
    assert price.cost_usd(Usage(input_tokens=42, output_tokens=314)) == Decimal("0.0001947")
    assert price.charge(Usage(input_tokens=42, output_tokens=314)) == STORY_COST
    cached = Price(input_per_mtok=Decimal(1), output_per_mtok=Decimal(2),
                   cached_per_mtok=Decimal("0.1"))
    assert cached.charge(Usage(input_tokens=1000, cached_tokens=400, output_tokens=10)) == 660
    assert PRICES["fake-image"].charge(Usage(output_tokens=5000, images=1)) == 11_000
    assert [amount(m) for m in (0, 195, 5_000_000, 12_300)] == ["0", "0.000195", "5.00",
                                                               "0.0123"]


def test_the_pinned_table_prices_current_models_and_prices_can_be_added():
    table = PriceTable({"llama3": Price()})
    luna = table.price_of("gpt-6-luna")  # the default story model
    assert luna is not None and luna.output_per_mtok > 0
    # A dated snapshot, as the provider names the model that answered, finds its family.
    assert table.price_of("gpt-5.4-mini-2026-03-17") == table.price_of("gpt-5.4-mini")
    assert table.price_of("gpt-image-2.5-flare") is not None  # the default picture model
    # The newest story models, priced since genai-prices 0.2.5.
    assert table.price_of("gpt-6.2-sol") is not None
    assert table.price_of("gpt-6.2-astra") is not None
    assert table.price_of("llama3") == Price()  # free, as PRICES says
    assert table.price_of("no-such-model") is None  # unpriced


@pytest.mark.parametrize("llm_api", ["chat", "responses"])
async def test_a_story_costs_its_reported_usage_once(make_app, fake_llm, db, llm_api):
    app = make_app(llm_api=llm_api, prices=PRICES)
    async with serve(app) as client:
        job = (await post_story(client, {"prompt": "a fox", "child_name": "Mia"})).json()
        done = await wait_for_job(client, job["job_id"])
        assert done["status"] == "completed", done
        [row] = await fetch_all(db, "SELECT * FROM spend")
        assert (row["job_id"], row["kind"], row["model"], row["child_name"]) == (
            job["job_id"], "story", "fake-model", "Mia")
        assert (row["input_tokens"], row["output_tokens"], row["cost_micros"],
                row["estimated"]) == (42, 314, STORY_COST, False)
        assert json.loads(row["price"]) == {"input_per_mtok": "0.15", "output_per_mtok": "0.6",
                                "cached_per_mtok": None, "per_image": None}
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
        assert (spend["spent_usd"], spend["reserved_usd"], spend["calls"]) == (
            "0.000195", "0", 1)
        assert spend["by_kind"]["story"] == "0.000195" and spend["by_child"] == {
            "Mia": "0.000195"}
        assert spend["by_day"][-1]["usd"] == "0.000195" and len(spend["by_day"]) == 30
        assert spend["unpriced_models"] == [] and spend["budget_usd"] is None


async def test_a_failed_job_costs_nothing_and_sets_nothing_aside(make_app, fake_llm, db):
    fake_llm.mode = "500"
    app = make_app(prices=PRICES, monthly_budget_micros=1_000_000)
    async with serve(app) as client:
        job = (await post_story(client)).json()
        assert (await wait_for_job(client, job["job_id"]))["status"] == "failed"
        assert await fetch_val(db, "SELECT count(*) FROM spend") == 0
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
        assert (spend["spent_usd"], spend["reserved_usd"]) == ("0", "0")


@pytest.mark.parametrize("llm_api", ["chat", "responses"])
@pytest.mark.parametrize("cut_off", ["stopped", "timeout"])
@pytest.mark.slow
async def test_a_story_cut_off_is_billed_and_charged_its_set_aside_once(
        make_app, fake_llm, db, llm_api, cut_off):
    """The provider bills a call stopped by the family, or past LLM_TIMEOUT_S, for what it
    wrote: no story and no usage come of it, so its set-aside goes in the ledger (estimated)
    in the statement that fails the job, once; the set-aside is released with it."""
    fake_llm.chunk_delay_s = 0.01
    fake_llm.hold_after_chunks = 4
    fake_llm.hold()
    app = make_app(llm_api=llm_api, prices=PRICES, monthly_budget_micros=1_000_000,
                   llm_timeout_s=1.5 if cut_off == "timeout" else 60)
    try:
        async with serve(app) as client:
            job = (await post_story(client, {"prompt": "a fox", "child_name": "Mia"})).json()
            set_aside = await fetch_val(db, "SELECT set_aside_micros FROM story_jobs"
                                        " WHERE id = :id", {"id": job["job_id"]})
            assert set_aside > STORY_COST  # the whole token budget, not what a story costs
            if cut_off == "stopped":
                await asyncio.to_thread(fake_llm.wait_for_call, job["job_id"])
                answer = await client.post(f"/stories/jobs/{job['job_id']}/cancel",
                                           headers=JSON)
                assert answer.status_code == 200, answer.text
            done = await wait_for_job(client, job["job_id"])
            assert done["status"] == "failed" and done["error_code"] == (
                # silent past LLM_TIMEOUT_S after its first words: cut short mid-story
                "stopped" if cut_off == "stopped" else "cut_short")
            [row] = await fetch_all(db, "SELECT * FROM spend")
            assert (row["job_id"], row["kind"], row["model"], row["child_name"]) == (
                job["job_id"], "story", "fake-model", "Mia")
            assert (row["cost_micros"], row["estimated"]) == (set_aside, True)
            spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
            assert (spend["spent_usd"], spend["reserved_usd"]) == (amount(set_aside), "0")
    finally:
        fake_llm.release()


@pytest.mark.slow
async def test_a_story_with_no_reported_usage_is_charged_its_set_aside_as_estimated(
        make_app, fake_llm, db):
    fake_llm.report_usage = False
    app = make_app(prices=PRICES)
    async with serve(app) as client:
        job = (await post_story(client)).json()
        assert (await wait_for_job(client, job["job_id"]))["status"] == "completed"
        set_aside = await fetch_val(db, "SELECT set_aside_micros FROM story_jobs WHERE id = :id",
                                    {"id": job["job_id"]})
        row = (await fetch_all(db, "SELECT cost_micros, estimated FROM spend"))[0]
        assert set_aside > STORY_COST and (row["cost_micros"], row["estimated"]) == (
            set_aside, True)


@pytest.mark.slow
async def test_a_picture_is_in_the_ledger_at_its_price_per_picture(make_app, fake_llm, db):
    fake_llm.story = "The Whale\n\nOnce upon a time a whale hummed."
    app = make_app(prices=PRICES, illustrator="openai", image_model="fake-image")
    async with serve(app) as client:
        job = (await post_story(client)).json()
        done = await wait_for_job(client, job["job_id"])
        picture = await picture_when(client, done["story_id"])
        assert picture["status"] == "ready"
        rows = await fetch_all(db, "SELECT kind, job_id, model, images, output_tokens,"
                                   " cost_micros FROM spend ORDER BY id")
        assert [(r["kind"], r["job_id"]) for r in rows] == [
            ("story", job["job_id"]), ("picture", picture["job_id"])]
        assert (rows[1]["model"], rows[1]["images"], rows[1]["output_tokens"],
                rows[1]["cost_micros"]) == ("fake-image", 1, 272, 11_000)
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
        assert spend["by_kind"]["picture"] == "0.011" and spend["calls"] == 2


@pytest.mark.slow
async def test_an_unpriced_model_costs_nothing_and_is_named(make_app, fake_llm, db):
    async with serve(make_app()) as client:  # fake-model: in no table, no PRICES
        job = (await post_story(client)).json()
        assert (await wait_for_job(client, job["job_id"]))["status"] == "completed"
        row = (await fetch_all(db, "SELECT cost_micros, price FROM spend"))[0]
        assert (row["cost_micros"], row["price"]) == (0, None)
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
        assert spend["unpriced_models"] == ["fake-model"]
        page = await client.get("/spend")
        assert page.status_code == 200 and "Models with no price" in page.text
        assert "<code>fake-model</code>" in page.text and "PRICES" not in page.text


@pytest.mark.slow
async def test_a_screening_is_recorded_at_nothing_once(make_app, fake_llm, db):
    async with serve(make_app(prices=PRICES, moderation=True)) as client:
        job = (await post_story(client)).json()
        assert (await wait_for_job(client, job["job_id"]))["status"] == "completed"
        deadline = time.monotonic() + WAIT_S
        while await fetch_val(db, "SELECT count(*) FROM spend WHERE kind = 'moderation'") == 0:
            assert time.monotonic() < deadline, "no screening recorded"
            await asyncio.sleep(0.05)
        rows = await fetch_all(db, "SELECT kind, job_id, cost_micros FROM spend ORDER BY kind")
        assert [(r["kind"], r["job_id"], r["cost_micros"]) for r in rows] == [
            ("moderation", job["job_id"], 0), ("story", job["job_id"], STORY_COST)]
        spend = (await client.get("/spend", headers=ACCEPT_JSON)).json()
        assert spend["calls"] == 2 and spend["by_kind"]["moderation"] == "0"
        assert spend["spent_usd"] == "0.000195"


@pytest.mark.slow
def test_the_command_line_prints_the_month_in_one_table(database_url, fake_llm, settings):
    async def one_story() -> None:
        async with serve(create_app(replace(settings, prices=PRICES))) as client:
            job = (await post_story(client, {"prompt": "a fox", "child_name": "Leo"})).json()
            await wait_for_job(client, job["job_id"])

    asyncio.run(one_story())
    env = {**os.environ, "DATABASE_URL": database_url, "MONTHLY_BUDGET": "0.05",
           "STORY_MODEL": "fake-model", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_llm.url,
           "PRICES": json.dumps({"fake-model": {"input_per_mtok": 0.15,
                                                "output_per_mtok": 0.6}})}
    done = subprocess.run([sys.executable, "-m", "app", "spend"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Spending in ")
    table = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in lines[1:])
    assert table["spent"] == "$0.0002" and table["budget"] == "$0.05 (0 % used)"
    assert table["calls"] == "1" and table["for Leo"] == "$0.0002"
