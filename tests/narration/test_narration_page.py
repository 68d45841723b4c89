"""The story page's Listen: offered with a narrator, a note that polls while the parts are
recorded, then the player (no autoplay, the title and picture for the lock screen); with
NARRATOR off, the device's own voice reads aloud as before."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from app.money import Price
from tests.helpers.app import serve
from tests.helpers.narrations import SHORT_STORY, narration_when
from tests.helpers.pictures import story_of

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]


async def test_listen_is_asked_for_on_the_page_and_becomes_the_player(make_app, fake_llm):
    fake_llm.story = SHORT_STORY
    fake_llm.audio.hold()
    app = make_app(narrator="openai", voice_model="fake-voice")
    async with serve(app, from_own_pages=True) as client:
        story_id = await story_of(client)
        page = (await client.get(f"/stories/{story_id}")).text
        assert page.count('class="tool-group listen"') == 1 and "data-read-aloud" not in page
        key = re.search(r'name="idempotency_key" value="([0-9a-f]+)"', page.split(
            'class="tool-group listen"')[1])[1]
        asked = await client.post(f"/stories/{story_id}/narration",
                                  data={"idempotency_key": key}, headers={"HX-Request": "true"})
        assert asked.status_code == 200
        assert f'hx-get="/stories/{story_id}/narration/frame"' in asked.text
        assert 'hx-trigger="every' in asked.text and "<audio" not in asked.text
        fake_llm.audio.release()
        narration = await narration_when(client, story_id)
        frame = (await client.get(f"/stories/{story_id}/narration/frame",
                                  headers={"HX-Request": "true"})).text
        assert "hx-trigger" not in frame  # polling stops
        assert f'src="{narration["url"]}"' in frame and 'preload="none"' in frame
        assert "autoplay" not in frame and 'data-title="The Whale Who Hummed"' in frame
        page = (await client.get(f"/stories/{story_id}")).text
        assert f'src="{narration["url"]}"' in page and "listen.js" in page
        no_js = await client.post(f"/stories/{story_id}/narration",
                                  data={"idempotency_key": key})
        assert no_js.status_code == 303 and no_js.headers["location"] == f"/stories/{story_id}"


async def test_with_narrator_off_the_device_reads_aloud_as_before(make_app, fake_llm):
    fake_llm.story = SHORT_STORY
    async with serve(make_app(narrator="off"), from_own_pages=True) as client:
        story_id = await story_of(client)
        page = (await client.get(f"/stories/{story_id}")).text
        assert "data-read-aloud" in page and "data-listen-frame" not in page


async def test_listen_is_closed_before_the_tap_when_the_budget_has_no_room(make_app, fake_llm):
    fake_llm.story = SHORT_STORY
    voice = Price(input_per_mtok=Decimal("2.5"), output_per_mtok=Decimal("10"),
                  audio_output_per_mtok=Decimal("64"))
    for budget, closed in ((10_000, True), (50_000_000, False)):  # $0.01, then $50
        app = make_app(narrator="openai", voice_model="fake-voice", monthly_budget_micros=budget,
                       prices={"fake-voice": voice, "fake-model": Price()})
        async with serve(app, from_own_pages=True) as client:
            story_id = await story_of(client)
            page = (await client.get(f"/stories/{story_id}")).text
        assert ("the budget has no room for it" in page) is closed
        assert (f'action="/stories/{story_id}/narration"' in page) is not closed
