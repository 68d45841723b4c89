"""A new story: POST /stories/generate, from the JSON API or the story form.

JSON: 202 with where to poll the job (a replay answers the same job). The form: with htmx,
202 and the job's card (and the form again, out of band, with a fresh key); without, 303
to the job's page; a field refused re-renders the form with the message beside it (422),
in a family's words (the JSON API's message names the field).

What the form chose (whom the story is for, the story it continues) is read by
app/shelf/story_form.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.errors import AppError, Invalid
from app.queue.intake import Resolver, Submission, parse_idempotency_key
from app.requests import parse_sent
from app.shelf.story_form import read_story_form
from app.stories import Child, StoryRequest
from app.web.cards import job_card
from app.web.form import form_context, remember_form
from app.web.inputs import parse_form, parse_json, read_body, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
from app.web.pages import home_context
from app.web.templates import render

if TYPE_CHECKING:
    from app.services import Services


async def generate(request: Request) -> Response:
    body = await read_body(request)
    if answers_json(request):
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
    sent = parse_sent(data, from_form=from_form)
    then = then or (lambda story_request: story_request)
    if sent.request.child_id is None and sent.request.sibling_id is None:
        return then(sent.request), None

    async def resolve() -> StoryRequest:
        child = await _profile(services, sent.request.child_id, field="child_id")
        sibling = await _profile(services, sent.request.sibling_id, field="sibling_id")
        return then(sent.filled_in(child, sibling))

    return then(sent.request), resolve


async def _profile(services: Services, child_id: int | None, *, field: str) -> Child | None:
    child = None if child_id is None else await services.children.get(child_id)
    if child_id is not None and child is None:
        raise Invalid(f"{field} names no child of this household.", field=field,
                      said="That child's profile was removed. Please choose who the story "
                           "is for.")
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
    services = services_of(request)
    posted = await parse_form(request, body)
    form = await read_story_form(services.shelf, posted)
    values = form.values
    # A refused one-tap story (a profile's button: its child, no chooser) leaves the form as
    # this device had it: its idea is the child's, never moved under "Someone else".
    kept = None if not form.chosen and posted.get("child_id") else values
    try:
        key = parse_idempotency_key(str(posted.get("idempotency_key") or "") or None)
        sent, resolve = sent_request(services, form.sent(), from_form=True, then=form.then)
        submission = await services.intake.submit(key, sent, resolve=resolve)
    except Invalid as error:
        if error.code == "idempotency_key_reused":  # an old page sent again with new words
            notice = "That form was already used. Please tap “Write the story” once more."
            return await _form_again(request, kept, status_code=422, notice=notice)
        field = form.refused_field(error.field)
        if field is None:
            return await _form_again(request, kept, status_code=422, notice=error.message)
        return await _form_again(request, values, status_code=422, errors={field: error.said})
    except AppError as error:
        if error.status_code not in (400, 429, 503):
            raise
        return await _form_again(
            request, kept, status_code=error.status_code, notice=error.message,
            retry_after_s=error.retry_after_s,
        )
    response: Response
    if is_htmx(request):
        # The new card, and (out of band) the form again with a fresh key, ready for the next:
        # what _submitted.html shows, not the home page's cards and shelf.
        context = await form_context(services, form.remembered())
        context["card"] = await job_card(services, submission.job)
        response = render(request, "_submitted.html", context, status_code=202, headers=VARY)
    else:
        response = RedirectResponse(f"/stories/jobs/{submission.job.id}", status_code=303)
    if form.chosen:
        remember_form(response, form.remembered())
    return response


async def _form_again(
    request: Request,
    values: dict[str, str] | None,
    *,
    status_code: int,
    errors: dict[str, str] | None = None,
    notice: str | None = None,
    retry_after_s: int | None = None,
) -> Response:
    """The form, with the input kept and the message beside its field (or above it);
    `values` None: the form as this device last had it."""
    context = await home_context(request, values=values, errors=errors, notice=notice)
    headers = {"Retry-After": str(retry_after_s)} if retry_after_s else {}
    template = "_story_form.html" if is_htmx(request) else "home.html"
    if is_htmx(request):
        # base.html tells htmx to swap 422/429/503 bodies; this one replaces the form.
        headers |= {"HX-Retarget": "#story-form", "HX-Reswap": "outerHTML", **VARY}
    return render(request, template, context, status_code=status_code, headers=headers)
