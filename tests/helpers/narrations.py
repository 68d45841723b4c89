"""Narrations arranged for a test over HTTP, with the app's fake provider.

    story_id = await story_of(client)                      # written, stored (pictures.py)
    job_id = await ask_narration(client, story_id)        # 202's job id
    narration = await narration_when(client, story_id)    # the story JSON's "narration",
                                                          # once ready or failed
"""

from __future__ import annotations

import asyncio
import time

from tests.helpers.app import ACCEPT_JSON, JSON, new_key
from tests.helpers.waits import WAIT_S

# Three paragraphs of about 3,000 characters each (1,080 words, within a long story's cap):
# three parts for a speech server (4,000 at most), four for Chat Completions' audio (2,500).
SENTENCE = "Moonlight whispered gently across sleepy meadows, wandering slowly homeward."
PARAGRAPH = " ".join([SENTENCE] * 40)
LONG_STORY = "The Fox Who Listened\n\n" + "\n\n".join([PARAGRAPH] * 3)
LONG = {"prompt": "a fox who listens", "length": "long"}
SHORT_STORY = "The Whale Who Hummed\n\nOnce upon a time a whale hummed the sea to sleep."


async def ask_narration(client, story_id: int, key: str | None = None):
    return await client.post(f"/stories/{story_id}/narration", json={},
                             headers={**JSON, "Idempotency-Key": key or new_key()})


async def narration_when(client, story_id: int,
                         statuses: tuple[str, ...] = ("ready", "failed")) -> dict:
    deadline = time.monotonic() + WAIT_S
    while True:
        story = (await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)).json()
        narration = story["narration"]
        if narration is not None and narration["status"] in statuses:
            return narration
        assert time.monotonic() < deadline, f"narration still {narration}"
        await asyncio.sleep(0.05)
