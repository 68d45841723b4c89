"""A waiting job's card tells the truth about the line: next with a worker free, it says
"Starting…", even when that worker has claimed it since the card's job was read (the
answer to a story's request is often made just then); behind a running job, its place
(tests/web/test_pages.py)."""

from __future__ import annotations

import dataclasses

import anyio
import pytest

from app.queue.jobs import Status
from app.web.cards import job_card
from tests.helpers.app import serve
from tests.helpers.forms import job_id_of, submit

pytestmark = pytest.mark.anyio


@pytest.mark.slow
async def test_a_next_job_claimed_as_its_card_is_made_says_starting(make_app, fake_llm):
    app = make_app()
    async with serve(app, from_own_pages=True) as client:
        fake_llm.hold()
        try:
            job_id = job_id_of(await submit(client))
            await anyio.to_thread.run_sync(fake_llm.wait_for_call, job_id)  # claimed
            services = app.state.services
            job = await services.store.get(job_id)
            assert job is not None and job.status == Status.RUNNING
            # The job as the request's answer read it, a moment before the worker took it.
            as_read = dataclasses.replace(job, status=Status.PENDING, position=1,
                                          started_at=None)
            card = await job_card(services, as_read)
        finally:
            fake_llm.release()
    assert (card.running, card.slots) == (0, 1)  # nothing else is being written
    assert card.starts_now  # "Starting…", not "Number 1 in line"
