"""Jobs arranged for a test through the app's own intake, the one way a job is made.

    job = await add_job(store, "key-1", StoryRequest(prompt="a fox"))   # pending

Nothing is faked: it is the intake statement, with the queue bound and the day's limit
set out of reach, so arranging a row never trips them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.queue.jobs import Job
from app.queue.store import JobStore
from app.stories import StoryRequest

BEFORE_ANY_JOB = datetime(2000, 1, 1, tzinfo=UTC)  # counts every job as "today's"
OUT_OF_REACH = 1_000_000


async def add_job(store: JobStore, key: str, request: StoryRequest,
                  request_hash: str = "hash") -> Job | None:
    """(new) -> pending; None when the key has a job already (a replay)."""
    result = await store.intake(key, request_hash, request, since=BEFORE_ANY_JOB,
                                queue_max=OUT_OF_REACH, daily_limit=OUT_OF_REACH)
    return None if result.replayed else result.job
