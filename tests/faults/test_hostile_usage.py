"""A campaign of hostile usage reports, over both provider APIs: the provider's numbers are
untrusted input. Each story is written by the fake over real HTTP with a usage block of
its choosing (negative, absurd, not a number, partial, the wrong type), and after each the
ledger is checked against the fake's own count of calls: every call in it once, never for
more than its set-aside, the story stored whatever the report said, and the month never
locked (the next story is still accepted)."""

from __future__ import annotations

import logging

import pytest

from app.money.prices import PriceTable
from app.requests import parse_story_request
from tests.helpers.app import post_story, serve, wait_for_job
from tests.helpers.sql import fetch_all, fetch_one, fetch_val
from tests.helpers.waits import until
from tests.money.test_ledger import PRICES

pytestmark = pytest.mark.anyio

BODY = {"prompt": "a hedgehog who hums to the moon", "length": "short"}
# (input, output) as the provider reported them; each is no usage the call could produce.
HOSTILE = [
    (-5, 314), (42, -1000), (1e300, 314), (42, 1e300), ("many", 314), (42, "lots"),
    (10**18, 314), (42, 10**18), (2**31, 2**31), (None, 314), (42, None), (42.5, 314),
    ([1], 314), ({"n": 1}, 314), (42, 10**6), (-0.5, 314),
]
# (`true` is not here: the openai library reads it as 1 before the app sees it, a count
# the call could have made.)
HONEST = (42, 314)  # 42 * 0.15 + 314 * 0.6 = 195 micro-dollars


def usage_block(api: str, input_tokens: object, output_tokens: object) -> dict[str, object]:
    if api == "chat":
        return {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                "total_tokens": 356}
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 356}


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_no_usage_report_loses_a_story_overcharges_or_locks_the_month(
        make_app, fake_llm, db, caplog, api):
    caplog.set_level(logging.WARNING, logger="bedtime")
    fake_llm.story = "The Hedgehog's Song\n\nOnce upon a time a hedgehog hummed. The end."
    # The fake is a server of one's own (OPENAI_BASE_URL): no room for reasoning in the cap.
    set_aside = PriceTable(dict(PRICES)).set_aside(parse_story_request(BODY), "fake-model", 0)
    # Room for every story of the campaign at its set-aside, and two more: a report that
    # charged more than its set-aside (10**18 tokens: $600,000,000,000) would lock it.
    budget = (len(HOSTILE) + 3) * set_aside
    app = make_app(prices=PRICES, monthly_budget_micros=budget, llm_api=api,
                   daily_story_limit=1000, queue_max=100)
    async with serve(app) as client:
        for reported in [HONEST, *HOSTILE]:
            fake_llm.usage = usage_block(api, *reported)
            answer = await post_story(client, BODY)
            assert answer.status_code == 202, (reported, answer.text)  # never locked
            job_id = answer.json()["job_id"]
            done = await wait_for_job(client, job_id)
            assert done["status"] == "completed", (reported, done)  # the story is kept
            assert fake_llm.calls_for(job_id) == 1
            row = await fetch_one(db, "SELECT cost_micros, estimated, input_tokens,"
                                      " output_tokens FROM spend WHERE job_id = :id",
                                  {"id": job_id})
            assert row is not None, reported  # every call in the ledger
            if reported == HONEST:
                assert (row["cost_micros"], row["estimated"]) == (195, False)
            else:  # charged its set-aside, estimated, never more
                assert (row["cost_micros"], row["estimated"]) == (set_aside, True), reported
                assert 0 < row["input_tokens"] < 10_000 and 0 < row["output_tokens"] < 10_000
            story = await fetch_one(db, "SELECT prompt_tokens, completion_tokens FROM stories"
                                        " WHERE job_id = :id", {"id": job_id})
            assert (story["prompt_tokens"], story["completion_tokens"]) == (
                row["input_tokens"], row["output_tokens"])
        # The ledger against the fake's own count: one row per billed call, no more.
        jobs = await fetch_all(db, "SELECT id FROM story_jobs")
        assert sum(fake_llm.calls_for(job["id"]) for job in jobs) == len(HOSTILE) + 1
        assert await fetch_val(db, "SELECT count(*) FROM spend") == len(HOSTILE) + 1
        assert await fetch_val(db, "SELECT sum(cost_micros) FROM spend") == (
            195 + len(HOSTILE) * set_aside)
        fake_llm.usage = None  # the next story, if written before the end, reports honestly
        assert (await post_story(client, BODY)).status_code == 202  # room left
    warnings = [r.getMessage() for r in caplog.records if "usage_unreadable" in r.getMessage()]
    assert len(warnings) == len(HOSTILE)  # one WARNING each, naming what was reported
    assert any(f"input_tokens={10**18}" in warning for warning in warnings)


@pytest.mark.parametrize("usage", [
    {"input_tokens": -5, "output_tokens": 272}, {"input_tokens": 60, "output_tokens": 10**18},
    {"input_tokens": "many", "output_tokens": 272}, "a lot", [60, 272],
    {"input_tokens": 60, "output_tokens": 272, "input_tokens_details": {"cached_tokens": 61}},
])
async def test_a_picture_s_hostile_usage_is_charged_its_set_aside_and_the_picture_kept(
        make_app, fake_llm, db, usage):
    fake_llm.story = "The Whale\n\nOnce upon a time a whale hummed."
    app = make_app(prices=PRICES, illustrator="openai", image_model="fake-image",
                   monthly_budget_micros=10_000_000)
    fake_llm.images.usage = usage
    async with serve(app) as client:
        job = (await post_story(client, BODY)).json()
        story_id = (await wait_for_job(client, job["job_id"]))["story_id"]
        picture = await until_picture(db, story_id)
        assert picture["status"] == "completed"  # the picture is kept
        assert fake_llm.images.calls_for(picture["id"]) == 1
        row = await fetch_one(db, "SELECT cost_micros, estimated FROM spend WHERE job_id = :id",
                              {"id": picture["id"]})
        set_aside = PriceTable(dict(PRICES)).picture_set_aside("fake-image")
        assert (row["cost_micros"], row["estimated"]) == (set_aside, True)


async def until_picture(db, story_id: int):
    """The story's picture job, once it has ended."""
    row = None

    async def ended() -> bool:
        nonlocal row
        row = await fetch_one(db, "SELECT id, status FROM story_jobs WHERE picture_of = :id",
                              {"id": story_id})
        return row is not None and row["status"] in ("completed", "failed")

    await until(ended, "the picture job's end")
    return row
