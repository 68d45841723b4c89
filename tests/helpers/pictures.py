"""Pictures arranged for a test with the app's own statements: a story written and stored
by Storing (its picture job made with it, when `pictures` is given), and a picture drawn.

    job_id, story_id = await stored_story(JobStore(db), PictureStore(db))

And over HTTP, with the app's fake provider:

    story_id = await story_of(client, {"prompt": "a humming whale"})   # written, stored
    picture = await picture_when(client, story_id)    # the story JSON's "picture", once
                                                      # it is ready or failed
"""

from __future__ import annotations

import asyncio
import time
import uuid

from app.queue.pictures import Drawn, PictureStore
from app.queue.store import JobStore
from app.queue.storing import Storing
from app.queue.writing import Writing
from app.stories import Story, StoryRequest
from tests.helpers.app import ACCEPT_JSON, post_story, wait_for_job
from tests.helpers.fake_images import small_image
from tests.helpers.jobs import add_job
from tests.helpers.waits import WAIT_S

BOOT = uuid.uuid4()
STORY = Story(title="The Sleepy Whale", body="Once upon a time, by the sea.", model="fake")
REQUEST = StoryRequest(prompt="a whale", child_name="Mia", age=5, length="short",
                       likes="boats, the colour blue")
DRAWN = Drawn(small_image(), "image/webp", small_image(size=(24, 16)), "image/webp", "fake-image")


async def stored_story(store: JobStore, pictures: PictureStore | None) -> tuple[int, int]:
    """A story written and stored by the app's own Storing: (its job, its story)."""
    job = await add_job(store, uuid.uuid4().hex, REQUEST)
    claimed = await store.claim_next(BOOT)
    assert job is not None and claimed is not None and claimed.id == job.id
    stored = await Storing(store, BOOT, pictures=pictures).store(Writing(claimed), STORY)
    assert stored is not None
    return job.id, stored[0]


STORY_TEXT = "The Whale Who Hummed\n\nOnce upon a time a whale hummed the sea to sleep."


async def story_of(client, body: dict | None = None) -> int:
    job = (await post_story(client, body)).json()
    done = await wait_for_job(client, job["job_id"])
    assert done["status"] == "completed", done
    return done["story_id"]


async def picture_when(client, story_id: int, statuses: tuple[str, ...] = ("ready", "failed"),
                       ) -> dict:
    deadline = time.monotonic() + WAIT_S
    while True:
        story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        picture = story["picture"]
        if picture is not None and picture["status"] in statuses:
            return picture
        assert time.monotonic() < deadline, f"picture still {picture}"
        await asyncio.sleep(0.05)
