"""The household's pages that have no JSON twin: home, retry, favourites, delete, preferences.

    GET  /                            the story form, the jobs being written, the newest stories
    POST /stories/jobs/{id}/retry     "Try again": a new job with a failed job's request
    POST /stories/{id}/favourite      mark or unmark (favourite=1|0)
    POST /stories/{id}/delete         take a story off the shelf (undo: app/shelf/routes.py)
    GET  /?like=ID, /?sequel=ID       the form filled in from a story, or for its sequel
    POST /preferences                 theme=auto|dark|light|night, text_size=smaller|larger,
                                      night_from=17..23 (the hour Night starts by itself)

Every POST works as a plain form (303 back to a page) and, with htmx, answers with the
fragment that replaces the control, so the pages work the same with JavaScript off.
"""

from __future__ import annotations

import dataclasses
import itertools
import secrets
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from app.errors import AppError, NotFound
from app.queue.intake import FIELDS
from app.queue.jobs import Job, Status
from app.shelf.scheduled import backup_notice
from app.shelf.sequels import earlier_story, like_values, sequel_values
from app.stories import LANGUAGES, StoryRequest
from app.web.cards import RETRY_KEY_PREFIX, job_card
from app.web.responses import (
    NIGHT_FROM_NAMES,
    PREFERENCE_MAX_AGE_S,
    TEXT_SIZES,
    THEMES,
    VARY,
    is_htmx,
    local_path,
    parse_form,
    path_id,
    preferences,
    read_body,
    render,
    services_of,
)

if TYPE_CHECKING:  # built by the lifespan, handed in
    from app.services import Services

# One tap fills the prompt (app.js); without JavaScript each is a link that does the same.
IDEAS = (
    "a brave little dragon",
    "a trip to the moon",
    "a sleepy owl who lost its hoot",
    "a teddy bear's midnight picnic",
    "a whale who sings lullabies",
    "a garden that grows at night",
)
HOME_NEWEST_STORIES = 6
# What a one-tap story for a child profile is about: the profile says the rest (its likes
# are woven in).
ONE_TAP_PROMPT = "a gentle bedtime adventure"
# Sibling stories are offered for each pair of the first three children (three buttons at
# most); a bigger family picks two by their own buttons' order (the oldest profiles).
SIBLING_PAIRS_FROM = 3
# The form's languages, each named in its own language.
LANGUAGE_CHOICES = tuple((tag, own) for tag, (own, _) in LANGUAGES.items())


def new_form_key() -> str:
    return secrets.token_urlsafe(18)


async def home(request: Request) -> Response:
    idea = request.query_params.get("idea", "")
    values = {"prompt": idea} if idea in IDEAS else await values_like(request)
    response = render(request, "home.html", await home_context(request, values=values))
    # A page restored from the back/forward cache would resend an old key: never cache it.
    response.headers["Cache-Control"] = "no-store"
    return response


async def values_like(request: Request) -> dict[str, str] | None:
    """`/?like=ID`: the form filled in as story ID was asked for ("Another story like
    this"); `/?sequel=ID`: the same, asking what happens next. None: neither."""
    for name, values_of in (("like", like_values), ("sequel", sequel_values)):
        story = await earlier_story(services_of(request).shelf, request.query_params.get(name, ""))
        if story is not None:
            return values_of(story)
    return None


async def home_context(
    request: Request,
    *,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    notice: str | None = None,
) -> dict[str, object]:
    """The home page (and its form), with a fresh idempotency key on every render.

    With no `values`, the form starts from the last story's child, age and length.
    """
    services = services_of(request)
    form_values = await remembered_values(request)
    form_values.update(values or {})
    children = await services.children.all()
    return {
        **await form_context(services, form_values, errors=errors, notice=notice),
        "page_title": "A story for tonight",
        # One tap each: a plain form with the child's id and a key of its own (a double
        # tap is one story).
        "child_buttons": [(child, new_form_key()) for child in children],
        # And one for each pair of the first few children: a story for both of them.
        "sibling_buttons": [(pair, new_form_key())
                            for pair in itertools.combinations(children[:SIBLING_PAIRS_FROM], 2)],
        "one_tap_prompt": ONE_TAP_PROMPT,
        "jobs": [await job_card(services, job) for job in await services.store.recent()],
        "stories": await services.shelf.list_stories(limit=HOME_NEWEST_STORIES),
        # The provider no longer offers STORY_MODEL: said above everything else.
        "model_gone": (services.model_availability.notice_model
                       if services.model_availability is not None else None),
        # The last scheduled backup failed (whichever process wrote it): until one succeeds.
        "backup_notice": await backup_notice(services.schedules, request.app.state.settings.tz),
    }


async def form_context(
    services: Services,
    values: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    notice: str | None = None,
) -> dict[str, object]:
    """What the story form alone shows (_story_form.html), with a fresh idempotency key:
    all a fragment that returns the form needs, without the rest of the home page."""
    stories_left = services.intake.stories_left_today(await services.intake.used_today())
    return {
        "form_key": new_form_key(),
        "values": values,
        "errors": errors or {},
        "notice": notice,
        "ideas": IDEAS,
        "languages": LANGUAGE_CHOICES,
        "stories_left": stories_left,
        # At zero the form says so, and when, before anyone types (its button is disabled).
        "limit_note": services.intake.limit_reached()[0] if stories_left == 0 else None,
    }


async def remembered_values(request: Request) -> dict[str, str]:
    last = await services_of(request).store.last_request()
    values = dict.fromkeys(FIELDS, "")
    if last is not None:
        values |= {
            "child_name": last.child_name or "",
            "age": str(last.age) if last.age else "",
            "length": last.length,
            "language": last.language,
        }
    return values


async def retry(request: Request) -> Response:
    """A new job with the failed job's request: the card in its place, or its page."""
    services = services_of(request)
    await parse_form(request, await read_body(request))  # read (and size-check) the form
    job = await services.store.get(path_id(request.path_params["job_id"]))
    if job is None:
        raise NotFound("There is no story job with that number.")
    notice, status_code, headers = None, 200, dict(VARY)
    retry_closed = False  # refused for today: the card offers no "Try again" beside that
    if job.status == Status.FAILED:
        try:
            submission = await services.intake.submit(f"{RETRY_KEY_PREFIX}{job.id}",
                                                      retry_request(job))
        except AppError as error:
            if error.status_code not in (429, 503):
                raise
            notice, status_code = error.message, error.status_code
            retry_closed = error.code == "daily_limit_reached"
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


async def favourite(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    form = await parse_form(request, await read_body(request))
    marked = form.get("favourite") == "1"
    if not await services_of(request).shelf.set_favourite(story_id, marked):
        raise NotFound("There is no story with that number.")
    if is_htmx(request):
        context = {"story": {"id": story_id, "favourite": marked},
                   "back": str(form.get("next") or "")}
        return render(request, "_favourite.html", context, headers=VARY)
    back = local_path(str(form.get("next") or ""), f"/stories/{story_id}")
    return RedirectResponse(back, status_code=303)


async def delete(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    await parse_form(request, await read_body(request))
    services = services_of(request)
    story = await services.shelf.get_story(story_id)
    if story is None or not await services.shelf.delete_story(story_id):
        raise NotFound("There is no story with that number.")
    if is_htmx(request):  # its row, saying so, with an Undo
        return render(request, "_deleted.html", {"story": story}, headers=VARY)
    return RedirectResponse(f"/stories?deleted={story_id}", status_code=303)  # and its Undo


async def set_preferences(request: Request) -> Response:
    """Remember the theme, text size and night hour (app.js does the first two without a
    round trip)."""
    form = await parse_form(request, await read_body(request))
    current = preferences(request)
    response = RedirectResponse(local_path(str(form.get("next") or ""), "/"), status_code=303)
    theme = form.get("theme")
    if theme in THEMES:
        response.set_cookie("theme", str(theme), max_age=PREFERENCE_MAX_AGE_S, samesite="lax")
    night_from = form.get("night_from")
    if night_from in NIGHT_FROM_NAMES:
        response.set_cookie(
            "night_from", str(night_from), max_age=PREFERENCE_MAX_AGE_S, samesite="lax"
        )
    step = {"smaller": -1, "larger": 1}.get(str(form.get("text_size")))
    if step:
        size = min(max(int(str(current["text_size"])) + step, TEXT_SIZES[0]), TEXT_SIZES[-1])
        response.set_cookie("text_size", str(size), max_age=PREFERENCE_MAX_AGE_S, samesite="lax")
    return response


