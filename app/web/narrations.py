"""A story read aloud: the audio, its place on the page, and asking for it.

    GET  /stories/{id}/narration         the whole narration, one MP3 (an ETag, Range: 206)
    GET  /stories/{id}/narration/frame   the player's place on the page (its poll while read)
    POST /stories/{id}/narration         read it aloud: 202 {"job_id"} (the first part's job);
                                         the same key again, the same job; 409 while a part
                                         is read; 200 {"job_id"} when it is whole already
                                         (the job that read its first part; null: imported)

Phones play and seek audio by asking for byte ranges, and the service worker answers those
from its copy offline, so every answer says `Accept-Ranges: bytes`: one range gets 206 with
its `Content-Range`, a range past the end 416 (`Content-Range: bytes */<length>`), several
ranges or an `If-Range` that no longer matches the whole file (200).
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.errors import Conflict, NotFound
from app.i18n import N_, gettext
from app.money.ledger import Ledger
from app.narrating.parts import parts
from app.queue.jobs import NarrationState, PictureStatus
from app.storytelling.endpoints import SPEECH
from app.web.assets import etag_matches
from app.web.inputs import path_id, posted_key, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
from app.web.pictures import picture_url
from app.web.templates import render

if TYPE_CHECKING:  # built by the lifespan, handed in
    from app.services import Services

YEAR_S = 365 * 24 * 3600
VERSION_CHARS = 12
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


def narration_url(story_id: int, state: NarrationState | None) -> str | None:
    """The narration's URL, versioned (None: not whole yet)."""
    if state is None or not state.whole or not state.etag:
        return None
    return f"/stories/{story_id}/narration?v={state.etag[:VERSION_CHARS]}"


def narration_json(story_id: int, state: NarrationState | None) -> dict[str, object] | None:
    """The story JSON's "narration": null when none was ever asked for."""
    if state is None or state.status is None:
        return None
    ready = state.status == PictureStatus.READY
    return {"status": state.status.value, "url": narration_url(story_id, state) if ready else None,
            "seconds": round(state.seconds, 2) if ready and state.seconds else None}


def can_narrate(services: Services) -> bool:
    """A narrator, whose server has its endpoint as far as this process knows."""
    return services.narrator is not None and not (
        services.narrator.name == "speech" and services.endpoints.lacks(SPEECH))


async def frame_context(services: Services, story_id: int,
                        state: NarrationState | None) -> dict[str, object]:
    """What `_narration.html` shows: the player, a note while it is read, or Listen; the
    story's title and picture for the lock screen (Media Session)."""
    src = narration_url(story_id, state)
    title = await services.shelf.story_title(story_id) if src else None
    artwork = picture_url(story_id, await services.pictures.state(story_id)) if src else None
    offered = can_narrate(services) and (state is None or state.status in (
        None, PictureStatus.FAILED))
    return {"narration": state, "narration_story_id": story_id, "narration_src": src,
            "title": title, "artwork": artwork, "can_narrate": can_narrate(services),
            "closed": await narration_closed(services, story_id) if offered else None,
            "narration_key": uuid.uuid4().hex}


async def narration_closed(services: Services, story_id: int) -> str | None:
    """Why story `story_id` cannot be read aloud now (the month's budget), or None: what the
    page says in place of Listen, and what an open page's check says (app/web/spend.py)."""
    if services.narrator is not None and not await narration_fits(services, story_id):
        return gettext("Not read aloud this month: the budget has no room for it.")
    return None


async def narration_fits(services: Services, story_id: int) -> bool:
    """Whether the month's budget has room for every part of the story read aloud (asked
    only where Listen would be offered, and only with a budget)."""
    meter = services.meter
    if meter is None or meter.budget_micros is None or services.narrator is None:
        return True
    story = await services.shelf.get_story(story_id)
    if story is None:
        return True
    await meter.ready(meter.voice_model)
    need = sum(meter.narration_set_aside(text) for text in parts(
        story.title, story.body, limit=services.narrator.part_chars))
    return await Ledger(services.db).fits(meter, need)


def byte_range(header: str | None, size: int) -> tuple[int, int] | None | Literal[False]:
    """The one range asked for, as (first, last) inclusive; None: the whole file (no
    header, several ranges, or one not understood); False: not satisfiable."""
    if not header:
        return None
    found = _RANGE.fullmatch(header.strip())
    if found is None:
        return None
    first, last = found.groups()
    if not first and not last:
        return None
    if not first:  # the last N bytes
        if int(last) == 0:
            return False
        return max(size - int(last), 0), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or (last and int(last) < start):
        return False
    return start, end


async def audio(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    found = await services_of(request).narrations.audio(story_id)
    if found is None:
        raise NotFound(N_("This story has not been read aloud."))
    content_type, data, etag = found
    tag = f'"{etag}"'
    current = request.query_params.get("v") == etag[:VERSION_CHARS]
    headers = {"ETag": tag, "Accept-Ranges": "bytes",
               "Cache-Control": f"private, max-age={YEAR_S}, immutable" if current
               else "private, no-cache"}
    if etag_matches(request.headers.get("if-none-match", ""), tag):
        return Response(status_code=304, headers=headers)
    if_range = request.headers.get("if-range")
    wanted = byte_range(request.headers.get("range"), len(data))
    if if_range is not None and if_range.strip() != tag:
        wanted = None  # the file changed since the client's part of it: all of it
    if wanted is False:
        return Response(status_code=416, headers=headers | {
            "Content-Range": f"bytes */{len(data)}"})
    if wanted is None:
        return Response(data, media_type=content_type, headers=headers)
    first, last = wanted
    return Response(data[first:last + 1], status_code=206, media_type=content_type,
                    headers=headers | {"Content-Range": f"bytes {first}-{last}/{len(data)}"})


async def frame(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    services = services_of(request)
    state = await services.narrations.state(story_id)
    if state is None:
        raise NotFound(N_("There is no story with that number."))
    return render(request, "_narration.html",
                  {"listen": await frame_context(services, story_id, state)}, headers=VARY)


async def narrate(request: Request) -> Response:
    services = services_of(request)
    story_id = path_id(request.path_params["story_id"])
    key = await posted_key(request)
    story = await services.shelf.get_story(story_id)
    if story is None:
        raise NotFound(N_("There is no story with that number."))
    if services.narrator is None or not can_narrate(services):
        raise Conflict(N_("Reading aloud with the app's voice is off here (NARRATOR=off)."),
                       code="narrations_off")
    texts = parts(story.title, story.body, limit=services.narrator.part_chars)
    job_id, whole = await services.intake.narrate(story_id, key, texts)  # the budget's door
    if answers_json(request):
        return JSONResponse({"job_id": job_id}, status_code=200 if whole else 202,
                            headers=VARY)
    if is_htmx(request):
        state = await services.narrations.state(story_id)
        return render(request, "_narration.html",
                      {"listen": await frame_context(services, story_id, state)}, headers=VARY)
    return RedirectResponse(f"/stories/{story_id}", status_code=303)
