"""How the app answers: JSON or HTML, errors in the contract's shape, bodies read safely.

    if wants_json(request): return JSONResponse(...)
    return render(request, "job.html", {"job": job})

Every refusal is an AppError raised below the handlers and turned into a response here,
in one place, so the JSON error shape and the friendly pages cannot drift apart.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message

from app.dates import day, iso_time, when
from app.errors import AppError, BadRequest, ClientGone, NotFound, TooLarge, Unavailable
from app.logs import log
from app.queue.jobs import FailReason
from app.stories import paragraphs, parse_id

if TYPE_CHECKING:  # the lifespan builds them; the handlers only use them
    from starlette.templating import Jinja2Templates

    from app.services import Services

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
STATIC_DIR = Path(__file__).resolve().parents[2] / "static"
BODY_MAX_BYTES = 16 * 1024
DATABASE_RETRY_AFTER_S = 5
UNAVAILABLE_RETRY_AFTER_S = 5  # a 503 that names no wait of its own
REFRESH_MAX_S = 60  # the longest a 503 page waits before it reloads itself
JSON_DEPTH_MAX = 64  # no request of the API nests more than two deep
# One URL, a page or a fragment (or JSON): caches must key on both headers.
VARY = {"Vary": "Accept, HX-Request"}
# Reading preferences, kept in cookies that the server reads and app.js writes.
# auto (the default): Night at bedtime (NIGHT_FROM_HOURS to NIGHT_UNTIL_HOUR in the
# household's time zone, or on a device that prefers dark: shelf.js), else Dark.
THEMES = ("auto", "dark", "light", "night")  # night: dimmer and warmer, for reading in bed
NIGHT_FROM_HOURS = range(17, 24)  # the "Night from" choices: 17:00 to 23:00
NIGHT_FROM_NAMES = frozenset(str(hour) for hour in NIGHT_FROM_HOURS)
DEFAULT_NIGHT_FROM_HOUR = 19
NIGHT_UNTIL_HOUR = 7
TEXT_SIZES = range(1, 6)
TEXT_SIZE_NAMES = frozenset(str(size) for size in TEXT_SIZES)
DEFAULT_TEXT_SIZE = 3
PREFERENCE_MAX_AGE_S = 365 * 24 * 3600


class Templates:
    """The templates, made on first use. Start-up does not wait for Jinja2's import (about
    a tenth of it), so a platform's first health check is answered sooner; the lifespan
    warms them in a thread once the app serves, so no page waits either."""

    def __init__(self, make: Callable[[], Jinja2Templates]) -> None:
        self._make = make
        self._made: Jinja2Templates | None = None
        self._lock = threading.Lock()  # the warm-up thread and a first render, at once

    def get(self) -> Jinja2Templates:
        if self._made is None:
            with self._lock:
                if self._made is None:
                    self._made = self._make()
        return self._made


def make_templates(
    timezone: tzinfo = UTC, *, static: Mapping[str, str], inline: Mapping[str, str] | None = None
) -> Jinja2Templates:
    """The templates, with the filters and `static`: {relative name: fingerprinted URL}
    (app/web/assets.py), as in `<link rel="stylesheet" href="{{ static["style.css"] }}">`,
    and `inline`: the small images a page carries in itself, as data: URLs (any other name
    gives its URL, as `static` does)."""
    from starlette.templating import Jinja2Templates  # see Templates

    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    # Templates change only with a deploy, like the static files: no stat() per render.
    templates.env.auto_reload = False
    templates.env.globals["static"] = static
    templates.env.globals["inline"] = {**static, **(inline or {})}
    templates.env.globals["FailReason"] = FailReason
    templates.env.filters["iso"] = iso_time
    templates.env.filters["day"] = lambda moment: day(moment, timezone)
    templates.env.filters["when"] = lambda moment: when(moment, timezone)
    templates.env.filters["paragraphs"] = paragraphs
    return templates


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services




def is_bedtime(now: datetime, night_from_hour: int) -> bool:
    """Whether `now` (in the household's time zone) is in the night hours."""
    return now.hour >= night_from_hour or now.hour < NIGHT_UNTIL_HOUR


def shown_theme(choice: str, now: datetime, night_from_hour: int) -> str:
    """The theme a page is rendered in: the family's choice, or for "auto" the clock's."""
    if choice != "auto":
        return choice
    return "night" if is_bedtime(now, night_from_hour) else "dark"


def preferences(request: Request, now: datetime | None = None) -> dict[str, object]:
    """The reader's theme, text size and night hour from their cookies (automatic,
    middling and 19:00 by default); `theme` is the one shown now, `theme_choice` the
    family's."""
    choice = request.cookies.get("theme", "")
    choice = choice if choice in THEMES else THEMES[0]
    night_from = request.cookies.get("night_from", "")
    night_from_hour = int(night_from) if night_from in NIGHT_FROM_NAMES else DEFAULT_NIGHT_FROM_HOUR
    timezone = request.app.state.settings.tz
    size = request.cookies.get("text_size", "")
    return {
        "theme": shown_theme(choice, now or datetime.now(timezone), night_from_hour),
        "theme_choice": choice,
        "night_from": night_from_hour,
        "night_from_hours": NIGHT_FROM_HOURS,
        "night_until": NIGHT_UNTIL_HOUR,
        "timezone": timezone.key,
        # Compared as text: a cookie of thousands of digits is not worth converting.
        "text_size": int(size) if size in TEXT_SIZE_NAMES else DEFAULT_TEXT_SIZE,
    }


def local_path(raw: str, default: str) -> str:
    """A redirect target only if it stays on this site (`/stories`, not `//evil`)."""
    if raw.startswith("/") and not raw.startswith("//") and "\\" not in raw and raw.isascii():
        return raw
    return default



def wants_json(request: Request) -> bool:
    """JSON for a POST with a JSON body, or a GET that accepts JSON."""
    if request.method in ("GET", "HEAD"):
        return "application/json" in request.headers.get("accept", "")
    return request.headers.get("content-type", "").split(";")[0].strip() == "application/json"


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def render(
    request: Request,
    template: str,
    context: Mapping[str, object] | None = None,
    *,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    templates = request.app.state.templates.get()
    full_context = {
        # A fragment (`_name.html`) lands in a page that has them already.
        **(preferences(request) if not template.startswith("_") else {}),
        **request.app.state.page_context(request),
        **(context or {}),
    }
    response: Response = templates.TemplateResponse(
        request, template, full_context, status_code=status_code, headers=headers
    )
    return response


def path_id(raw: str) -> int:
    """A path's id (app.stories.parse_id), or 404."""
    number = parse_id(raw)
    if number is None:
        raise NotFound("Nothing here by that number.")
    return number


async def read_body(request: Request, limit: int = BODY_MAX_BYTES) -> bytes:
    """The body, refused with 413 as soon as it grows past the limit (before parsing)."""
    declared = request.headers.get("content-length", "")
    if declared.isdecimal() and int(declared) > limit:
        raise TooLarge(f"The request body must be at most {limit // 1024} KiB.")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"The request body must be at most {limit // 1024} KiB.")
            chunks.append(chunk)
    except ClientDisconnect:  # the tab was closed mid-upload: an everyday event, not a bug
        raise ClientGone("The client left before its request arrived.") from None
    return b"".join(chunks)


def parse_json(body: bytes) -> object:
    """The body as JSON, or 400 `malformed_json`.

    Beyond what `json.loads` refuses, this also refuses nesting too deep to decode and
    strings that are not Unicode text: JSON may escape a lone surrogate (`"\\ud800"`),
    which no UTF-8 database column, log line or response could ever carry.
    """
    try:
        data = json.loads(body)
        # Only an escape (\\ud800), or the bytes json.loads lets through as "surrogatepass"
        # (ED A0..BF ..), can spell a lone surrogate: otherwise there is nothing to look for.
        if b"\\u" in body or b"\xed" in body:
            json.dumps(data, ensure_ascii=False).encode()  # UnicodeEncodeError on one
    except (ValueError, RecursionError):  # ValueError includes both Unicode errors
        raise BadRequest("The body is not valid JSON.", code="malformed_json") from None
    # Older Pythons refuse deep nesting with a RecursionError, 3.12 and newer decode it:
    # refuse it alike. Counting brackets (in C) spares the walk for every ordinary body.
    if body.count(b"[") + body.count(b"{") > JSON_DEPTH_MAX and _deeper_than(data, JSON_DEPTH_MAX):
        raise BadRequest("The body is not valid JSON.", code="malformed_json")
    return data


def _deeper_than(data: object, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` deep (walked without recursion)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return False


async def parse_form(request: Request, body: bytes) -> FormData:
    """Starlette's form parser over a body that was already read within the limit.

    Only text fields: the story form has no file input, and a file part would be spooled to
    a temporary file that nothing here ever closes, so it is refused before it is opened.
    """

    async def replay() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        return await Request(request.scope, replay).form(max_files=0)
    except Exception:  # python-multipart's errors for a broken form body
        raise BadRequest("The form could not be read.", code="malformed_form") from None


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
    if wants_json(request) or not accepts_html(request):
        return JSONResponse(
            error_body(error.code, error.message), status_code=error.status_code, headers=headers
        )
    refresh_s = None
    if error.status_code == 503 and request.method in ("GET", "HEAD") and retry_after_s:
        refresh_s = min(retry_after_s, REFRESH_MAX_S)
    return render(
        request,
        "error.html",
        {"error": error, "page_title": "Something is not right", "refresh_s": refresh_s},
        status_code=error.status_code,
        headers=headers,
    )


def accepts_html(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return not accept or "text/html" in accept or "*/*" in accept


async def handle_app_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppError)
    if isinstance(exc, ClientGone):
        log("client_disconnected", path=request.url.path, method=request.method)
        return Response(status_code=exc.status_code)
    return error_response(request, exc)


async def handle_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        error: AppError = NotFound("Nothing here by that address.")
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
            "The story shelf can't be reached right now; please try again in a moment.",
            retry_after_s=DATABASE_RETRY_AFTER_S,
        ),
    )


async def handle_unexpected(request: Request, exc: Exception) -> Response:
    log("unexpected_error", level=logging.ERROR, path=request.url.path, error=repr(exc),
        exc_info=exc)
    error = AppError("Something went wrong on our side.", code="internal_error")
    error.status_code = 500
    return error_response(request, error)
