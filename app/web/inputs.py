"""Reading a request safely: the body within its limit, then JSON or a form; the key a post
carries; an id in the path; a redirect target that stays on this site; and the services the
lifespan hands in.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from starlette.datastructures import FormData
from starlette.requests import ClientDisconnect, Request
from starlette.types import Message

from app.errors import BadRequest, ClientGone, NotFound, TooLarge
from app.i18n import N_, gettext
from app.queue.intake import parse_idempotency_key
from app.stories import parse_id
from app.web.negotiation import answers_json

if TYPE_CHECKING:  # the lifespan builds them; the handlers only use them
    from app.services import Services

BODY_MAX_BYTES = 16 * 1024
JSON_DEPTH_MAX = 64  # no request of the API nests more than two deep


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def local_path(raw: str, default: str) -> str:
    """A redirect target only if it stays on this site (`/stories`, not `//evil`)."""
    if raw.startswith("/") and not raw.startswith("//") and "\\" not in raw and raw.isascii():
        return raw
    return default


def too_large(limit: int) -> TooLarge:
    """A body past `limit` bytes, refused in the reader's language (a page shows it)."""
    return TooLarge(gettext("The request body must be at most %(kib)s KiB.")
                    % {"kib": limit // 1024})


def path_id(raw: str) -> int:
    """A path's id (app.stories.parse_id), or 404."""
    number = parse_id(raw)
    if number is None:
        raise NotFound(N_("Nothing here by that number."))
    return number


async def read_body(request: Request, limit: int = BODY_MAX_BYTES) -> bytes:
    """The body, refused with 413 as soon as it grows past the limit (before parsing)."""
    declared = request.headers.get("content-length", "")
    if declared.isdecimal() and int(declared) > limit:
        raise too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large(limit)
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
        raise BadRequest(N_("The body is not valid JSON."), code="malformed_json") from None
    # Older Pythons refuse deep nesting with a RecursionError, 3.12 and newer decode it:
    # refuse it alike. Counting brackets (in C) spares the walk for every ordinary body.
    if body.count(b"[") + body.count(b"{") > JSON_DEPTH_MAX and _deeper_than(data, JSON_DEPTH_MAX):
        raise BadRequest(N_("The body is not valid JSON."), code="malformed_json")
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
        raise BadRequest(N_("The form could not be read."), code="malformed_form") from None


async def posted_key(request: Request) -> str:
    """The Idempotency-Key a post for a paid job carries: the header over the JSON API
    (a body, if any, must still be JSON), the form's `idempotency_key` field from a page."""
    body = await read_body(request)
    if answers_json(request):
        key = parse_idempotency_key(request.headers.get("idempotency-key"))
        if body.strip():
            parse_json(body)  # malformed JSON is still refused as such
        return key
    form = await parse_form(request, body)
    return parse_idempotency_key(str(form.get("idempotency_key") or "") or None)
