"""Share links: a story for someone outside the household.

    POST /stories/{id}/share                     a new link (JSON: 201 {"share_id", "url",
                                                 "expires_at"}; the page's form: the
                                                 story's shares, with the new link shown)
    GET  /stories/{id}/shares                    {"shares": [...]} that still open
    POST /stories/{id}/shares/{share_id}/revoke  it opens no more (JSON: 204; a form: back)
    GET  /shared/{token}                         the read-only page, no password (and HEAD)
    GET  /shared/{token}/picture                 its picture

The household's three are behind the guard like every page; /shared/ is public in every
mode (app/web/access.py) and holds nothing of the household: no session, no cookie, no
CSRF token, no link into the app, `noindex`, `Referrer-Policy: no-referrer`, and the app's
CSP. Every link that does not open gets the same 404 page, and an address that looks up too
many unknown links waits (its own count: nobody else's reader is held up).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.dates import iso_time
from app.errors import NotFound
from app.i18n import N_
from app.shelf.shares import (
    SHARE_MISS_WINDOW_S,
    SHARE_MISSES_MAX,
    Made,
    Share,
    ShareStore,
    looks_like_a_token,
    shared_url,
)
from app.web.inputs import path_id, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
from app.web.pictures import IMAGE_CSP
from app.web.story_page import render_story_page, shares_context
from app.web.templates import render

# What a page outside the household carries besides the app's own headers.
SHARED_HEADERS = {"X-Robots-Tag": "noindex, nofollow", "Referrer-Policy": "no-referrer",
                  "Cache-Control": "no-store"}


def share_json(share: Share, url: str | None = None) -> dict[str, object]:
    return {"share_id": share.id, "url": url, "created_at": iso_time(share.created_at),
            "expires_at": iso_time(share.expires_at)}


async def make_share(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    services = services_of(request)
    made = await ShareStore(services.db).make(story_id,
                                              days=request.app.state.settings.share_days)
    if made is None:
        raise NotFound(N_("There is no story with that number."))
    if answers_json(request):
        return JSONResponse(share_json(made.share, made.url), status_code=201)
    return await _shares_answer(request, story_id, made)


async def list_shares(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    if await services_of(request).shelf.get_story(story_id) is None:
        raise NotFound(N_("There is no story with that number."))
    shares = await ShareStore(services_of(request).db).active(story_id)
    return JSONResponse({"shares": [share_json(s) for s in shares]}, headers=VARY)


async def revoke_share(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    share_id = path_id(request.path_params["share_id"])
    if not await ShareStore(services_of(request).db).revoke(story_id, share_id):
        raise NotFound(N_("There is no such link to stop."))
    if answers_json(request):
        return Response(status_code=204)
    return await _shares_answer(request, story_id, None)


async def _shares_answer(request: Request, story_id: int, made: Made | None) -> Response:
    """The page's answer: the shares fragment for htmx; else the story page, with a new
    link shown once (its token is kept nowhere: a redirect could not show it)."""
    if is_htmx(request):  # the menu stays open on what was just done
        context = await shares_context(request, story_id, made) | {"shares_open": True}
        return render(request, "_shares.html", context)
    if made is None:
        return RedirectResponse(f"/stories/{story_id}#shares", status_code=303)
    return await render_story_page(request, story_id, new_share=made)


async def shared_page(request: Request) -> Response:
    store = ShareStore(services_of(request).db)
    token = request.path_params["token"]
    client = request.client.host if request.client else "-"
    if await store.misses(client) >= SHARE_MISSES_MAX:  # this address alone waits
        return render(request, "shared_missing.html", {"too_many": True}, status_code=429,
                      headers=SHARED_HEADERS | {"Retry-After": str(SHARE_MISS_WINDOW_S)})
    shared = await store.open(token) if looks_like_a_token(token) else None
    if shared is None:
        await store.count_miss(client)
        return render(request, "shared_missing.html", {}, status_code=404,
                      headers=SHARED_HEADERS)
    picture = shared_url(token) + f"/picture?v={shared.picture_etag[:12]}" \
        if shared.picture_etag else None
    return render(request, "shared.html", {"shared": shared, "picture_src": picture,
                                           "shared_language": shared.language},
                  headers=SHARED_HEADERS)


async def shared_picture(request: Request) -> Response:
    store = ShareStore(services_of(request).db)
    token = request.path_params["token"]
    found = await store.picture(token) if looks_like_a_token(token) else None
    if found is None:
        raise NotFound(N_("There is nothing here."))
    content_type, data, etag = found
    return Response(data, media_type=content_type, headers=SHARED_HEADERS | {
        "ETag": f'"{etag}"', "Content-Security-Policy": IMAGE_CSP,
        "Cache-Control": "private, max-age=86400"})
