"""A story's picture: the image, its place on the page while it is drawn, and a redraw.

    GET  /stories/{id}/picture[?size=small]   the image (its own type, an ETag, cached)
    GET  /stories/{id}/picture/frame          its place on the page (the placeholder's poll)
    POST /stories/{id}/picture                draw it (again): 202 {"job_id"}; the same key
                                              again, the same job; 409 while one is drawn

A page links the image with `?v=` (its ETag's start), so a browser keeps it for a year and
a redraw is a new URL; without `v` (or an old one) it is asked for again each time (the ETag
answers 304). An SVG picture is served with a CSP that lets it run nothing, even opened on
its own.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.errors import Conflict, NotFound
from app.i18n import N_, gettext
from app.money.ledger import Ledger
from app.queue.jobs import PictureState, PictureStatus
from app.queue.pictures import PictureStore
from app.storytelling.endpoints import IMAGES
from app.web.assets import etag_matches
from app.web.inputs import path_id, posted_key, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
from app.web.templates import render

if TYPE_CHECKING:  # built by the lifespan, handed in
    from app.services import Services

YEAR_S = 365 * 24 * 3600
VERSION_CHARS = 12
IMAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def picture_url(story_id: int, state: PictureState | None, *, small: bool = False) -> str | None:
    """The picture's URL, versioned (None: no picture yet)."""
    etag = state and (state.small_etag if small else state.etag)
    if not etag:
        return None
    size = "size=small&" if small else ""
    return f"/stories/{story_id}/picture?{size}v={etag[:VERSION_CHARS]}"


def picture_json(story_id: int, state: PictureState | None) -> dict[str, object] | None:
    """The story JSON's "picture": null when none was ever asked for."""
    if state is None or state.status is None:
        return None
    return {"job_id": state.job_id, "status": state.status.value,
            "url": picture_url(story_id, state) if state.status == "ready" else None}


async def thumbnails(pictures: PictureStore, story_ids: list[int]) -> dict[int, str]:
    """{story id: its small picture's URL} for the stories that have one."""
    if not story_ids:
        return {}
    states = await pictures.states(story_ids)
    return {story_id: url for story_id, state in states.items()
            if (url := picture_url(story_id, state, small=True)) is not None}


async def frame_context(services: Services, story_id: int, title: str,
                        state: PictureState | None) -> dict[str, object]:
    """What `_picture.html` shows: the picture, its placeholder, or Draw a picture (closed,
    saying why, when the month's budget has no room for one: asked only where the button
    would show, so a poll of a drawn picture costs no query)."""
    drawable = can_draw(services)
    offered = drawable and (state is None or state.status in (None, PictureStatus.FAILED))
    return {"picture": state, "picture_story_id": story_id, "picture_title": title,
            "picture_src": picture_url(story_id, state), "can_draw": drawable,
            "closed": await pictures_closed(services) if offered else None,
            "picture_key": uuid.uuid4().hex}


def can_draw(services: Services) -> bool:
    """An illustrator, whose server has the Images API as far as this process knows."""
    return services.illustrator is not None and not services.endpoints.lacks(IMAGES)


async def pictures_closed(services: Services) -> str | None:
    """Why no picture can be drawn again now (the month's budget), or None: what the page
    says in place of Draw a picture, and what an open page's check says (app/web/spend.py)."""
    if (can_draw(services) and services.meter is not None
            and not await Ledger(services.db).picture_fits(services.meter)):
        return gettext("No more pictures this month: the budget has no room for one.")
    return None


async def page_frame(request: Request, story_id: int, title: str,
                     state: PictureState | None) -> dict[str, object]:
    return await frame_context(services_of(request), story_id, title, state)


async def image(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    small = request.query_params.get("size") == "small"
    found = await services_of(request).pictures.image(story_id, small=small)
    if found is None:
        raise NotFound(N_("This story has no picture."))
    content_type, data, etag = found
    tag = f'"{etag}"'
    current = request.query_params.get("v") == etag[:VERSION_CHARS]
    headers = {"ETag": tag, "Content-Security-Policy": IMAGE_CSP,
               "Cache-Control": f"private, max-age={YEAR_S}, immutable" if current
               else "private, no-cache"}
    if etag_matches(request.headers.get("if-none-match", ""), tag):
        return Response(status_code=304, headers=headers)
    return Response(data, media_type=content_type, headers=headers)


async def frame(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    services = services_of(request)
    state = await services.pictures.state(story_id)
    title = await services.shelf.story_title(story_id)
    if state is None or title is None:
        raise NotFound(N_("There is no story with that number."))
    return render(request, "_picture.html",
                  {"frame": await page_frame(request, story_id, title, state)}, headers=VARY)


async def redraw(request: Request) -> Response:
    services = services_of(request)
    story_id = path_id(request.path_params["story_id"])
    key = await posted_key(request)
    title = await services.shelf.story_title(story_id)
    if title is None:
        raise NotFound(N_("There is no story with that number."))
    if services.illustrator is None:
        raise Conflict(N_("Pictures are turned off here (ILLUSTRATOR=off)."), code="pictures_off")
    job = await services.intake.redraw(story_id, key)  # the budget's door
    if answers_json(request):
        return JSONResponse({"job_id": job.id}, status_code=202, headers=VARY)
    if is_htmx(request):
        state = await services.pictures.state(story_id)
        return render(request, "_picture.html",
                      {"frame": await page_frame(request, story_id, title, state)}, headers=VARY)
    return RedirectResponse(f"/stories/{story_id}", status_code=303)
