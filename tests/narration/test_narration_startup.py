"""The narrator at start-up, as for stories: a server without /audio/speech is named with the
setting that mends it (one WARNING, the home page) and Listen is not offered while it lacks
it (the device's voice reads instead); a VOICE_MODEL whose shutdown is announced is named
with its date."""

from __future__ import annotations

import html
import logging
from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers.app import serve
from tests.helpers.narrations import SHORT_STORY, ask_narration
from tests.helpers.pictures import story_of
from tests.helpers.waits import until

pytestmark = pytest.mark.anyio


def warnings_of(caplog, event: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and f"event={event}" in r.getMessage()]


async def test_a_server_without_audio_speech_is_named_and_listen_is_not_offered(
        make_app, fake_llm, caplog):
    fake_llm.story = SHORT_STORY
    fake_llm.audio.mode = "no_route"
    caplog.set_level(logging.INFO)
    async with serve(make_app(narrator="speech", voice_model="kokoro")) as client:
        await until(lambda: warnings_of(caplog, "endpoint_missing"), "the start-up check")
        home = html.unescape((await client.get("/")).text)
        assert "This storyteller has no /audio/speech (set NARRATOR=off)." in home
        story_id = await story_of(client)
        page = (await client.get(f"/stories/{story_id}")).text
        assert "data-read-aloud" in page and 'class="tool-group listen"' not in page
        refused = await ask_narration(client, story_id)
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "narrations_off"
    [warning] = warnings_of(caplog, "endpoint_missing")
    assert "endpoint=/audio/speech" in warning and "NARRATOR=off" in warning
    assert fake_llm.audio.total_calls() == 0 and "/audio/speech" in fake_llm.probes


async def test_a_voice_model_with_an_announced_shutdown_is_named_with_its_date(
        make_app, fake_llm, caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    shutdown = datetime.now(UTC).date() + timedelta(days=20)
    fake_llm.shutdown_dates = {"fake-voice": shutdown.isoformat()}
    async with serve(make_app(narrator="openai", voice_model="fake-voice")) as client:
        await until(lambda: any("setting=VOICE_MODEL" in w
                                for w in warnings_of(caplog, "model_deprecated")),
                    "the start-up check")
        home = html.unescape((await client.get("/")).text)
    [warning] = [w for w in warnings_of(caplog, "model_deprecated") if "VOICE_MODEL" in w]
    assert f"model=fake-voice shutdown={shutdown.isoformat()}" in warning
    assert "fake-voice" in home and "VOICE_MODEL" in home
    assert "fake-voice" in fake_llm.model_lookups
