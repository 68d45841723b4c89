"""Who gets in and what may change things: the middleware applying the Guard over HTTP.

    guard = Guard(settings, secret_key=load_secret_key(settings))
    Starlette(..., middleware=[Middleware(SecurityMiddleware, guard=guard)])

The decisions are app.security's, a module each: the client's address and the host names
(clients.py), the cross-site rule (crosssite.py), sessions and device cookies (sessions.py),
the login limiter (limits.py), CSRF masking (csrf.py), the response headers (headers.py),
all composed by the Guard
(guard.py). This module answers for them: a refusal is a page or JSON by the one rule
(app/web/negotiation.py), as every error is. Signing in is app/web/login.py.

Three modes, chosen by the settings and logged at start-up:

- `password`: HOUSEHOLD_PASSWORD is set. Every page but /login, /healthz, /sw.js, /static/
  and /shared/ needs a signed-in session (pages redirect to /login); the JSON API answers
  401 `unauthorized` unless it has the session or `Authorization: Bearer $API_TOKEN`.
- `loopback`: no password and no ALLOW_OPEN. Only loopback clients that came through no
  proxy are served; anyone else gets 403 (a page saying to set HOUSEHOLD_PASSWORD, or JSON
  `password_required`). /healthz, /sw.js, /static/ and /shared/ are served to everyone.
- `open`: no password, ALLOW_OPEN=1. Everyone is served.

Without a password, a dotted host name not in ALLOWED_HOSTS gets 403 (DNS rebinding).
Every state-changing request (any method but GET, HEAD, OPTIONS) must also pass the
cross-site rule, whatever the mode; `SecurityMiddleware` documents it.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.db import DATABASE_UNAVAILABLE
from app.errors import AppError, Forbidden, Unauthorized
from app.i18n import N_
from app.logs import log
from app.security.crosssite import cross_site_verdict
from app.security.csrf import mask_csrf
from app.security.guard import Guard
from app.security.headers import with_security_headers
from app.security.sessions import SESSION_RENEW_AFTER_S
from app.web.compression import validate_as
from app.web.errors import error_body, error_response, handle_database_down
from app.web.inputs import BODY_MAX_BYTES, parse_form, read_body
from app.web.negotiation import JSON, error_as_json, is_htmx, media_type
from app.web.templates import render

# Served to everyone, in every mode: the health check, and what a browser fetches without
# the session or before signing in (the service worker, the manifest and icons in /static/),
# and a story shared with someone outside the household (/shared/<token>: no session is
# read there, so none is renewed and no cookie is set).
PUBLIC_PATHS = ("/healthz", "/sw.js", "/offline")
PUBLIC_PREFIX = "/static/"
SHARED_PREFIX = "/shared/"
# The static page a browser may show as a page of its own (the offline page) keeps every
# header; scripts, stylesheets and images (our own, never a visitor's) need only nosniff.
DOCUMENT_SUFFIXES = (".html",)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
URL_SAFE = ":/%#?=@[]!$&'()*+,;"  # what RedirectResponse leaves unquoted in a Location


class SecurityMiddleware:
    """Applies the Guard to every HTTP request, and adds the headers to every response.

    Order: the client's address (from a trusted proxy's headers), the loopback rule and
    the host name, the session, the cross-site rule, then the login. A refusal is
    answered here, before any handler runs, so a refused request changes nothing.

    The cross-site rule for a state-changing request: it passes when it carries a valid
    bearer token (a cross-site page cannot attach one); or the cross-site verdict says it
    comes from the app's own origin; or it carries the session's CSRF token (`csrf_token`
    form field or `X-CSRF-Token` header); or it has no provenance headers at all and a
    JSON body: that is curl or a script (the contract's examples), and a browser cannot
    send `Content-Type: application/json` to another site without a CORS preflight, which
    this app never grants. Everything else gets 403 `forbidden`.
    """

    def __init__(self, app: ASGIApp, *, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.guard.clients.resolve(scope)
        request = Request(scope, receive)
        path = scope["path"]  # what request.url.path says, without building the URL
        public = path in PUBLIC_PATHS or path.startswith((PUBLIC_PREFIX, SHARED_PREFIX))
        send = with_security_headers(send, https=scope["scheme"] == "https",
                                     asset=path.startswith(PUBLIC_PREFIX)
                                     and not path.endswith(DOCUMENT_SUFFIXES))

        if not public and self.guard.refused_as_stranger(request):
            await self._stranger_page(request)(scope, receive, send)
            return
        if not public and self.guard.refused_host(request):
            log("host_refused", level=logging.WARNING, host=request.headers.get("host", "-"))
            refusal = Forbidden(N_("This storyteller does not answer to that name: add it to "
                                   "ALLOWED_HOSTS, or set HOUSEHOLD_PASSWORD."))
            await error_response(request, refusal)(scope, receive, send)
            return
        try:
            session = None if public else await self.guard.resolve_session(request)
        except DATABASE_UNAVAILABLE as error:
            await (await handle_database_down(request, error))(scope, receive, send)
            return
        scope.setdefault("state", {})["session"] = session
        body: bytes | None = None
        # /shared/ changes nothing by any method (it answers GET and HEAD, and 405 to the
        # rest): no cross-site rule to pass there.
        if request.method not in SAFE_METHODS and not path.startswith(SHARED_PREFIX):
            allowed, body = await self._same_site(request)
            if not allowed:
                refusal = Forbidden(
                    N_("This request did not come from the storyteller's own pages."))
                log("cross_site_refused", level=logging.WARNING, path=path,
                    origin=request.headers.get("origin", "-"))
                await error_response(request, refusal)(scope, receive, send)
                return
        if (
            self.guard.mode == "password"
            and not public
            and path != "/login"
            and session is None
            and not self.guard.bearer_ok(request)
        ):
            await self._sign_in_first(request)(scope, receive, send)
            return
        if session is not None and session[1] > SESSION_RENEW_AFTER_S:
            send = self._renewing(send, request, session[0])
        if body is not None:
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    async def _same_site(self, request: Request) -> tuple[bool, bytes | None]:
        """(allowed, the body if it had to be read for its csrf_token field)."""
        if self.guard.bearer_ok(request):
            return True, None
        verdict = cross_site_verdict(request)
        if verdict:
            return True, None
        if verdict is None and media_type(request) == JSON:  # a JSON body, not a form
            return True, None
        if self.guard.csrf_ok(request, request.headers.get("x-csrf-token")):
            return True, None
        content_type = request.headers.get("content-type", "").split(";")[0].strip()
        if content_type != "application/x-www-form-urlencoded" or self.guard.mode != "password":
            return False, None
        try:
            body = await read_body(request, BODY_MAX_BYTES)
            form = await parse_form(request, body)
        except AppError:
            return False, None
        return self.guard.csrf_ok(request, str(form.get("csrf_token") or "")), body

    def _stranger_page(self, request: Request) -> Response:
        message = (
            "This storyteller only answers on this computer until a household password "
            "is set: set HOUSEHOLD_PASSWORD and restart it."
        )
        if error_as_json(request):
            return JSONResponse(error_body("password_required", message), status_code=403)
        return render(request, "open_refused.html", {"page_title": N_("Set a password first")},
                      status_code=403)

    def _sign_in_first(self, request: Request) -> Response:
        if error_as_json(request):
            return error_response(request, Unauthorized(
                N_("Sign in first: send Authorization: Bearer <API_TOKEN>.")
            ))
        target = "/login" + (f"?next={request.url.path}" if request.url.path != "/" else "")
        if is_htmx(request):  # htmx follows HX-Redirect with a full page load
            # Percent-encoded as RedirectResponse does the Location: the path is the
            # client's, and a header cannot carry NUL, line breaks or non-Latin-1 text.
            return Response(status_code=401, headers={"HX-Redirect": quote(target, safe=URL_SAFE)})
        return RedirectResponse(target, status_code=303)

    def _renewing(self, send: Send, request: Request, sid: str) -> Send:
        """Re-sign an older session on the way out: a tablet in use never gets signed out.
        Its device cookie is renewed with it (or given, to a session older than device
        cookies), so a tablet that never signs in again still counts as known."""

        async def send_renewed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "set-cookie" not in headers:
                    assert self.guard.sessions is not None
                    cookies = Response()
                    self.guard.set_session_cookie(cookies, request, sid)
                    device = self.guard.device(request) or self.guard.sessions.new_device()
                    self.guard.set_device_cookie(cookies, request, device)
                    for cookie in cookies.headers.getlist("set-cookie"):
                        headers.append("set-cookie", cookie)
            await send(message)

        return send_renewed


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body the middleware already read, handed on to the app once."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # http.disconnect

    return replay


def page_context(guard: Guard, request: Request) -> dict[str, object]:
    """What every template gets: `signed_in`, and `csrf_token` masked for this render.

    The mask is made here, where the token is rendered, rather than by a step that
    swaps the bare token for a masked one in the finished body: Starlette renders a 500
    page in ServerErrorMiddleware, outside every middleware, and a streamed page would
    slip past such a step too, so the bare token would reach those pages. Masked here,
    no page can carry it. What the swap would have kept, a story page's 304 in password
    mode, `validate_as` keeps: the ETag is computed over the body with the bare token
    in place of this mask (so it is also the session's own).
    """
    session = guard.session(request)
    token = None
    if session is not None and guard.sessions is not None:
        bare = guard.sessions.csrf_token(session[0])
        token = mask_csrf(bare)
        validate_as(request.scope, token, bare)
    return {"signed_in": session is not None, "csrf_token": token}
