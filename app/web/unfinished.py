"""Stories cut short and not finished yet (app/queue/unfinished.py): the list, and taking
one off it.

    GET  /stories/unfinished            {"jobs": [{"job_id", "title", "words", "error",
                                          "error_code", "created_at"}]} (HTML asks for the
                                          library's list; `error` in the request's language)
    POST /stories/jobs/{id}/dismiss     off the lists, nothing deleted (JSON, a form: 303
                                        back, or htmx: the row, saying so)
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.dates import iso_time
from app.errors import NotFound
from app.i18n import N_
from app.queue.unfinished import Unfinished, UnfinishedStory
from app.stories import written_in
from app.web.inputs import local_path, parse_form, path_id, read_body, services_of
from app.web.negotiation import VARY, answers_json, is_htmx
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
    """What templates/_unfinished.html shows: the library's list (searched), or the home
    page's recent few."""
    services = services_of(request)
    found = await Unfinished(services.db).jobs(
        search=search, within_s=HOME_RECENT_S if home else None,
        limit=HOME_MAX + 1 if home else 50)
    shown = found[:HOME_MAX] if home else found
    model = services.settings.model
    return {"unfinished": [(story, written_in(story.job.request, model)) for story in shown],
            "unfinished_more": home and len(found) > HOME_MAX}


async def home_unfinished(request: Request, shown: set[int]) -> dict[str, object]:
    """The home page's: those cut short lately, besides the jobs `shown` as its cards."""
    context = await unfinished_context(request, home=True)
    listed = context["unfinished"]
    assert isinstance(listed, list)
    return context | {"unfinished": [row for row in listed if row[0].job.id not in shown],
                      "unfinished_back": "/"}


async def dismiss(request: Request) -> Response:
    services = services_of(request)
    body = await read_body(request)
    back = ""
    if not answers_json(request):
        back = str((await parse_form(request, body)).get("next") or "")
    job_id = path_id(request.path_params["job_id"])
    if not await Unfinished(services.db).dismiss(job_id):
        raise NotFound(N_("There is no story cut short with that number."))
    if answers_json(request):
        return JSONResponse({"job_id": job_id, "dismissed": True}, headers=VARY)
    if is_htmx(request):
        return render(request, "_unfinished_dismissed.html", {"job_id": job_id}, headers=VARY)
    return RedirectResponse(local_path(back, "/stories"), status_code=303)
