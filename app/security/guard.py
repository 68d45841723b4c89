"""The security decisions, each a small method: who is asking, from where, with which
session, and whether a state-changing request came from the app's own pages. The
middleware (middleware.py) only applies them.
"""

from __future__ import annotations

import hashlib
import hmac
import logging

from starlette.requests import Request
from starlette.responses import Response

from app.config import Settings
from app.logs import log
from app.security.clients import Clients
from app.security.csrf import unmask_csrf
from app.security.limits import LoginAttempt, LoginLimiter
from app.security.sessions import DEVICE_MAX_AGE_S, SESSION_MAX_AGE_S, Sessions

SESSION_COOKIE = "bedtime_session"
DEVICE_COOKIE = "bedtime_device"  # this device has signed in before; kept after signing out


class Guard:
    def __init__(self, settings: Settings, *, secret_key: str | None) -> None:
        self.password = settings.household_password
        self.api_token = settings.api_token
        self.allow_open = settings.allow_open
        self.forwarded_allow_ips = settings.forwarded_allow_ips
        self.clients = Clients(forwarded_allow_ips=settings.forwarded_allow_ips,
                               allowed_hosts=settings.allowed_hosts)
        self.limiter = LoginLimiter()
        self.sessions: Sessions | None = None
        if self.password:
            assert secret_key, "a password needs a secret key to sign sessions"
            self.sessions = Sessions(self.password, secret_key)

    @property
    def mode(self) -> str:
        return "password" if self.password else "open" if self.allow_open else "loopback"

    def log_mode(self) -> None:
        log("access_mode", mode=self.mode, api_token="set" if self.api_token else "unset",
            forwarded_allow_ips=self.forwarded_allow_ips)
        if self.mode == "password" and not self.api_token:
            log("api_token_unset", level=logging.WARNING,
                note="the JSON API works only with a signed-in session")
        if self.mode == "open":
            log("open_to_everyone", level=logging.WARNING,
                note="ALLOW_OPEN=1 with no HOUSEHOLD_PASSWORD: anyone can spend the budget")

    # -- the session -------------------------------------------------------------------

    async def resolve_session(self, request: Request) -> tuple[str, float] | None:
        """(session id, age) when the cookie is well signed and its session still open."""
        if self.sessions is None:
            return None
        signed = self.sessions.unsign(request.cookies.get(SESSION_COOKIE))
        if signed is None:
            return None
        db = request.app.state.services.db
        return signed if await self.sessions.alive(db, signed[0]) else None

    @staticmethod
    def session(request: Request) -> tuple[str, float] | None:
        """The session the middleware resolved for this request."""
        session: tuple[str, float] | None = request.scope.get("state", {}).get("session")
        return session

    def set_session_cookie(self, response: Response, request: Request, sid: str) -> None:
        assert self.sessions is not None
        response.set_cookie(
            SESSION_COOKIE, self.sessions.sign(sid), max_age=SESSION_MAX_AGE_S, path="/",
            httponly=True, samesite="lax", secure=request.url.scheme == "https",
        )

    def device(self, request: Request) -> str | None:
        """The id of this device if it has signed in before (a valid device cookie)."""
        if self.sessions is None:
            return None
        return self.sessions.unsign_device(request.cookies.get(DEVICE_COOKIE))

    def set_device_cookie(self, response: Response, request: Request, device: str) -> None:
        assert self.sessions is not None
        response.set_cookie(
            DEVICE_COOKIE, self.sessions.sign_device(device), max_age=DEVICE_MAX_AGE_S,
            path="/", httponly=True, samesite="lax", secure=request.url.scheme == "https",
        )

    def login_attempt(self, request: Request) -> LoginAttempt:
        """Who tries a password, as the limiter counts them."""
        address = request.client.host if request.client else "unknown"
        return LoginAttempt(address=address, device=self.device(request))

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
        """Loopback mode: anyone not on this machine, or who came through a proxy."""
        return self.mode == "loopback" and not self.clients.is_loopback(request.scope)

    def refused_host(self, request: Request) -> bool:
        """Without a password: a dotted host name the household did not list."""
        return self.mode != "password" and not self.clients.host_allowed(
            request.headers.get("host", ""))

    def csrf_ok(self, request: Request, given: str | None) -> bool:
        """The session's token, masked (what pages carry) or bare (what nothing shows now)."""
        session = self.session(request)
        if session is None or not given or self.sessions is None:
            return False
        token = unmask_csrf(given) or given
        return hmac.compare_digest(token.encode(), self.sessions.csrf_token(session[0]).encode())
