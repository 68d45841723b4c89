"""The stories: the library, one story, favourites, delete and its undo, downloads.

    GET  /stories                  the library (a page; JSON: {"stories": [...]})
    GET  /stories/{id}             one story to read (a page; JSON: the story)
    POST /stories/{id}/favourite   mark or unmark (favourite=1|0)
    POST /stories/{id}/delete      take a story off the shelf (its Undo: restore)
    GET  /stories/deleted          recently deleted: restore any for 30 days
    POST /stories/{id}/restore     undo a delete (htmx: the row, back in its place)
    GET  /stories/{id}/markdown    one story as a Markdown file
    GET  /stories/backup.zip       every story: Markdown files and stories.json

Every POST works as a plain form (303 back to a page) and, with htmx, answers with the
fragment that replaces the control, so the pages work the same with JavaScript off.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.dates import file_day, iso_time
from app.errors import NotFound
from app.i18n import N_
from app.shelf.backup import export_zip, markdown_name, story_markdown
from app.shelf.store import StoredStory, StorySummary
from app.stories import DELETED_KEEP_S, clean_text, parse_id
from app.web.inputs import local_path, parse_form, path_id, read_body, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
from app.web.pictures import thumbnails
from app.web.story_page import render_story_page
from app.web.templates import render
from app.web.unfinished import unfinished_context

LIBRARY_SEARCH_MAX_CHARS = 100
LIBRARY_PAGES_MAX = 10_000
DELETED_KEEP_DAYS = DELETED_KEEP_S // (24 * 3600)


def parse_page(raw: str) -> int:
    """?page=N: 1 unless it is a sensible page number."""
    if raw.isascii() and raw.isdecimal() and len(raw) <= 5 and 1 <= int(raw) <= LIBRARY_PAGES_MAX:
        return int(raw)
    return 1


def summary_of(story: StoredStory) -> StorySummary:
    """A story as a library row shows it."""
    request = story.request
    return StorySummary(
        id=story.id, job_id=story.job_id, title=story.title, child_name=request.child_name,
        created_at=story.created_at, favourite=story.favourite, prompt=request.prompt,
        age=request.age, length=request.length, words=len(story.body.split()),
        sequel_of=request.sequel_of, sequel_of_title=story.sequel_of_title,
        sibling_name=request.sibling_name, language=request.language, model=story.model,
    )


async def library_page(request: Request) -> Response:
    """The library: search, favourites first, 50 stories a page ("More stories" adds the
    next 50 in place with htmx, or opens the next page without JavaScript)."""
    shelf = services_of(request).shelf
    search = clean_text(request.query_params.get("q", "")).strip()[:LIBRARY_SEARCH_MAX_CHARS]
    page = parse_page(request.query_params.get("page", ""))
    found = await shelf.library(search, page=page)
    more_query = {"q": search, "page": page + 1} if search else {"page": page + 1}
    context: dict[str, object] = {
        "stories": found.stories,
        "thumbs": await thumbnails(services_of(request).pictures,
                                   [story.id for story in found.stories]),
        "search": search,
        "page": page,
        "more_url": f"/stories?{urlencode(more_query)}" if found.more else None,
        # Stories cut short, above the shelf's first page (a search finds them too).
        **(await unfinished_context(request, search=search) if page == 1 else {}),
        "unfinished_back": "/stories",
    }
    if is_htmx(request):
        template = "_library_rows.html" if page > 1 else "_library_list.html"
        return render(request, template, context, headers=VARY)
    # After a delete without JavaScript: the story's Undo, at the top of the library.
    deleted: dict[str, object] | None = None
    deleted_id = parse_id(request.query_params.get("deleted", ""))
    if deleted_id is not None:
        title = await shelf.deleted_story_title(deleted_id)
        if title is not None:
            deleted = {"id": deleted_id, "title": title}
    context |= {
        "page_title": N_("Library"),
        "deleted_count": await shelf.count_recently_deleted(),
        "just_deleted": deleted,
        "just_restored": await _just_restored(request),
    }
    return render(request, "library.html", context, headers=VARY)


async def recently_deleted(request: Request) -> Response:
    stories = await services_of(request).shelf.recently_deleted()
    context = {"page_title": N_("Recently deleted"), "stories": stories,
               "keep_days": DELETED_KEEP_DAYS, "just_restored": await _just_restored(request)}
    return render(request, "deleted.html", context, headers=VARY)


async def _just_restored(request: Request) -> dict[str, object] | None:
    """After a Restore (or Undo) without JavaScript, `?restored=ID`: the story back on
    the shelf, for the page to say so ("Restored: ..."); None otherwise."""
    restored_id = parse_id(request.query_params.get("restored", ""))
    if restored_id is None:
        return None
    title = await services_of(request).shelf.story_title(restored_id)
    return {"id": restored_id, "title": title} if title is not None else None


async def restore(request: Request) -> Response:
    """Undo a delete. A second tap finds the story back already: the same answer."""
    story_id = path_id(request.path_params["story_id"])
    form = await parse_form(request, await read_body(request))
    shelf = services_of(request).shelf
    await shelf.restore_story(story_id)
    story = await shelf.get_story(story_id)
    if story is None:
        raise NotFound(N_("That story cannot be brought back any more."))
    if is_htmx(request):
        return render(request, "_library_row.html", {"story": summary_of(story)}, headers=VARY)
    back = local_path(str(form.get("next") or ""), f"/stories/{story_id}")
    return RedirectResponse(back, status_code=303)


async def favourite(request: Request) -> Response:
    story_id = path_id(request.path_params["story_id"])
    form = await parse_form(request, await read_body(request))
    marked = form.get("favourite") == "1"
    if not await services_of(request).shelf.set_favourite(story_id, marked):
        raise NotFound(N_("There is no story with that number."))
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
        raise NotFound(N_("There is no story with that number."))
    if is_htmx(request):  # its row, saying so, with an Undo
        return render(request, "_deleted.html", {"story": story}, headers=VARY)
    return RedirectResponse(f"/stories?deleted={story_id}", status_code=303)  # and its Undo


async def story_markdown_file(request: Request) -> Response:
    story = await services_of(request).shelf.get_story(path_id(request.path_params["story_id"]))
    if story is None:
        raise NotFound(N_("There is no story with that number."))
    timezone = request.app.state.settings.tz
    return Response(
        story_markdown(story, timezone),
        media_type="text/markdown",
        headers={"Content-Disposition": f'attachment; filename="{markdown_name(story, timezone)}"'},
    )


async def backup_zip(request: Request) -> Response:
    """Every story on the shelf, as `python -m app export` writes it."""
    timezone = request.app.state.settings.tz
    data = await export_zip(services_of(request).shelf, timezone)
    name = f"bedtime-stories-{file_day(datetime.now(UTC), timezone)}.zip"
    return Response(data, media_type="application/zip", headers={
        "Content-Disposition": f'attachment; filename="{name}"',
        "Cache-Control": "no-store",
    })


async def story_page(request: Request) -> Response:
    """A story to read; one deleted lately says so, with its Restore (still a 404, so an
    offline copy of it is dropped too); JSON clients get the plain 404."""
    return await render_story_page(request, path_id(request.path_params["story_id"]))


async def library(request: Request) -> Response:
    shelf = services_of(request).shelf
    if answers_json(request):
        stories = await shelf.list_stories()
        return JSONResponse(
            {
                "stories": [
                    {"story_id": s.id, "title": s.title, "created_at": iso_time(s.created_at)}
                    for s in stories
                ]
            },
            headers=VARY,
        )
    return await library_page(request)
