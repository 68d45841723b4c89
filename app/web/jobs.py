"""The HTTP handlers: read the input, call the domain, render JSON, a fragment or a page."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.dates import iso_time
from app.errors import AppError, Conflict, Invalid, NotFound
from app.queue.intake import (
    FIELDS,
    Resolver,
    Submission,
    parse_child_id,
    parse_idempotency_key,
    parse_story_request,
)
from app.queue.jobs import Job, Status
from app.stories import Child, StoryRequest, carried_words

if TYPE_CHECKING:
    from app.services import Services
from app.shelf.sequels import as_sequel, earlier_story
from app.web.cards import job_card, polled_card
from app.web.pages import HOME_NEWEST_STORIES, form_context, home_context
from app.web.responses import (
    VARY,
    is_htmx,
    parse_form,
    parse_json,
    path_id,
    read_body,
    render,
    services_of,
    wants_json,
)

HEALTH_DB_TIMEOUT_S = 3.0
# A stop answers once the job is stopped, if that takes no longer than this (its owner
# closes the stream or cancels at the provider within a second or two); else 202.
STOP_WAIT_S = 3.0
STOP_POLL_S = 0.1


def job_json(job: Job) -> dict[str, object]:
    body: dict[str, object] = {
        "job_id": job.id,
        "status": job.status.value,
        "story_id": job.story_id,
        "error": job.error_text,
        "created_at": iso_time(job.created_at),
        "started_at": iso_time(job.started_at),
        "completed_at": iso_time(job.completed_at),
    }
    if job.status == Status.PENDING:
        body["position"] = job.position
    if job.status in (Status.RUNNING, Status.FAILED):
        body["text_so_far"] = job.text_so_far
    return body


async def generate(request: Request) -> Response:
    body = await read_body(request)
    if wants_json(request):
        return await _generate_json(request, body)
    return await _generate_form(request, body)


async def _generate_json(request: Request, body: bytes) -> Response:
    key = parse_idempotency_key(request.headers.get("idempotency-key"))
    services = services_of(request)
    data = parse_json(body)
    sent, resolve = sent_request(services, data)
    return accepted_json(await services.intake.submit(key, sent, resolve=resolve))


def sent_request(
    services: Services, data: object, *, from_form: bool = False,
    then: Callable[[StoryRequest], StoryRequest] | None = None,
) -> tuple[StoryRequest, Resolver | None]:
    """The request as the client sent it (its hash decides a replay), and, when it names a
    child profile, what makes the job's request from it: filled in from that profile, and
    the sibling's, for a story about both (read only for a new job). `then`: a change made
    to both (a sequel's)."""
    sent = parse_story_request(data, from_form=from_form)
    then = then or (lambda story_request: story_request)
    if sent.child_id is None and sent.sibling_id is None:
        return then(sent), None

    async def resolve() -> StoryRequest:
        child = await _profile(services, data, from_form=from_form, field="child_id")
        sibling = await _profile(services, data, from_form=from_form, field="sibling_id")
        return then(parse_story_request(data, from_form=from_form, child=child,
                                        sibling=sibling))

    return then(sent), resolve


async def _profile(
    services: Services, data: object, *, from_form: bool, field: str
) -> Child | None:
    child_id = parse_child_id(data, from_form=from_form, field=field)
    child = None if child_id is None else await services.children.get(child_id)
    if child_id is not None and child is None:
        raise Invalid(f"{field} names no child of this household.", field=field)
    return child


def accepted_json(submission: Submission) -> JSONResponse:
    """202 for a new job (or the replayed one): where to poll it. 200 for the job that
    finishes a story already, when another finish asks for it again: nothing new."""
    job = submission.job
    headers = {"Location": f"/stories/jobs/{job.id}"}
    if submission.replayed:
        headers["Idempotent-Replayed"] = "true"
    return JSONResponse(
        {"job_id": job.id, "status": job.status.value, "poll_url": f"/stories/jobs/{job.id}"},
        status_code=200 if submission.finished_already else 202,
        headers=headers,
    )


async def _generate_form(request: Request, body: bytes) -> Response:
    form = await parse_form(request, body)
    values = {name: str(form.get(name) or "") for name in FIELDS}
    # "What happens next?": the form names the story it continues (kept on a re-render).
    earlier = await earlier_story(services_of(request).shelf, str(form.get("sequel_of") or ""))
    if earlier is not None:
        values |= {"sequel_of": str(earlier.id), "sequel_title": earlier.title}
    try:
        key = parse_idempotency_key(str(form.get("idempotency_key") or "") or None)
        sent, resolve = sent_request(
            services_of(request),
            {name: value for name, value in values.items() if name in form and name in FIELDS},
            from_form=True,
            then=None if earlier is None else lambda asked: as_sequel(asked, earlier),
        )
        submission = await services_of(request).intake.submit(key, sent, resolve=resolve)
    except Invalid as error:
        if error.code == "idempotency_key_reused":  # an old page sent again with new words
            notice = "That form was already used. Please tap “Write the story” once more."
            return await _form_again(request, values, status_code=422, notice=notice)
        if error.field in ("child_id", "sibling_id"):  # a one-tap button of a profile gone
            return await _form_again(request, values, status_code=422, notice=error.message)
        errors = {error.field or "prompt": error.message}
        return await _form_again(request, values, status_code=422, errors=errors)
    except AppError as error:
        if error.status_code not in (400, 429, 503):
            raise
        return await _form_again(
            request, values, status_code=error.status_code, notice=error.message,
            retry_after_s=error.retry_after_s,
        )
    job = submission.job
    if is_htmx(request):
        # The new card, and (out of band) the form again with a fresh key, ready for the next:
        # what _submitted.html shows, not the home page's cards and shelf.
        remembered = dict.fromkeys(FIELDS, "") | {
            "child_name": values["child_name"], "age": values["age"],
            "length": values["length"] or "medium", "language": values["language"] or "en"}
        context = await form_context(services_of(request), remembered)
        context["card"] = await job_card(services_of(request), job)
        return render(request, "_submitted.html", context, status_code=202, headers=VARY)
    return RedirectResponse(f"/stories/jobs/{job.id}", status_code=303)


async def _form_again(
    request: Request,
    values: dict[str, str],
    *,
    status_code: int,
    errors: dict[str, str] | None = None,
    notice: str | None = None,
    retry_after_s: int | None = None,
) -> Response:
    """The form, with the input kept and the message beside its field (or above it)."""
    context = await home_context(request, values=values, errors=errors, notice=notice)
    headers = {"Retry-After": str(retry_after_s)} if retry_after_s else {}
    template = "_story_form.html" if is_htmx(request) else "home.html"
    if is_htmx(request):
        # base.html tells htmx to swap 422/429/503 bodies; this one replaces the form.
        headers |= {"HX-Retarget": "#story-form", "HX-Reswap": "outerHTML", **VARY}
    return render(request, template, context, status_code=status_code, headers=headers)


async def job_status(request: Request) -> Response:
    services = services_of(request)
    job_id = path_id(request.path_params["job_id"])
    if wants_json(request):
        job = await services.store.get(job_id)
        if job is None:
            raise NotFound("There is no story job with that number.")
        return JSONResponse(job_json(job), headers=VARY)
    # The story's text in place of its draft: a card polls no more once it shows it.
    card = await polled_card(services, job_id)
    if card is None:
        raise NotFound("There is no story job with that number.")
    context: dict[str, object] = {"card": card}
    if is_htmx(request):
        # Only an unfinished card polls, so the answer showing its story is the first; on
        # the home page the newest stories gain it too (out of band), without a reload.
        if card.story and urlsplit(request.headers.get("hx-current-url", "")).path == "/":
            context["stories"] = await services.shelf.list_stories(limit=HOME_NEWEST_STORIES)
            return render(request, "_job_update.html", context, headers=VARY)
        return render(request, "_job_card.html", context, headers=VARY)  # the card alone
    return render(request, "job.html", context, headers=VARY)


async def stop(request: Request) -> Response:
    """Stop a story: a waiting job never goes to the model; a running one is stopped by
    its owner, wherever it runs (answered once it is, or 202 while it still is)."""
    services = services_of(request)
    body = await read_body(request)
    if not wants_json(request):
        await parse_form(request, body)  # read (and size-check) the form
    job_id = path_id(request.path_params["job_id"])
    if not await services.store.cancel_pending(job_id):
        if not await services.store.request_cancel(job_id):
            job = await services.store.get(job_id)
            if job is None:
                raise NotFound("There is no story job with that number.")
            if job.status.finished:
                raise Conflict("This story is finished already: there is nothing to stop.",
                               code="job_finished")
        else:  # if this process writes it, stop it now rather than at the NOTIFY
            services.worker.stop_requested(job_id)
    job = await _when_stopped(services, job_id)
    if wants_json(request):
        return JSONResponse(job_json(job), status_code=202 if job.status == Status.RUNNING
                            else 200, headers=VARY)
    if is_htmx(request):
        return render(request, "_job_card.html", {"card": await job_card(services, job)},
                      headers=VARY)
    return RedirectResponse(f"/stories/jobs/{job.id}", status_code=303)


async def _when_stopped(services: Services, job_id: int) -> Job:
    """The job once it is no longer running, or as it stands after STOP_WAIT_S."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_WAIT_S
    while True:
        job = await services.store.get(job_id)
        if job is None:
            raise NotFound("There is no story job with that number.")
        if job.status != Status.RUNNING or loop.time() >= deadline:
            return job
        await asyncio.sleep(STOP_POLL_S)


async def finish(request: Request) -> Response:
    """Finish a story cut short: a new job whose one call carries the words kept and asks
    the model for the rest."""
    services = services_of(request)
    body = await read_body(request)
    if wants_json(request):
        key = parse_idempotency_key(request.headers.get("idempotency-key"))
        if body.strip():
            parse_json(body)  # malformed JSON is still refused as such
    else:
        form = await parse_form(request, body)
        key = parse_idempotency_key(str(form.get("idempotency_key") or "") or None)
    job = await services.store.get(path_id(request.path_params["job_id"]))
    if job is None:
        raise NotFound("There is no story job with that number.")
    carried = carried_words(job.text_so_far) if job.can_finish else None
    if carried is None:
        raise Conflict("This story has nothing to finish: only one cut short, with words "
                       "kept, can be finished.", code="nothing_to_finish")
    story_request = dataclasses.replace(job.request, finish_of=job.id, carried_text=carried)
    if wants_json(request):
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


async def healthz(request: Request) -> Response:
    services = services_of(request)
    queue_depth: int | None = None
    try:
        # One statement answers both: the database is up, and how many jobs wait in it.
        queue_depth = await asyncio.wait_for(services.store.count_pending(), HEALTH_DB_TIMEOUT_S)
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
    }
    return JSONResponse(body, status_code=200 if healthy else 503)


