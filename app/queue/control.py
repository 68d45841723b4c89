"""What the family asks of a job once it is made: stop it, or finish a story cut short.

    job = await stop_job(store, worker, 17)            # the job, stopped (or still stopping)
    job, request = await finishing_request(store, 17)  # and the request that finishes it

Each decides from the job's state and answers the job, or refuses with the domain's
NotFound or Conflict; the handlers in app/web/jobs.py parse, call one of these and render.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Protocol

from app.errors import Conflict, NotFound
from app.finishing import carried_words
from app.i18n import N_
from app.queue.jobs import Job, Status
from app.queue.store import JobStore
from app.stories import StoryRequest
from app.storytelling.shaping import idea_title

# A stop answers once the job is stopped, if that takes no longer than this (its owner
# closes the stream or cancels at the provider within a second or two); else as it stands.
STOP_WAIT_S = 3.0
STOP_POLL_S = 0.1


class StopListener(Protocol):
    def stop_requested(self, job_id: int) -> None: ...


async def stop_job(store: JobStore, worker: StopListener, job_id: int, *,
                   wait_s: float = STOP_WAIT_S) -> Job:
    """Stop a story: a waiting job never goes to the model; a running one is stopped by its
    owner, wherever it runs (this process's worker at once, another's at the NOTIFY).
    Answers the job once it is no longer running, or as it stands after `wait_s`."""
    if not await store.cancel_pending(job_id):
        if await store.request_cancel(job_id):
            worker.stop_requested(job_id)  # if this process writes it, stop it now
        else:
            job = await store.get(job_id)
            if job is None:
                raise NotFound(N_("There is no story job with that number."))
            if job.status.finished:
                raise Conflict(N_("This story is finished already: there is nothing to stop."),
                               code="job_finished")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        job = await store.get(job_id)
        if job is None:
            raise NotFound(N_("There is no story job with that number."))
        if job.status != Status.RUNNING or loop.time() >= deadline:
            return job
        await asyncio.sleep(STOP_POLL_S)


async def finishing_request(store: JobStore, job_id: int) -> tuple[Job, StoryRequest]:
    """A story cut short, and the request of a new job that finishes it: the same wishes,
    with the words kept (up to the last whole sentence) to carry on from."""
    job = await store.get(job_id)
    if job is None:
        raise NotFound(N_("There is no story job with that number."))
    carried = (carried_words(job.text_so_far, idea_title(job.request)) if job.can_finish
               else None)
    if carried is None:
        raise Conflict(N_("This story has nothing to finish: only one cut short, with words "
                       "kept, can be finished."), code="nothing_to_finish")
    return job, dataclasses.replace(job.request, finish_of=job.id, carried_text=carried)
