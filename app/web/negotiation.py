"""JSON or HTML: the one rule for every route, its refusals and errors included.

    if answers_json(request): return JSONResponse(...)
    return render(request, "job.html", {"job": job})

Every address serves one of two kinds of resource, and answers in its own kind unless the
request names the other one:

- a **page** (every address but those below) answers HTML, and JSON when the request
  names JSON: `Accept: application/json` on a GET or HEAD, a JSON body (`Content-Type:
  application/json`) on any other method. So curl's `GET /stories` (`Accept: */*`) gets
  the library page, and a script asks for `{"stories": [...]}`.
- an **API resource** (`API_RESOURCES`: the child profiles, the stories not finished yet
  and the health check) answers
  JSON, and HTML when the request names HTML: `Accept: text/html` on a GET or HEAD, a form
  body on any other method. The profiles were JSON only before they had a page, so a
  script written then (curl's `Accept: */*`, a body with no form type) still gets JSON; the
  health check has no page at all. A browser names HTML in every navigation and form.

An error goes by the same rule, at the address it was asked of, with one addition: a
client that takes no HTML at all (its Accept names neither text/html nor */*) gets the
error as JSON, since a page is no use to it. The middleware's refusals (app/web/access.py)
are errors too.

Media types are compared without regard to case (RFC 9110). One address answers a page, a
fragment (`HX-Request`) or JSON, so caches must key on both headers (`VARY`).
"""

from __future__ import annotations

from starlette.requests import Request

# Addresses, with everything below them, that answer JSON unless HTML is named.
API_RESOURCES = ("/children", "/healthz", "/stories/unfinished")
FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")
JSON = "application/json"
VARY = {"Vary": "Accept, HX-Request"}


def answers_json(request: Request) -> bool:
    """Whether this request is answered in JSON (else HTML): in its address's own kind,
    unless it names the other. A page (most addresses) answers HTML unless a GET accepts
    application/json or another method sends a JSON body; an API resource (`API_RESOURCES`)
    answers JSON unless a GET accepts text/html or another method sends a form."""
    api = is_api_resource(request.scope["path"])
    if request.method in ("GET", "HEAD"):
        accept = request.headers.get("accept", "").lower()
        return "text/html" not in accept if api else JSON in accept
    body = media_type(request)
    return body not in FORMS if api else body == JSON


def error_as_json(request: Request) -> bool:
    """Whether an error (or a refusal) is answered in JSON: by the rule, or because the
    client takes no HTML."""
    return answers_json(request) or not takes_html(request)


def is_api_resource(path: str) -> bool:
    return any(path == root or path.startswith(root + "/") for root in API_RESOURCES)


def takes_html(request: Request) -> bool:
    accept = request.headers.get("accept", "").lower()
    return not accept or "text/html" in accept or "*/*" in accept


def media_type(request: Request) -> str:
    """The body's media type, without its parameters (`application/json; charset=utf-8`)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"
