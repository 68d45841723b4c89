"""One story's page: the story (or its JSON), its picture, its narration, its sequels and its
share links.

The story's own URL (app/web/stories.py) and the share forms without htmx
(app/web/shares.py) both answer with it, so it sits below both of them.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.dates import iso_time
from app.errors import NotFound
from app.i18n import N_
from app.shelf.shares import Made, ShareStore
from app.shelf.store import StoredStory
from app.web.inputs import services_of
from app.web.narrations import frame_context, narration_json
from app.web.negotiation import VARY, answers_json
from app.web.pictures import page_frame, picture_json
from app.web.templates import render


def story_json(story: StoredStory) -> dict[str, object]:
    return {
        "story_id": story.id,
        "title": story.title,
        "body": story.body,
        "created_at": iso_time(story.created_at),
        "job_id": story.job_id,
        "prompt": story.request.prompt,
        "child_name": story.request.child_name,
        "age": story.request.age,
        "length": story.request.length,
        "language": story.request.language,
        # A sibling story's second child (null otherwise).
        "sibling_name": story.request.sibling_name,
        "sibling_age": story.request.sibling_age,
    }


async def render_story_page(request: Request, story_id: int, *,
                            new_share: Made | None = None) -> Response:
    """The story page (or JSON); `new_share`: a link just made, shown once."""
    shelf = services_of(request).shelf
    story = await shelf.get_story(story_id)
    if story is None:
        deleted = None if answers_json(request) else await shelf.deleted_story(story_id)
        if deleted is None:
            raise NotFound(N_("There is no story with that number."))
        context = {"page_title": deleted.title, "story": deleted}
        return render(request, "story_deleted.html", context, status_code=404, headers=VARY)
    services = services_of(request)
    picture = await services.pictures.state(story.id)
    narration = await services.narrations.state(story.id)
    if answers_json(request):
        return JSONResponse(story_json(story) | {"picture": picture_json(story.id, picture),
                                                 "narration": narration_json(story.id, narration)},
                            headers=VARY)
    sequels = await shelf.story_sequels(story.id)
    context = {"story": story, "sequels": sequels,
               "picture_frame": await page_frame(request, story.id, story.title, picture),
               "listen": await frame_context(services, story.id, narration),
               **await shares_context(request, story.id, new_share)}
    return render(request, "story.html", context, headers=VARY)


async def shares_context(request: Request, story_id: int,
                         made: Made | None = None) -> dict[str, object]:
    shares = await ShareStore(services_of(request).db).active(story_id)
    return {"share_story_id": story_id, "shares": shares,
            "new_share_url": absolute(request, made.url) if made else None,
            "new_share_id": made.share.id if made else None,
            # Open when the page answers the menu's own form (a link made without htmx).
            "shares_open": made is not None}


def absolute(request: Request, path: str) -> str:
    return str(request.base_url).rstrip("/") + path
