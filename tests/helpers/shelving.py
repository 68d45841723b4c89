"""Stories put on the shelf directly, as the worker leaves them, for the shelf's tests.

    story_id = await shelve(store, "owl", title="Hoot", prompt="a sleepy owl", child_name="Mia")
    await shelve_many(db, 3000, rare_word="owl", every=500)
"""

from __future__ import annotations

import uuid

from app.db import Pool
from app.queue.store import JobStore
from app.stories import Story, StoryRequest
from tests.helpers.jobs import add_job
from tests.helpers.sql import execute

SHELVER = uuid.uuid4()  # the worker these stories' jobs were claimed by


async def shelve(
    store: JobStore,
    key: str,
    *,
    title: str = "A Story",
    prompt: str = "a kind moon",
    child_name: str | None = None,
    age: int | None = None,
    length: str = "medium",
    body: str = "Once upon a time. The end.",
    sequel_of: int | None = None,
    language: str = "en",
) -> int:
    """A completed job and its story; the story's id."""
    request = StoryRequest(prompt=prompt, child_name=child_name, age=age, length=length,
                           sequel_of=sequel_of, previously="before" if sequel_of else None,
                           language=language)
    # One transaction: a running app's worker never sees the job pending, so never runs it.
    async with store.db.transaction() as connection:
        job = await add_job(JobStore(connection), key, request, key)
        assert job is not None
        await execute(connection,
            "UPDATE story_jobs SET status = 'running', started_at = now(), heartbeat_at = now(),"
            " claimed_by = :boot WHERE id = :id", {"id": job.id, "boot": SHELVER},
        )
    story_id = await store.insert_story(job.id, SHELVER, Story(title=title, body=body, model="m"))
    assert story_id is not None and await store.complete(job.id, SHELVER, story_id)
    return story_id


async def shelve_many(db: Pool, count: int, *, rare_word: str = "", every: int = 0) -> None:
    """`count` stories at once (a year of bedtimes), each a minute older than the last;
    every `every`-th one is about `rare_word`, the others about sheep."""
    await execute(db,
        "INSERT INTO story_jobs (idempotency_key, request_hash, prompt, child_name, length,"
        "                        status, created_at, started_at, heartbeat_at, claimed_by)"
        " SELECT 'bulk-' || n, 'h',"
        "        CASE WHEN :every > 0 AND n % :every = 0 THEN 'a story about ' || :rare_word"
        "             ELSE 'counting sheep ' || n END,"
        "        'Child' || (n % 7), 'short', 'running', now() - make_interval(mins => n),"
        "        now(), now(), gen_random_uuid()"
        "   FROM generate_series(1, :count) AS n",
        {"count": count, "every": every, "rare_word": rare_word},
    )
    await execute(db,
        "INSERT INTO stories (job_id, title, body, model, created_at)"
        " SELECT id, 'Night ' || id, 'Once upon a time there was a field of sheep.', 'm',"
        "        created_at"
        "   FROM story_jobs WHERE status = 'running' AND idempotency_key LIKE 'bulk-%'"
    )
    await execute(db,
        "UPDATE story_jobs j SET status = 'completed', story_id = s.id, completed_at = now()"
        "  FROM stories s WHERE s.job_id = j.id AND j.status = 'running'"
    )
