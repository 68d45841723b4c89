"""A story job: its status (JSON, its card or its page), stopping it, finishing a story
cut short, and trying a failed one again; and the health check, which counts the queue.

    GET  /stories/jobs/{id}           the job (JSON, the card with HX-Request, else its page)
    POST /stories/jobs/{id}/cancel    stop it
    POST /stories/jobs/{id}/finish    a new job that writes the rest of the words kept
    POST /stories/jobs/{id}/retry     "Try again": a new job with a failed job's request
    GET  /healthz                     the database, the worker and the queue's depth (JSON)
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.dates import iso_time
from app.errors import AppError, NotFound
from app.i18n import N_
from app.queue.control import finishing_request, stop_job
from app.queue.jobs import Job, Status
from app.stories import StoryRequest
from app.version import version
from app.web.cards import RETRY_KEY_PREFIX, job_card, polled_card
from app.web.generate import accepted_json
from app.web.inputs import parse_form, path_id, posted_key, read_body, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
from app.web.pages import newest_besides
from app.web.templates import render

if TYPE_CHECKING:
    pass

HEALTH_DB_TIMEOUT_S = 3.0


def job_json(job: Job) -> dict[str, object]:
    """The job as the JSON API says it: once failed, its `error_code` (which never
    changes) and its `error`, said in the request's language (its Accept-Language)."""
    failure = job.failure
    body: dict[str, object] = {
        "job_id": job.id,
        "status": job.status.value,
        "story_id": job.story_id,
        "error": failure.said if failure is not None else None,
        "error_code": failure.code if failure is not None else None,
        "created_at": iso_time(job.created_at),
        "started_at": iso_time(job.started_at),
        "completed_at": iso_time(job.completed_at),
    }
    if job.status == Status.PENDING:
        body["position"] = job.position
    if job.status in (Status.RUNNING, Status.FAILED):
        body["text_so_far"] = job.text_so_far
    return body


async def job_status(request: Request) -> Response:
    services = services_of(request)
    job_id = path_id(request.path_params["job_id"])
    if answers_json(request):
        job = await services.store.get(job_id)
        if job is None:
            raise NotFound(N_("There is no story job with that number."))
        return JSONResponse(job_json(job), headers=VARY)
    # The story's text in place of its draft: a card polls no more once it shows it.
    card = await polled_card(services, job_id)
    if card is None:
        raise NotFound(N_("There is no story job with that number."))
    context: dict[str, object] = {"card": card}
    if is_htmx(request):
        # Only an unfinished card polls, so the answer showing its story is the first; on
        # the home page the newest stories are sent again (out of band): no longer "No
        # stories yet", and without any story whose card the page may show (this one, and
        # any of the last minutes': a page open all evening keeps its cards whole).
        if card.story and urlsplit(request.headers.get("hx-current-url", "")).path == "/":
            recent = await services.store.recent()
            context |= await newest_besides(services, {job.story_id for job in recent})
            return render(request, "_job_update.html", context, headers=VARY)
        return render(request, "_job_card.html", context, headers=VARY)  # the card alone
    return render(request, "job.html", context, headers=VARY)


async def stop(request: Request) -> Response:
    """Stop a story (app/queue/control.py decides): the job once stopped, or 202 while its
    owner still stops it."""
    services = services_of(request)
    body = await read_body(request)
    if not answers_json(request):
        await parse_form(request, body)  # read (and size-check) the form
    job = await stop_job(services.store, services.worker,
                         path_id(request.path_params["job_id"]))
    if answers_json(request):
        return JSONResponse(job_json(job), status_code=202 if job.status == Status.RUNNING
                            else 200, headers=VARY)
    if is_htmx(request):
        return render(request, "_job_card.html", {"card": await job_card(services, job)},
                      headers=VARY)
    return RedirectResponse(f"/stories/jobs/{job.id}", status_code=303)


async def finish(request: Request) -> Response:
    """Finish a story cut short: a new job whose one call carries the words kept and asks
    the model for the rest (app/queue/control.py's finishing_request)."""
    services = services_of(request)
    key = await posted_key(request)
    job, story_request = await finishing_request(services.store,
                                                 path_id(request.path_params["job_id"]))
    if answers_json(request):
        return accepted_json(await services.intake.submit(key, story_request))
    notice, status_code, headers = None, 202, dict(VARY)
    try:
        job = (await services.intake.submit(key, story_request)).job
    except AppError as error:
        if error.status_code not in (422, 429, 503):
            raise
        notice, status_code = error.message, error.status_code
        if error.retry_after_s:
            headers["Retry-After"] = str(error.retry_after_s)
    if notice is None and not is_htmx(request):
        return RedirectResponse(f"/stories/jobs/{job.id}", status_code=303)
    context = {"card": await job_card(services, job), "notice": notice}
    if is_htmx(request):
        # 200 for a refusal, so htmx swaps it in: the same card, with the sentence on it.
        return render(request, "_job_card.html", context,
                      status_code=202 if notice is None else 200, headers=VARY)
    return render(request, "job.html", context, status_code=status_code, headers=headers)


async def retry(request: Request) -> Response:
    """A new job with the failed job's request: the card in its place, or its page."""
    services = services_of(request)
    await parse_form(request, await read_body(request))  # read (and size-check) the form
    job = await services.store.get(path_id(request.path_params["job_id"]))
    if job is None:
        raise NotFound(N_("There is no story job with that number."))
    notice, status_code, headers = None, 200, dict(VARY)
    # Refused for today, or while the storyteller cannot write: the card offers no "Try
    # again" beside that.
    retry_closed = False
    if job.status == Status.FAILED:
        try:
            submission = await services.intake.submit(f"{RETRY_KEY_PREFIX}{job.id}",
                                                      retry_request(job))
        except AppError as error:
            if error.status_code not in (429, 503):
                raise
            notice, status_code = error.message, error.status_code
            retry_closed = error.code in ("daily_limit_reached", "storyteller_unavailable")
            if error.retry_after_s:
                headers["Retry-After"] = str(error.retry_after_s)
        else:
            job = submission.job
    if notice is None and not is_htmx(request):
        return RedirectResponse(f"/stories/jobs/{job.id}", status_code=303)
    context = {"card": await job_card(services, job), "notice": notice,
               "retry_closed": retry_closed}
    if is_htmx(request):
        # 200, so htmx swaps it in: the failed card again, with the sentence on it.
        return render(request, "_job_card.html", context, headers=VARY)
    return render(request, "job.html", context, status_code=status_code, headers=headers)


def retry_request(job: Job) -> StoryRequest:
    """What a failed job's retry asks: the same wishes. A finish that failed before any
    word of its own ("Try again") carries the same words on, as the finish of this job (a
    story is finished once: the job it finished has its finishing job already); one that
    kept words of its own offers "Finish this story" for those, so "Start it again" begins
    from scratch."""
    if job.request.finish_of is None:
        return job.request
    if job.can_finish:
        return dataclasses.replace(job.request, finish_of=None, carried_text=None)
    return dataclasses.replace(job.request, finish_of=job.id)


async def healthz(request: Request) -> Response:
    services = services_of(request)
    queue_depth: int | None = None
    try:
        # One statement answers both: the database is up, and how many jobs wait in it.
        async with asyncio.timeout(HEALTH_DB_TIMEOUT_S):
            queue_depth = await services.store.count_pending()
        database = "ok"
    except Exception:
        database = "down"
    worker = services.worker_state()  # "stopped" only when it should be running
    healthy = database == "ok" and worker != "stopped"
    body = {
        "status": "ok" if healthy else "unavailable",
        "database": database,
        "worker": worker,
        "queue_depth": queue_depth,
        "version": version(),  # which release answers, for a deployer
    }
    return JSONResponse(body, status_code=200 if healthy else 503)
