"""The spend guard: DAILY_STORY_LIMIT new jobs per calendar day in TZ (issue 5, item 6)."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.helpers.app import new_key, post_story, serve
from tests.helpers.sql import execute, fetch_val

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
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 5


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
    assert await fetch_val(db, "SELECT count(*) FROM story_jobs") == 2


async def test_refused_key_is_not_burned_and_yesterday_does_not_count(make_app, db):
    app = make_app(daily_story_limit=1)
    async with serve(app) as http:
        assert (await post_story(http)).status_code == 202
        key = new_key()
        assert (await post_story(http, key=key)).status_code == 429
        await execute(db, "UPDATE story_jobs SET created_at = created_at - interval '1 day'")
        assert (await post_story(http, key=key)).status_code == 202  # a new day: same key works


@pytest.mark.slow
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


@pytest.mark.slow
async def test_jobs_that_never_reached_the_model_give_the_day_its_story_back(make_app, db):
    """A job put aside in line ('expired': never claimed, so never sent) does not count; one
    that failed after a worker took it (the model may have been paid) still does."""
    app = make_app(daily_story_limit=2, worker_concurrency=0)  # nothing claims: they wait
    async with serve(app) as http:
        claimed = (await post_story(http)).json()["job_id"]
        expired = (await post_story(http)).json()["job_id"]
        assert (await post_story(http)).status_code == 429
        await execute(db,
            "UPDATE story_jobs SET status = 'failed', error_text = 'interrupted',"
            " started_at = now(), heartbeat_at = now(), claimed_by = gen_random_uuid(),"
            " completed_at = now() WHERE id = :id", {"id": claimed},
        )
        await execute(db,   # what the sweeper does to a job that waited with no worker alive
            "UPDATE story_jobs SET status = 'failed', error_text = 'expired', completed_at = now()"
            " WHERE id = :id", {"id": expired},
        )
        assert "1 story left today" in (await http.get("/")).text
        assert (await post_story(http)).status_code == 202
        refused = await post_story(http)
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "daily_limit_reached"


async def test_at_zero_the_form_says_so_before_typing_and_reads_as_closed(make_app):
    app = make_app(daily_story_limit=1, worker_concurrency=0)
    async with serve(app) as http:
        home = (await http.get("/")).text
        assert "limit-note" not in home
        assert re.search(r'<button class="button primary big" type="submit">Write the story', home)
        assert (await post_story(http)).status_code == 202
        home = (await http.get("/")).text
        assert "0 stories left today" in home
        note = re.search(r'<p class="notice" id="limit-note">([^<]*)</p>', home)
        assert note and "That&#39;s the 1 story for today. More after midnight, in" in note[1]
        assert '<fieldset class="form-fields" disabled>' in home  # every field closed
        assert "Write the story</button>" not in home and "No more stories tonight." in home
