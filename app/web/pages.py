"""The household's own pages: home and the reading preferences.

    GET  /                            the story form, the jobs being written, the newest stories
    GET  /?like=ID, /?sequel=ID       the form filled in from a story, or for its sequel
    POST /preferences                 theme=auto|dark|light|night, text_size=smaller|larger
                                      (when Night starts by itself: the household's bedtime,
                                      on the Children page, app/web/children.py), language=es
                                      (this device's pages; empty: the household's)

The form itself, and what this device remembers of it: app/web/form.py. A story's actions
are in app/web/stories.py, a job's in app/web/jobs.py.
"""

from __future__ import annotations

import itertools
from datetime import date, datetime
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from app.i18n import UI_LANGUAGES, current
from app.ideas import form_ideas, southern_hemisphere, tonight_idea
from app.shelf.scheduled import backup_notice
from app.shelf.sequels import earlier_story, like_values, sequel_values
from app.storytelling.shutdowns import ModelShutdown
from app.web.cards import JobCard, job_card
from app.web.form import form_context, form_memory, new_form_key, remember_form, remembered_values
from app.web.inputs import local_path, parse_form, read_body, services_of
from app.web.language import DEVICE_LANGUAGE_COOKIE
from app.web.pictures import thumbnails
from app.web.preferences import PREFERENCE_MAX_AGE_S, TEXT_SIZES, THEMES, preferences
from app.web.spend import budget_notes, unpriced_note
from app.web.templates import render
from app.web.unfinished import home_unfinished

if TYPE_CHECKING:  # built by the lifespan, handed in
    from app.services import Services

HOME_NEWEST_STORIES = 4
# The home page's cards of the last few minutes' finished requests, at most (compact; the
# rest are in the library). Unfinished ones are all there.
HOME_FINISHED_CARDS = 3
# Sibling stories are offered for each pair of the first three children (three buttons at
# most); a bigger family picks two by their own buttons' order (the oldest profiles).
SIBLING_PAIRS_FROM = 3


async def home(request: Request) -> Response:
    idea = request.query_params.get("idea", "")
    values = {"prompt": idea} if idea in form_ideas() else await values_like(request)
    context = await home_context(request, values=values)
    response = render(request, "home.html", context)
    # A page restored from the back/forward cache would resend an old key: never cache it.
    response.headers["Cache-Control"] = "no-store"
    # The first time this device sees the chooser, what it shows is kept: a one-tap story
    # asked next (the last request, which the form starts from otherwise) changes nothing.
    if context["child_buttons"] and form_memory(request) is None and values is None:
        shown = context["values"]
        assert isinstance(shown, dict)
        remember_form(response, shown)
    return response


async def values_like(request: Request) -> dict[str, str] | None:
    """`/?like=ID`: the form filled in as story ID was asked for ("Another story like
    this"); `/?sequel=ID`: the same, asking what happens next. None: neither."""
    for name, values_of in (("like", like_values), ("sequel", sequel_values)):
        story = await earlier_story(services_of(request).shelf, request.query_params.get(name, ""))
        if story is not None:
            return values_of(story)
    return None


async def home_cards(services: Services) -> list[JobCard]:
    """The home page's cards, oldest first: a new one comes last (after them, so none of
    them moves), every unfinished job and the last few finished."""
    jobs = await services.store.recent()
    finished = [job.id for job in jobs if job.status.finished][:HOME_FINISHED_CARDS]
    shown = [job for job in jobs if not job.status.finished or job.id in finished]
    return [await job_card(services, job) for job in reversed(shown)]


async def newest_besides(services: Services, shown: set[int | None]) -> dict[str, object]:
    """The home page's newest stories besides those `shown` as its cards (each story once
    on the page), and whether the shelf is empty ("No stories yet")."""
    mine = {story_id for story_id in shown if story_id is not None}
    stories = await services.shelf.list_stories(limit=HOME_NEWEST_STORIES + len(mine))
    newest = [story for story in stories if story.id not in mine][:HOME_NEWEST_STORIES]
    return {"stories": newest, "shelf_empty": not stories,
            "thumbs": await thumbnails(services.pictures, [story.id for story in newest])}


async def home_context(
    request: Request,
    *,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    notice: str | None = None,
) -> dict[str, object]:
    """The home page (and its form), with a fresh idempotency key on every render.

    With no `values`, the form starts from what it last asked for on this device.
    """
    services = services_of(request)
    cards = await home_cards(services)
    form_values = remembered_values(request)
    form_values.update(values or {})
    children = await services.children.all()
    pairs = list(itertools.combinations(children[:SIBLING_PAIRS_FROM], 2))
    # What each one-tap story is about tonight (app/ideas.py): the profile says the rest.
    timezone = request.app.state.settings.tz
    tonight, southern = datetime.now(timezone).date(), southern_hemisphere(timezone)
    told = await services.intake.used_today()  # a second story tonight: another idea
    # Said in the language the story will be written in: the first child's, or for a
    # profile that names none, the page's (the button sends it, so the two agree).
    languages: dict[object, str] = {child.id: child.language or current()
                                    for child in children}
    languages |= {(child.id, sibling.id): languages[child.id] for child, sibling in pairs}
    ideas: dict[object, str] = {
        child.id: tonight_idea([child], tonight, southern=southern, told=told,
                               language=languages[child.id]) for child in children}
    ideas |= {(child.id, sibling.id):
              tonight_idea([child, sibling], tonight, southern=southern, told=told,
                           language=languages[child.id]) for child, sibling in pairs}
    budget = await budget_notes(services)
    # What the storyteller lacks, read at one moment (no await between): the start-up
    # check may learn it while this page is made, and the notices and the closed form
    # must tell the same story.
    cannot_write = services.readiness.closed_because()
    missing_endpoints = services.endpoints.notices
    model_gone = (services.model_availability.notice_model
                  if services.model_availability is not None else None)
    return {
        **await form_context(services, form_values, errors=errors, notice=notice,
                             children=children, used_today=told, budget=budget,
                             cannot_write=cannot_write),
        "page_title": "A story for tonight",
        # One tap each: a plain form with the child's id and a key of its own (a double
        # tap is one story).
        "child_buttons": [(child, new_form_key()) for child in children],
        # And one for each pair of the first few children: a story for both of them.
        "sibling_buttons": [(pair, new_form_key()) for pair in pairs],
        # By a child's id, or a pair's (child's id, sibling's id).
        "one_tap_ideas": ideas,
        "one_tap_languages": languages,
        "jobs": cards,
        # Stories cut short lately and not finished yet, besides those shown as cards.
        **await home_unfinished(request, {card.job.id for card in cards}),
        **await newest_besides(services, {card.job.story_id for card in cards}),
        # The provider no longer offers STORY_MODEL: said above everything else.
        "model_gone": model_gone,
        # Endpoints this server lacks ("this storyteller has no /images/generations ...").
        "missing_endpoints": missing_endpoints,
        # Configured models shutting down within 60 days, or shut down: each with its date.
        "model_shutdowns": model_shutdowns(services, tonight),
        # The last scheduled backup failed (whichever process wrote it): until one succeeds.
        "backup_notice": await backup_notice(services.schedules, request.app.state.settings.tz),
        # 80 % of MONTHLY_BUDGET used: one calm line (GET /spend has the rest); none left:
        # the form says so, closed.
        "budget_note": budget.nearly,
        # With a budget: the models it cannot count (no price), and how to price them.
        "unpriced_note": await unpriced_note(services),
    }


def model_shutdowns(services: Services, today: date) -> list[tuple[ModelShutdown, bool]]:
    """The announced shutdowns the home page names today, each with whether its day has
    come; STORY_MODEL's not while the provider says it is gone (that notice says more)."""
    gone = services.model_availability is not None and services.model_availability.gone
    return [(shutdown, shutdown.passed(today)) for shutdown in services.shutdowns.due(today)
            if not (gone and shutdown.setting == "STORY_MODEL")]


async def set_preferences(request: Request) -> Response:
    """Remember the theme and text size (app.js does both without a round trip)."""
    form = await parse_form(request, await read_body(request))
    current = preferences(request)
    response = RedirectResponse(local_path(str(form.get("next") or ""), "/"), status_code=303)
    theme = form.get("theme")
    if theme in THEMES:
        response.set_cookie("theme", str(theme), max_age=PREFERENCE_MAX_AGE_S, samesite="lax")
    step = {"smaller": -1, "larger": 1}.get(str(form.get("text_size")))
    if step:
        size = min(max(int(str(current["text_size"])) + step, TEXT_SIZES[0]), TEXT_SIZES[-1])
        response.set_cookie("text_size", str(size), max_age=PREFERENCE_MAX_AGE_S, samesite="lax")
    language = form.get("language")
    if language in UI_LANGUAGES:  # this device's own, whatever the household's
        response.set_cookie(DEVICE_LANGUAGE_COOKIE, str(language), max_age=PREFERENCE_MAX_AGE_S,
                            samesite="lax")
    elif language == "":  # the household's again, as on a new device
        response.delete_cookie(DEVICE_LANGUAGE_COOKIE, samesite="lax")
    return response
