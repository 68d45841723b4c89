"""Jobs arranged for a test through the app's own intake, the one way a job is made.

    job = await add_job(store, "key-1", StoryRequest(prompt="a fox"))   # pending

Nothing is faked: it is the intake statement, with the queue bound and the day's limit
set out of reach, so arranging a row never trips them.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

from app.config import Settings
from app.failures import STOPPED, Failure
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


async def started_at_the_provider(settings: Settings, store: JobStore, owner: uuid.UUID,
                                  prompt: str = "an adopted owl") -> tuple[int, str]:
    """A job claimed by `owner`, its story started at the provider with the app's own
    storyteller (LLM_API=responses) and the response id saved with the app's own statement:
    the row as a process leaves it that dies a moment later. Its id and the response's."""
    from app.runtime import make_storyteller

    job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt=prompt), "h")
    assert job is not None and (await store.claim_next(owner)).id == job.id
    storyteller = make_storyteller(replace(settings, llm_api="responses"))
    try:
        response_id = await storyteller.start(job.request, job_id=job.id)
    finally:
        await storyteller.aclose()
    assert await store.save_response_id(job.id, owner, response_id) is not None
    return job.id, response_id


async def cut_short(store: JobStore, prompt: str, words: str, *,
                    error: Failure = STOPPED, **request: object) -> Job:
    """A story job stopped with `words` kept, through the app's own statements (intake,
    claim, fail with the words), as a worker leaves one the family stopped."""
    owner = uuid.uuid4()
    job = await add_job(store, uuid.uuid4().hex, StoryRequest(prompt=prompt, **request), "h")
    assert job is not None
    claimed = await store.claim_next(owner)
    assert claimed is not None and claimed.id == job.id, "another job was waiting"
    assert await store.fail(job.id, owner, error, text_so_far=words)
    failed = await store.get(job.id)
    assert failed is not None
    return failed
