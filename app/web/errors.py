"""How an error is answered: every refusal is an AppError raised below the handlers and
turned into a response here, in one place, so the JSON error shape and the friendly pages
cannot drift apart. JSON or a page is chosen by the one rule (app/web/negotiation.py).

Its message is said in the request's language, the JSON API's as its pages' are: a message
marked N_ is translated here; one with values in it was translated before they were put in
(gettext at the raise, which speaks the request's language: app/web/language.py chooses the
JSON API's from Accept-Language alone). The code never changes.
"""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.errors import AppError, ClientGone, NotFound, Unavailable
from app.i18n import N_, gettext
from app.logs import log
from app.web.negotiation import error_as_json
from app.web.templates import render

DATABASE_RETRY_AFTER_S = 5
UNAVAILABLE_RETRY_AFTER_S = 5  # a 503 that names no wait of its own
REFRESH_MAX_S = 60  # the longest a 503 page waits before it reloads itself


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"code": code, "message": message}}


def error_response(request: Request, error: AppError) -> Response:
    """The error as JSON or as a friendly page.

    A 503 always says when to come back (`Retry-After`), and its page, fetched with a GET,
    comes back by itself (a meta refresh), so a database blip heals without a tap. A POST's
    page does not: a refresh would reload its address with a GET.
    """
    retry_after_s = error.retry_after_s
    if retry_after_s is None and error.status_code == 503:
        retry_after_s = UNAVAILABLE_RETRY_AFTER_S
    headers = {} if retry_after_s is None else {"Retry-After": str(retry_after_s)}
    if error_as_json(request):
        message = gettext(error.message) if error.message else ""  # "": no catalogue header
        return JSONResponse(error_body(error.code, message), status_code=error.status_code,
                            headers=headers)
    refresh_s = None
    if error.status_code == 503 and request.method in ("GET", "HEAD") and retry_after_s:
        refresh_s = min(retry_after_s, REFRESH_MAX_S)
    return render(
        request,
        "error.html",
        {"error": error, "page_title": N_("Something is not right"), "refresh_s": refresh_s},
        status_code=error.status_code,
        headers=headers,
    )


async def handle_app_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppError)
    if isinstance(exc, ClientGone):
        log("client_disconnected", path=request.url.path, method=request.method)
        return Response(status_code=exc.status_code)
    return error_response(request, exc)


async def handle_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        error: AppError = NotFound(gettext("Nothing here by that address."))
    else:
        error = AppError(exc.detail, code="method_not_allowed" if exc.status_code == 405 else None)
        error.status_code = exc.status_code
    response = error_response(request, error)
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


async def handle_database_down(request: Request, exc: Exception) -> Response:
    log("database_unavailable", level=logging.WARNING, path=request.url.path, error=repr(exc))
    return error_response(
        request,
        Unavailable(
            gettext("The story shelf can't be reached right now; please try again in a "
                    "moment."),
            retry_after_s=DATABASE_RETRY_AFTER_S,
        ),
    )


async def handle_unexpected(request: Request, exc: Exception) -> Response:
    log("unexpected_error", level=logging.ERROR, path=request.url.path, error=repr(exc),
        exc_info=exc)
    error = AppError(gettext("Something went wrong on our side."), code="internal_error")
    error.status_code = 500
    return error_response(request, error)
