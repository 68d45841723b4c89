"""Closed means closed (app/web/spend.py): what a page already open may no longer spend on,
asked by app.js every few polls, in the page's language; and the server refuses whatever
slips through anyway."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.runtime import meter_for
from app.stories import StoryRequest
from tests.helpers.app import post_story, serve
from tests.helpers.forms import form_key, submit
from tests.money.test_budget import PRICES, shortest_set_aside, spent_already
from tests.web.test_stop_finish import interrupted_with

pytestmark = pytest.mark.anyio

PICTURE_MICROS = 11_000  # fake-image's price per picture (PRICES)
OPEN = {"stories": None, "lengths": None, "pictures": None, "narration": None}


async def test_an_open_page_learns_the_budget_closed_and_a_post_that_slips_through_is_refused(
    make_app, db, settings
):
    budget = 10 * shortest_set_aside(settings) + PICTURE_MICROS  # room for both, at first
    app = make_app(prices=PRICES, monthly_budget_micros=budget, illustrator="openai",
                   image_model="fake-image")
    async with serve(app, from_own_pages=True) as client:
        room = await client.get("/closed")
        assert room.json() == OPEN
        assert room.headers["cache-control"] == "no-store"
        await spent_already(db, budget)  # another device spent the rest
        room = (await client.get("/closed?story=1")).json()
        assert "no room for another story" in room["stories"]
        assert room["pictures"] == ("No more pictures this month: the budget has no room for "
                                    "one.")
        assert room["narration"] is None  # no narrator: nothing to close
        refused = await post_story(client)
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "budget_reached"
        # In this device's language, as the page it closes.
        client.cookies.set("language", "es")
        spanish = (await client.get("/closed")).json()["stories"]
        assert spanish and "no room for another story" not in spanish


async def test_an_open_page_learns_which_lengths_the_budget_still_has_room_for(
    make_app, db, settings
):
    """Room for a short story only: the longer lengths close, saying why as the form does,
    and the form stays open; no room even for a short one: the form itself closes."""
    meter = meter_for(replace(settings, prices=PRICES, monthly_budget_micros=1))
    short, medium = (meter.story_set_aside(StoryRequest(prompt="", length=length))
                     for length in ("short", "medium"))
    budget = 10 * short
    async with serve(make_app(prices=PRICES, monthly_budget_micros=budget),
                     from_own_pages=True) as client:
        await spent_already(db, budget - (short + medium) // 2)
        room = (await client.get("/closed")).json()
        assert room | {"lengths": None} == OPEN
        assert room["lengths"] == {
            "fit": ["short"], "why": "This month's budget has room for shorter stories only."}
        home = (await client.get("/")).text
        assert "This month&#39;s budget has room for shorter stories only." in home  # the same
        await spent_already(db, short)
        room = (await client.get("/closed")).json()
        assert "no room for another story" in room["stories"] and room["lengths"] is None


async def test_the_days_last_story_closes_an_open_pages_stories_not_its_pictures(make_app):
    async with serve(make_app(daily_story_limit=1, illustrator="openai",
                              image_model="fake-image"), from_own_pages=True) as client:
        assert (await client.get("/closed")).json() == OPEN
        assert (await post_story(client)).status_code == 202
        room = (await client.get("/closed")).json()
        assert "story for today" in room["stories"]
        assert room["pictures"] is None  # a picture does not count toward the day's limit


@pytest.mark.parametrize("story", ["x", "-1", "9" * 40, ""])
async def test_any_story_number_is_answered(client, story):
    room = await client.get(f"/closed?story={story}")
    assert room.status_code == 200 and room.json() == OPEN


async def test_a_refused_one_tap_story_leaves_the_form_as_this_device_had_it(make_app):
    """A one-tap tap that slips through after the day's last story is refused; the form
    comes back as it was, not with the child's idea moved under "Someone else"."""
    async with serve(make_app(daily_story_limit=1), from_own_pages=True) as tablet:
        mia = (await tablet.post("/children", json={"name": "Mia", "age": 5})).json()
        await submit(tablet, **{"for": "other", "child_name": "Leo", "age": "6"})
        refused = await tablet.post("/stories/generate", data={
            "idempotency_key": form_key((await tablet.get("/")).text),
            "prompt": "a moon that hums", "child_id": str(mia["child_id"])})
        assert refused.status_code == 429
        (form,) = re.findall(r'<form id="story-form".*?</form>', refused.text, re.S)
        assert "a moon that hums" not in form
        assert re.search(r'id="child_name"[^>]*value="Leo"', form)
        assert re.search(r'name="for" value="other" checked', form)


async def test_a_story_cut_short_offers_its_finish_closed_on_every_page_once_none_can_be_asked(
    make_app, db
):
    """The day's stories are used up before the pages are asked for: the job's page, the
    home page's card and the library's list come with Finish (and Start it again) closed,
    each saying why once, in the words the home page's form uses."""
    job = await interrupted_with(db, "The Owl\n\nAn owl flew. She was")  # the day's one story
    async with serve(make_app(daily_story_limit=1), from_own_pages=True) as client:
        page = (await client.get(f"/stories/jobs/{job.id}")).text
        home = (await client.get("/")).text
        library = (await client.get("/stories")).text
    (why,) = re.findall(rf'<p class="notice job-closed" id="job-{job.id}-closed">(.*?)</p>',
                        page)
    assert "story for today" in why
    for name in ("Finish this story", "Start it again"):
        assert re.search(rf'type="submit" disabled aria-describedby="job-{job.id}-closed">'
                         rf'{name}</button>', page), name
    # Home says it once, in its form's note; the card's buttons point there.
    assert re.search(r'<p class="notice" id="limit-note">' + re.escape(why), home)
    assert f'id="job-{job.id}-closed"' not in home
    assert re.search(r'disabled aria-describedby="limit-note">Finish this story</button>', home)
    # The library's list says it above its rows.
    assert re.search(r'<p class="notice" id="unfinished-closed">' + re.escape(why), library)
    assert re.search(r'data-spends="stories">.*?disabled aria-describedby="unfinished-closed">'
                     r'Finish</button>', library, re.S)
