"""The household's children: their profiles as a page to add, change and remove them, and
the same over JSON.

    GET  /children                 the page (JSON: {"children": [...]})
    POST /children                 add one (form: back to the page; JSON: 201 with it)
    POST /children/{id}            change one, every field (form or JSON: 200 with it)
    POST /children/{id}/delete     remove one (form: back to the page; JSON: 204)
    POST /children/bedtime         the household's bedtime, bedtime=HH:MM (form: back to the
                                   page; JSON: {"bedtime": "18:30"}); Night starts half an
                                   hour before it (app/web/preferences.py)
    POST /children/language        the household's pages' language, language=es (empty:
                                   each browser's own; JSON: {"language": "es" or null})

A story asked for a child copied what it needed, so changing or removing a profile
changes no story already written or waiting. The profiles are an API resource
(app/web/negotiation.py): JSON is the answer unless a browser asks for the page (`Accept:
text/html`), and the body unless it is a form, as these were JSON only before there was a
page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.errors import Invalid, NotFound
from app.i18n import N_
from app.lengths import BY_NAME
from app.shelf.children import CHILD_FIELDS, child_json, parse_child
from app.shelf.household import BEDTIME_EARLIEST, BEDTIME_LATEST, parse_bedtime, parse_language
from app.stories import Child
from app.web.form import LANGUAGE_CHOICES
from app.web.inputs import parse_form, parse_json, path_id, read_body, services_of
from app.web.language import DEVICE_LANGUAGE_COOKIE
from app.web.negotiation import VARY, answers_json
from app.web.templates import render

LENGTH_CHOICES = tuple((length.name, length.label) for length in BY_NAME.values())
NEW = "new"  # the "Add a child" form's name among the page's forms
BEDTIME = "bedtime"  # the bedtime form's
LANGUAGE = "language"  # the household language form's
T = TypeVar("T")


async def children(request: Request) -> Response:
    listed = await services_of(request).children.all()
    if answers_json(request):
        return JSONResponse({"children": [child_json(child) for child in listed]}, headers=VARY)
    return await _page(request)


async def add_child(request: Request) -> Response:
    body = await read_body(request)
    services = services_of(request)
    if answers_json(request):
        added = await services.children.add(parse_child(parse_json(body)))
        return JSONResponse(child_json(added), status_code=201)
    form = await parse_form(request, body)
    try:
        added = await services.children.add(parse_child(form, from_form=True))
    except Invalid as error:
        return await _page(request, failed=NEW, values=form, error=error)
    return RedirectResponse(f"/children#child-{added.id}", status_code=303)


async def update_child(request: Request) -> Response:
    child_id = path_id(request.path_params["child_id"])
    body = await read_body(request)
    services = services_of(request)
    if answers_json(request):
        changed = await services.children.update(child_id, parse_child(parse_json(body)))
        if changed is None:
            raise NotFound(N_("There is no child with that number."))
        return JSONResponse(child_json(changed), headers=VARY)
    form = await parse_form(request, body)
    try:
        changed = await services.children.update(child_id, parse_child(form, from_form=True))
    except Invalid as error:
        return await _page(request, failed=str(child_id), values=form, error=error)
    if changed is None:
        raise NotFound(N_("There is no child with that number."))
    return RedirectResponse(f"/children#child-{child_id}", status_code=303)


async def remove_child(request: Request) -> Response:
    child_id = path_id(request.path_params["child_id"])
    body = await read_body(request)
    if not answers_json(request):
        await parse_form(request, body)  # read (and size-check) the form
    if not await services_of(request).children.remove(child_id):
        raise NotFound(N_("There is no child with that number."))
    if answers_json(request):
        return Response(status_code=204)
    return RedirectResponse("/children", status_code=303)


async def set_bedtime(request: Request) -> Response:
    return await _household_setting(request, BEDTIME, parse_bedtime,
                                    services_of(request).household.set_bedtime,
                                    lambda bedtime: f"{bedtime:%H:%M}")


async def set_language(request: Request) -> Response:
    return await _household_setting(request, LANGUAGE, parse_language,
                                    services_of(request).household.set_language,
                                    lambda language: language)


async def _household_setting(
    request: Request, name: str, parse: Callable[[object], T],
    save: Callable[[T], Awaitable[T]], shown: Callable[[T], object],
) -> Response:
    """One household setting, `name` (its field, its form on the page and its anchor there):
    from JSON, `{name: shown(saved)}`; from the form, back to its place on the page, or the
    page with the message beside the field (422)."""
    body = await read_body(request)
    if answers_json(request):
        data = parse_json(body)
        saved = await save(parse(data.get(name) if isinstance(data, dict) else None))
        return JSONResponse({name: shown(saved)}, headers=VARY)
    form = await parse_form(request, body)
    try:
        await save(parse(form.get(name)))
    except Invalid as error:
        return await _page(request, failed=name, values=form, error=error)
    return RedirectResponse(f"/children#{name}", status_code=303)


async def _page(
    request: Request, *, failed: str | None = None, values: FormData | None = None,
    error: Invalid | None = None,
) -> Response:
    """The page; after a refused form, that form again with what was typed and the message
    beside its field (422)."""
    services = services_of(request)
    listed = await services.children.all()
    stored_bedtime = f"{await services.household.load():%H:%M}"
    typed = {name: str(values.get(name) or "") for name in CHILD_FIELDS} if values else {}
    context = {
        "children": [(child, typed if failed == str(child.id) else _values(child))
                     for child in listed],
        "new_values": typed if failed == NEW else dict.fromkeys(CHILD_FIELDS, ""),
        "failed": failed,
        "bedtime_value": (str(values.get(BEDTIME) or "") if values and failed == BEDTIME
                          else stored_bedtime),
        "bedtime_earliest": f"{BEDTIME_EARLIEST:%H:%M}",
        "bedtime_latest": f"{BEDTIME_LATEST:%H:%M}",
        "error_field": (error.field or "name") if error else None,
        "error": error.message if error else None,
        "lengths": LENGTH_CHOICES,
        "languages": LANGUAGE_CHOICES,
        "language_names": dict(LANGUAGE_CHOICES),
        "household_language": services.household.language or "",
        "device_language": request.cookies.get(DEVICE_LANGUAGE_COOKIE, ""),
        "ui_language_setting": request.app.state.settings.ui_language,
    }
    return render(request, "children.html", context, status_code=422 if error else 200,
                  headers=VARY)


def _values(child: Child) -> dict[str, str]:
    return {"name": child.name, "age": str(child.age or ""), "length": child.length or "",
            "language": child.language or "", "likes": child.likes or "",
            "companions": child.companions or ""}
