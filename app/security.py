"""Who gets in, what may change things, and the headers every response carries.

    guard = Guard(settings, secret_key=load_secret_key(settings))
    Starlette(..., middleware=[Middleware(SecurityMiddleware, guard=guard)])
    routes += login_routes()     # GET/POST /login, POST /logout

Three modes, chosen by the settings and logged at start-up:

- `password`: HOUSEHOLD_PASSWORD is set. Every page but /login, /healthz and /static/
  needs the signed session cookie (pages redirect to /login); the JSON API answers 401
  `unauthorized` unless it has the cookie or `Authorization: Bearer $API_TOKEN`.
- `loopback`: no password and no ALLOW_OPEN. Only loopback clients are served; anyone
  else gets 403 (a page saying to set HOUSEHOLD_PASSWORD, or JSON `password_required`).
  /healthz and /static/ are served to everyone (a PaaS health check comes from elsewhere).
- `open`: no password, ALLOW_OPEN=1. Everyone is served.

Every state-changing request (any method but GET, HEAD, OPTIONS) must also pass
the cross-site rule, whatever the mode; `SecurityMiddleware` documents it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import math
import os
import secrets
import time
from collections import deque
from pathlib import Path
from urllib.parse import urlsplit

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.errors import AppError, Forbidden, Unauthorized
from app.logs import log
from app.web import (
    BODY_MAX_BYTES,
    accepts_html,
    error_body,
    error_response,
    is_htmx,
    local_path,
    parse_form,
    read_body,
    render,
    wants_json,
)

SESSION_COOKIE = "bedtime_session"
SESSION_MAX_AGE_S = 30 * 24 * 3600  # a parent logs in once per tablet
SESSION_RENEW_AFTER_S = 24 * 3600  # a tablet in use stays signed in
LOGIN_FAILURES_MAX = 5
LOGIN_WINDOW_S = 60
PUBLIC_PATHS = ("/healthz", "/static/")  # served to everyone, in every mode
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
HSTS_MAX_AGE_S = 365 * 24 * 3600
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def load_secret_key(settings: Settings) -> str:
    """SECRET_KEY, or one generated once and kept in data_dir/secret_key (mode 0600)."""
    if settings.secret_key:
        return settings.secret_key
    path = Path(settings.data_dir) / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made by an earlier start (or a process starting alongside)
        for _ in range(50):
            key = path.read_text().strip()
            if key:
                return key
            time.sleep(0.01)  # the other process is still writing it
        raise RuntimeError(f"{path} is empty; delete it or set SECRET_KEY") from None
    with os.fdopen(fd, "w") as file:
        file.write(secrets.token_urlsafe(48))
    return path.read_text().strip()


def is_loopback(address: str | None) -> bool:
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def is_local_host_name(host: str) -> bool:
    """A Host header a loopback-only app should answer: an IP, `localhost`, or a dotless name.

    DNS rebinding points a stranger's domain (`evil.example`, which has a dot) at 127.0.0.1,
    so a page there could reach a loopback-only app through the household's own browser;
    refusing such Host headers closes that door.
    """
    name = (urlsplit(f"//{host}").hostname or "").rstrip(".")
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return "." not in name or name.endswith(".localhost")


def _origin_of(url: str) -> str | None:
    """`host[:port]` of a URL, the port left out when it is the scheme's default."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = 443 if parts.scheme == "https" else 80
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return host if port in (None, default) else f"{host}:{port}"


def _own_origin(request: Request) -> str | None:
    return _origin_of(f"{request.url.scheme}://{request.headers.get('host', '')}")


class LoginLimiter:
    """Failed logins per client address: past the limit, every attempt waits out the window."""

    def __init__(self, *, max_failures: int = LOGIN_FAILURES_MAX, window_s: float = LOGIN_WINDOW_S):
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}

    def retry_after_s(self, address: str) -> int | None:
        """None when this address may try; else the seconds until it may try again."""
        failures = self._recent(address)
        if len(failures) < self.max_failures:
            return None
        return max(math.ceil(failures[0] + self.window_s - time.monotonic()), 1)

    def failed(self, address: str) -> None:
        self._recent(address).append(time.monotonic())

    def succeeded(self, address: str) -> None:
        self._failures.pop(address, None)

    def _recent(self, address: str) -> deque[float]:
        cutoff = time.monotonic() - self.window_s
        for known in [a for a, f in self._failures.items() if not f or f[-1] < cutoff]:
            del self._failures[known]  # forget quiet addresses: memory stays small
        failures = self._failures.setdefault(address, deque(maxlen=self.max_failures))
        while failures and failures[0] < cutoff:
            failures.popleft()
        return failures


class Guard:
    """The security decisions, each a small method; the middleware only applies them."""

    def __init__(self, settings: Settings, *, secret_key: str | None) -> None:
        self.password = settings.household_password
        self.api_token = settings.api_token
        self.allow_open = settings.allow_open
        self.limiter = LoginLimiter()
        self._serializer: URLSafeTimedSerializer | None = None
        if self.password:
            assert secret_key, "a password needs a secret key to sign sessions"
            # Changing HOUSEHOLD_PASSWORD signs every tablet out: the old cookies stop verifying.
            fingerprint = hashlib.sha256(self.password.encode()).hexdigest()[:16]
            self._serializer = URLSafeTimedSerializer(secret_key, salt=f"session:{fingerprint}")
            self._csrf_key = hashlib.sha256(f"csrf:{secret_key}".encode()).digest()

    @property
    def mode(self) -> str:
        return "password" if self.password else "open" if self.allow_open else "loopback"

    def log_mode(self) -> None:
        log(
            "access_mode",
            mode=self.mode,
            api_token="set" if self.api_token else "unset",
        )
        if self.mode == "password" and not self.api_token:
            log("api_token_unset", level=logging.WARNING,
                note="the JSON API works only with a signed-in session")
        if self.mode == "open":
            log("open_to_everyone", level=logging.WARNING,
                note="ALLOW_OPEN=1 with no HOUSEHOLD_PASSWORD: anyone can spend the budget")

    # -- the session -------------------------------------------------------------------

    def new_session(self, sid: str | None = None) -> str:
        """A signed cookie value; renewing keeps the id, so the page's CSRF token stays valid."""
        assert self._serializer is not None
        return self._serializer.dumps({"sid": sid or secrets.token_urlsafe(16)})

    def session(self, request: Request) -> tuple[str, float] | None:
        """(session id, age in seconds) of a valid, unexpired cookie; else None."""
        raw = request.cookies.get(SESSION_COOKIE)
        if self._serializer is None or not raw:
            return None
        try:
            data, signed_at = self._serializer.loads(
                raw, max_age=SESSION_MAX_AGE_S, return_timestamp=True
            )
        except BadSignature:  # includes SignatureExpired
            return None
        if not isinstance(data, dict) or not isinstance(data.get("sid"), str):
            return None
        return data["sid"], time.time() - signed_at.timestamp()

    def set_session_cookie(self, response: Response, request: Request, value: str) -> None:
        response.set_cookie(
            SESSION_COOKIE, value, max_age=SESSION_MAX_AGE_S, path="/", httponly=True,
            samesite="lax", secure=request.url.scheme == "https",
        )

    def csrf_token(self, sid: str) -> str:
        return hmac.new(self._csrf_key, sid.encode(), hashlib.sha256).hexdigest()

    def password_matches(self, given: str) -> bool:
        """Constant time; comparing digests hides the password's length too."""
        if not self.password:
            return False
        return hmac.compare_digest(
            hashlib.sha256(given.encode()).digest(), hashlib.sha256(self.password.encode()).digest()
        )

    def bearer_ok(self, request: Request) -> bool:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if not self.api_token or scheme.lower() != "bearer" or not token.strip():
            return False
        return hmac.compare_digest(token.strip().encode(), self.api_token.encode())

    # -- the rules ---------------------------------------------------------------------

    def refused_as_stranger(self, request: Request) -> bool:
        """Loopback mode: anyone not on loopback (or arriving by a rebound domain name)."""
        if self.mode != "loopback":
            return False
        client = request.client.host if request.client else None
        return not is_loopback(client) or not is_local_host_name(request.headers.get("host", ""))

    def cross_site_verdict(self, request: Request) -> bool | None:
        """Does this state-changing request come from the app's own pages?

        True when it provably does, False when it provably does not, None when it carries
        no provenance at all. Checked in order, the first header present decides:

        1. `Origin` (every current browser sends it on a POST): its host and port must equal
           the request's `Host`. The scheme is not compared, so a PaaS proxy that does not
           pass `X-Forwarded-Proto` through cannot lock the household out; "null" is refused.
        2. `Referer` (older browsers, some privacy settings): the same comparison.
        3. `Sec-Fetch-Site`: `same-origin` or `none` (typed by the user) pass; `same-site`
           (a sibling subdomain on a shared PaaS domain) and `cross-site` do not.

        None means curl or a script: no browser makes a state-changing request without
        at least one of these.
        """
        own = _own_origin(request)
        origin = request.headers.get("origin")
        if origin is not None:
            return own is not None and _origin_of(origin) == own
        referer = request.headers.get("referer")
        if referer is not None:
            return own is not None and _origin_of(referer) == own
        fetch_site = request.headers.get("sec-fetch-site")
        if fetch_site is not None:
            return fetch_site in ("same-origin", "none")
        return None

    def csrf_ok(self, request: Request, given: str | None) -> bool:
        session = self.session(request)
        if session is None or not given:
            return False
        return hmac.compare_digest(given.encode(), self.csrf_token(session[0]).encode())

    def page_context(self, request: Request) -> dict[str, object]:
        session = self.session(request)
        return {
            "signed_in": session is not None,
            "csrf_token": self.csrf_token(session[0]) if session else None,
        }


class SecurityMiddleware:
    """Applies the Guard to every HTTP request, and adds the headers to every response.

    Order of checks: the loopback rule, then the cross-site rule, then the login. A refusal
    is answered here, before any handler runs, so a refused request changes nothing.

    The cross-site rule for a state-changing request: it passes when it carries a valid
    bearer token (a cross-site page cannot attach one); or `Guard.cross_site_verdict` says
    it comes from the app's own origin; or it carries the session's CSRF token (`csrf_token`
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
        request = Request(scope, receive)
        send = self._with_headers(send, https=request.url.scheme == "https")
        path = request.url.path
        public = path == PUBLIC_PATHS[0] or path.startswith(PUBLIC_PATHS[1])

        if not public and self.guard.refused_as_stranger(request):
            await self._stranger_page(request)(scope, receive, send)
            return
        body: bytes | None = None
        if request.method not in SAFE_METHODS:
            allowed, body = await self._same_site(request)
            if not allowed:
                error = Forbidden("This request did not come from the storyteller's own pages.")
                log("cross_site_refused", level=logging.WARNING, path=path,
                    origin=request.headers.get("origin", "-"))
                await error_response(request, error)(scope, receive, send)
                return
        session = self.guard.session(request)
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
        verdict = self.guard.cross_site_verdict(request)
        if verdict:
            return True, None
        if verdict is None and wants_json(request):
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
        if wants_json(request) or not accepts_html(request):
            return JSONResponse(error_body("password_required", message), status_code=403)
        return render(request, "open_refused.html", {"page_title": "Set a password first"},
                      status_code=403)

    def _sign_in_first(self, request: Request) -> Response:
        if wants_json(request) or not accepts_html(request):
            return error_response(request, Unauthorized(
                "Sign in first: send Authorization: Bearer <API_TOKEN>."
            ))
        target = "/login" + (f"?next={request.url.path}" if request.url.path != "/" else "")
        if is_htmx(request):  # htmx follows HX-Redirect with a full page load
            return Response(status_code=401, headers={"HX-Redirect": target})
        return RedirectResponse(target, status_code=303)

    def _with_headers(self, send: Send, *, https: bool) -> Send:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                if https:
                    headers.setdefault(
                        "Strict-Transport-Security", f"max-age={HSTS_MAX_AGE_S}"
                    )
            await send(message)

        return send_with_headers

    def _renewing(self, send: Send, request: Request, sid: str) -> Send:
        """Re-sign an older session on the way out: a tablet in use never gets signed out."""

        async def send_renewed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "set-cookie" not in headers:
                    cookie = Response()
                    self.guard.set_session_cookie(cookie, request, self.guard.new_session(sid))
                    headers.append("set-cookie", cookie.headers["set-cookie"])
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


# -- /login and /logout ----------------------------------------------------------------


def _guard(request: Request) -> Guard:
    return request.app.state.guard


async def login_page(request: Request) -> Response:
    guard = _guard(request)
    next_path = local_path(request.query_params.get("next") or "", "/")
    if guard.mode != "password" or guard.session(request) is not None:
        return RedirectResponse(next_path, status_code=303)
    return render(request, "login.html", {"next": next_path, "page_title": "Sign in"})


async def login(request: Request) -> Response:
    guard = _guard(request)
    if guard.mode != "password":
        return RedirectResponse("/", status_code=303)
    form = await parse_form(request, await read_body(request))
    next_path = local_path(str(form.get("next") or ""), "/")
    address = request.client.host if request.client else "unknown"
    context: dict[str, object] = {"next": next_path, "page_title": "Sign in"}
    wait_s = guard.limiter.retry_after_s(address)
    if wait_s is not None:
        log("login_limited", level=logging.WARNING, client=address, retry_after_s=wait_s)
        context["error"] = f"Too many tries. Please wait {wait_s} seconds and try again."
        return render(request, "login.html", context, status_code=429,
                      headers={"Retry-After": str(wait_s)})
    if not guard.password_matches(str(form.get("password") or "")):
        guard.limiter.failed(address)
        log("login_failed", level=logging.WARNING, client=address)
        context["error"] = "That isn't the household password. Please try again."
        return render(request, "login.html", context, status_code=401)
    guard.limiter.succeeded(address)
    log("login", client=address)
    response = RedirectResponse(next_path, status_code=303)
    guard.set_session_cookie(response, request, guard.new_session())
    return response


async def logout(request: Request) -> Response:
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax",
                           secure=request.url.scheme == "https")
    return response


def login_routes() -> list[Route]:
    return [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]
