"""Every body read from the provider has a limit, enforced while it is read: a 50 MB
answer is never held whole (the reading stops past the limit and the connection drops)."""

from __future__ import annotations

import html

import httpx2
import pytest

from app.storytelling.capped import BODY_MAX_BYTES, BodyTooLarge
from app.storytelling.capped_transport import CappedTransport
from tests.helpers.app import serve
from tests.helpers.fake_images import HUGE_MB
from tests.helpers.pictures import STORY_TEXT, picture_when, story_of

pytestmark = pytest.mark.anyio


@pytest.mark.slow
async def test_a_50_mb_picture_answer_is_not_read_whole(make_app, fake_llm):
    fake_llm.story = STORY_TEXT
    fake_llm.images.mode = "huge"
    async with serve(make_app(illustrator="openai", image_model="fake-image")) as client:
        story_id = await story_of(client)
        picture = await picture_when(client, story_id)
        page = html.unescape((await client.get(f"/stories/{story_id}")).text)
    assert picture["status"] == "failed"
    assert "The picture could not be drawn: the illustrator sent an unreadable answer." in page
    # The reading stopped near the limit: what the server got out is a fraction of it
    # (its last megabytes were still in flight when the connection dropped).
    assert fake_llm.images.huge_sent_mb < BODY_MAX_BYTES // 2**20 + 8 < HUGE_MB


async def test_a_declared_length_over_the_limit_is_refused_before_reading(fake_llm):
    async with httpx2.AsyncClient(transport=CappedTransport(limit=16)) as client:
        with pytest.raises(BodyTooLarge):
            await client.get(f"{fake_llm.url}/models/fake-model")
