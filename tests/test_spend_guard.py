"""The spend guard: DAILY_STORY_LIMIT new jobs per calendar day in TZ (issue 5, item 6)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import new_key, post_story, serve

pytestmark = pytest.mark.anyio


def seconds_to_local_midnight(tz: str) -> float:
    now = datetime.now(ZoneInfo(tz))
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return midnight.timestamp() - now.timestamp()


async def test_fifty_racing_requests_cannot_exceed_the_limit(make_app, db, fake_llm):
    fake_llm.hold()  # the accepted stories wait: nothing finishes during the race
    app = make_app(daily_story_limit=5, queue_max=100, timezone="Pacific/Kiritimati")
    async with serve(app) as http:
        responses = await asyncio.gather(*(post_story(http) for _ in range(50)))
        fake_llm.release()
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [202] * 5 + [429] * 45
    refused = [r for r in responses if r.status_code == 429]
    expected_s = seconds_to_local_midnight("Pacific/Kiritimati")
    for response in refused:
        assert response.json()["error"]["code"] == "daily_limit_reached"
        assert "midnight" in response.json()["error"]["message"]
        assert abs(int(response.headers["retry-after"]) - expected_s) <= 5
    assert await db.fetch_val("SELECT count(*) FROM story_jobs") == 5


async def test_replays_are_not_counted_and_never_refused(make_app, db):
    app = make_app(daily_story_limit=2)
    async with serve(app) as http:
        keys = [new_key(), new_key()]
        for key in keys:
            assert (await post_story(http, key=key)).status_code == 202
        # 50 racing replays of the day's two jobs: answered, not counted, not refused.
        replays = await asyncio.gather(*(post_story(http, key=keys[i % 2]) for i in range(50)))
        assert {r.status_code for r in replays} == {202}
        assert all(r.headers["idempotent-replayed"] == "true" for r in replays)
        third = await post_story(http)
        assert third.status_code == 429
        assert third.json()["error"]["code"] == "daily_limit_reached"
    assert await db.fetch_val("SELECT count(*) FROM story_jobs") == 2


async def test_refused_key_is_not_burned_and_yesterday_does_not_count(make_app, db):
    app = make_app(daily_story_limit=1)
    async with serve(app) as http:
        assert (await post_story(http)).status_code == 202
        key = new_key()
        assert (await post_story(http, key=key)).status_code == 429
        await db.execute("UPDATE story_jobs SET created_at = created_at - interval '1 day'")
        assert (await post_story(http, key=key)).status_code == 202  # a new day: same key works


async def test_html_says_when_the_limit_resets_and_home_shows_stories_left(make_app):
    app = make_app(daily_story_limit=2)
    async with serve(app) as http:
        assert "2 stories left today" in (await http.get("/")).text
        assert (await post_story(http)).status_code == 202
        assert "1 story left today" in (await http.get("/")).text
        assert (await post_story(http)).status_code == 202
        assert "0 stories left today" in (await http.get("/")).text
        for extra in ({}, {"HX-Request": "true"}):
            page = await http.post(
                "/stories/generate",
                data={"prompt": "one more, please", "idempotency_key": new_key()},
                headers={"Origin": "http://testserver", **extra},
            )
            assert page.status_code == 429
            assert "That&#39;s all 2 stories for today. More after midnight" in page.text
            assert "one more, please" in page.text  # the input is kept for tomorrow
            assert int(page.headers["retry-after"]) > 0
