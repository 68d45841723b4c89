"""Stories cut short and not finished yet (app/queue/unfinished.py): the list, and taking
one off it.

    GET  /stories/unfinished            {"jobs": [{"job_id", "title", "words", "error",
                                          "error_code", "created_at"}]} (HTML asks for the
                                          library's list; `error` in the request's language)
    POST /stories/jobs/{id}/dismiss     off the lists, nothing deleted (JSON, a form: 303
                                        back, its Undo there, or htmx: the row, saying
                                        so, with its Undo)
    POST /stories/jobs/{id}/undismiss   its Undo: back on the lists (htmx: the row again)

A dismissed story stays in the library (found by its search too) to bring back.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.dates import iso_time
from app.errors import NotFound
from app.i18n import N_
from app.queue.unfinished import Unfinished, UnfinishedStory
from app.stories import parse_id, written_in
from app.web.inputs import local_path, parse_form, path_id, read_body, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
from app.web.spend import stories_closed
from app.web.templates import render

# The home page lists those cut short this recently (all of them are in the library).
HOME_RECENT_S = 24 * 3600
HOME_MAX = 3


def unfinished_json(story: UnfinishedStory) -> dict[str, object]:
    failure = story.job.failure
    return {
        "job_id": story.job.id,
        "title": story.title,
        "words": story.words,
        "error": failure.said if failure is not None else None,
        "error_code": failure.code if failure is not None else None,
        "created_at": iso_time(story.job.created_at),
    }


async def unfinished(request: Request) -> Response:
    if not answers_json(request):
        return RedirectResponse("/stories#unfinished", status_code=303)
    stories = await Unfinished(services_of(request).db).jobs()
    return JSONResponse({"jobs": [unfinished_json(story) for story in stories]}, headers=VARY)


async def unfinished_context(request: Request, *, search: str = "",
                             home: bool = False) -> dict[str, object]:
    """What templates/_unfinished.html shows: the library's list (searched), with those
    dismissed apart, or the home page's recent few; why their Finish is closed, if it is;
    and, after a Dismiss without JavaScript (`?dismissed=ID`), its Undo."""
    services = services_of(request)
    unfinished = Unfinished(services.db)
    found = await unfinished.jobs(
        search=search, within_s=HOME_RECENT_S if home else None,
        limit=HOME_MAX + 1 if home else 50)
    shown = found[:HOME_MAX] if home else found
    dismissed = [] if home else await unfinished.jobs(search=search, dismissed=True)
    model = services.settings.model
    just_dismissed = parse_id(request.query_params.get("dismissed", ""))
    if just_dismissed is not None and not await unfinished.is_dismissed(just_dismissed):
        just_dismissed = None
    return {"unfinished": [(story, written_in(story.job.request, model)) for story in shown],
            # No story can be asked for now: their Finish comes closed, saying why.
            "unfinished_closed": await stories_closed(services) if shown else None,
            "unfinished_dismissed": [(story, written_in(story.job.request, model))
                                     for story in dismissed],
            "unfinished_more": home and len(found) > HOME_MAX,
            "just_dismissed": just_dismissed}


async def home_unfinished(request: Request, shown: set[int]) -> dict[str, object]:
    """The home page's: those cut short lately, besides the jobs `shown` as its cards."""
    context = await unfinished_context(request, home=True)
    listed = context["unfinished"]
    assert isinstance(listed, list)
    return context | {"unfinished": [row for row in listed if row[0].job.id not in shown],
                      "unfinished_back": "/"}


async def job_and_back(request: Request) -> tuple[int, str]:
    """The job a dismiss or its undo names, and the page a form asked to go back to."""
    body = await read_body(request)
    back = ""
    if not answers_json(request):
        back = str((await parse_form(request, body)).get("next") or "")
    return path_id(request.path_params["job_id"]), back


async def dismiss(request: Request) -> Response:
    services = services_of(request)
    job_id, back = await job_and_back(request)
    if not await Unfinished(services.db).dismiss(job_id):
        raise NotFound(N_("There is no story cut short with that number."))
    if answers_json(request):
        return JSONResponse({"job_id": job_id, "dismissed": True}, headers=VARY)
    if is_htmx(request):  # the row, saying so, with its Undo
        context = {"job_id": job_id, "unfinished_back": back}
        return render(request, "_unfinished_dismissed.html", context, headers=VARY)
    return RedirectResponse(with_undo(local_path(back, "/stories"), job_id), status_code=303)


def with_undo(back: str, job_id: int) -> str:
    """The page to go back to, asked to offer the dismissed story's Undo, where the list
    is (`/?dismissed=17#unfinished`)."""
    parts = urlsplit(back)
    query = [(key, value) for key, value in parse_qsl(parts.query) if key != "dismissed"]
    query.append(("dismissed", str(job_id)))
    return urlunsplit(("", "", parts.path, urlencode(query), "unfinished"))


async def undismiss(request: Request) -> Response:
    """Undo a dismiss. A second tap finds it back already: the same answer."""
    services = services_of(request)
    job_id, back = await job_and_back(request)
    story = await Unfinished(services.db).undismiss(job_id)
    if story is None:
        raise NotFound(N_("There is no story cut short with that number."))
    if answers_json(request):
        return JSONResponse({"job_id": job_id, "dismissed": False}, headers=VARY)
    if is_htmx(request):  # the row again, in its place
        context = {"story": story, "language": written_in(story.job.request,
                                                          services.settings.model),
                   "unfinished_back": back, "unfinished_closed": await stories_closed(services)}
        return render(request, "_unfinished_row.html", context, headers=VARY)
    return RedirectResponse(local_path(back, "/stories"), status_code=303)
