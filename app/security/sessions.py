"""Household sessions, device cookies and the login limiter.

    sessions = Sessions(password, secret_key)
    cookie = sessions.sign(await sessions.open(db))      # at sign-in
    sid, age_s = sessions.unsign(cookie) or (None, 0)    # on each request
    await sessions.alive(db, sid); await sessions.end(db, sid)
    device = sessions.unsign_device(raw)                 # a device that signed in before

The cookie is signed (itsdangerous) with a key derived from SECRET_KEY and the password,
so changing HOUSEHOLD_PASSWORD signs every device out. It carries only a session id, which
lives in the `sessions` table: signing out ends it there, so a copied cookie stops working.
A session lasts a month after its last use (the row's `last_seen_at`), not after it began.

The device cookie (OWASP's "device cookies" against online guessing) is set at each
sign-in and stays after signing out: a random id, signed the same way. A login attempt
that carries one is counted for that device alone, so no flood of other clients' failures
keeps the household out (`LoginLimiter`).

Pages carry the session's CSRF token masked (`mask_csrf`): different bytes on every
response, the same token underneath (`unmask_csrf`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from itsdangerous import BadSignature, URLSafeTimedSerializer

from app.config import Settings
from app.db import Pool
from app.queries import fetch_all, fetch_val

SESSION_MAX_AGE_S = 30 * 24 * 3600  # a session lasts a month after its last use
SESSION_RENEW_AFTER_S = 24 * 3600  # the cookie is re-signed by use, at most once a day
# The session's last use is written at most this often: the check runs on every request.
SESSION_SEEN_EVERY_S = 5 * 60
DEVICE_MAX_AGE_S = 365 * 24 * 3600  # renewed at each sign-in and with the session cookie
COOKIE_MAX_CHARS = 512  # a real cookie is ~100 characters; anything longer is not ours
# Failed logins of a device that has never signed in: per client address, and for all of
# them together, so that guessing from many addresses is limited too. One address (5 a
# minute) cannot use up the app's ceiling. A device that has signed in before has only its
# own limit: a stolen tablet cannot guess forever, and nobody else can lock it out.
LOGIN_FAILURES_MAX = 5
LOGIN_WINDOW_S = 60
APP_LOGIN_FAILURES_MAX = 100
APP_LOGIN_WINDOW_S = 15 * 60
DEVICE_LOGIN_FAILURES_MAX = 10
DEVICE_LOGIN_WINDOW_S = 15 * 60
CLIENT_MAX_CHARS = 64  # as clients.ADDRESS_MAX_CHARS: longer is not an address
CSRF_TOKEN_BYTES = 32  # an HMAC-SHA256, shown as 64 hex digits
# A masked token: base64url of 2 x 32 bytes (pad, masked token), unpadded, 86 characters.
# The last carries 2 bits and 4 zeros, so it is one of AQgw: one spelling per token, and a
# changed character always changes what it decodes to.
MASKED_CSRF = re.compile(r"[A-Za-z0-9_-]{85}[AQgw]")


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


def mask_csrf(token: str) -> str:
    """The CSRF token as one response shows it: base64url(pad || pad XOR token).

        masked = mask_csrf(token)       # a fresh random pad: never the same twice
        unmask_csrf(masked) == token

    So a compressed page holds no constant secret (BREACH), yet every mask still works.
    """
    raw = bytes.fromhex(token)
    pad = secrets.token_bytes(len(raw))
    hidden = (int.from_bytes(pad) ^ int.from_bytes(raw)).to_bytes(len(raw))
    return base64.urlsafe_b64encode(pad + hidden).rstrip(b"=").decode()


def unmask_csrf(masked: str) -> str | None:
    """The token under a mask_csrf() mask; None for anything not shaped like one."""
    if not MASKED_CSRF.fullmatch(masked):
        return None
    data = base64.urlsafe_b64decode(masked + "==")
    pad, hidden = data[:CSRF_TOKEN_BYTES], data[CSRF_TOKEN_BYTES:]
    return (int.from_bytes(pad) ^ int.from_bytes(hidden)).to_bytes(CSRF_TOKEN_BYTES).hex()


class Sessions:
    def __init__(self, password: str, secret_key: str) -> None:
        fingerprint = hashlib.sha256(password.encode()).hexdigest()[:16]
        self._serializer = URLSafeTimedSerializer(secret_key, salt=f"session:{fingerprint}")
        self._devices = URLSafeTimedSerializer(secret_key, salt=f"device:{fingerprint}")
        self._csrf_key = hashlib.sha256(f"csrf:{secret_key}".encode()).digest()

    def sign(self, sid: str) -> str:
        return self._serializer.dumps({"sid": sid})

    def unsign(self, raw: str | None) -> tuple[str, float] | None:
        """(session id, age in seconds) of a well-signed, unexpired cookie; else None."""
        if not raw or len(raw) > COOKIE_MAX_CHARS:
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

    @staticmethod
    def new_device() -> str:
        return secrets.token_urlsafe(24)

    def sign_device(self, device: str) -> str:
        return self._devices.dumps({"device": device})

    def unsign_device(self, raw: str | None) -> str | None:
        """The id in a well-signed, unexpired device cookie; else None."""
        if not raw or len(raw) > COOKIE_MAX_CHARS:
            return None
        try:
            data = self._devices.loads(raw, max_age=DEVICE_MAX_AGE_S)
        except BadSignature:  # includes SignatureExpired
            return None
        device = data.get("device") if isinstance(data, dict) else None
        if not isinstance(device, str) or not 0 < len(device) <= CLIENT_MAX_CHARS:
            return None
        return device

    def csrf_token(self, sid: str) -> str:
        return hmac.new(self._csrf_key, sid.encode(), hashlib.sha256).hexdigest()

    async def open(self, db: Pool) -> str:
        await fetch_all(db, "prune_sessions", {"max_idle_s": float(SESSION_MAX_AGE_S)})
        sid: str = await fetch_val(db, "create_session", {"sid": secrets.token_urlsafe(24)})
        return sid

    async def alive(self, db: Pool, sid: str) -> bool:
        # On every request in password mode: one indexed read, compiled no more than once,
        # which writes the session's last use only when that is SESSION_SEEN_EVERY_S old.
        return await fetch_val(db, "session_alive", {
            "sid": sid, "max_idle_s": float(SESSION_MAX_AGE_S),
            "seen_every_s": float(SESSION_SEEN_EVERY_S),
        }) is not None

    async def end(self, db: Pool, sid: str) -> None:
        await fetch_val(db, "end_session", {"sid": sid})


@dataclass(frozen=True)
class LoginAttempt:
    """Who tries a password: the client's address, and the device id if it has signed in
    before (a valid device cookie)."""

    address: str
    device: str | None = None


@dataclass(frozen=True)
class Count:
    """One count an attempt was taken from (a row of login_failures)."""

    scope: str
    client: str
    failures: int
    seconds_left: float


class LoginLimiter:
    """Failed logins, counted in PostgreSQL so that every process shares them; past a
    limit, every attempt (even with the right password) waits until its window ends.

        wait_s = await limiter.admit(db, attempt)    # None: try the password
        await limiter.succeeded(db, attempt)         # it was right
        await limiter.failed(db)                     # it was wrong

    An attempt counts as a failure from the moment it is admitted, before its password is
    looked at, so that no number of attempts sent at once gets past a limit; a refused
    attempt and the right password give it back. A device that has signed in before is
    counted alone (its own limit); any other, by its address and with all the others.
    """

    def __init__(
        self,
        *,
        max_failures: int = LOGIN_FAILURES_MAX,
        window_s: float = LOGIN_WINDOW_S,
        app_max_failures: int = APP_LOGIN_FAILURES_MAX,
        app_window_s: float = APP_LOGIN_WINDOW_S,
        device_max_failures: int = DEVICE_LOGIN_FAILURES_MAX,
        device_window_s: float = DEVICE_LOGIN_WINDOW_S,
    ) -> None:
        self.limits = {"address": max_failures, "app": app_max_failures,
                       "device": device_max_failures}
        self.window_s = window_s
        self.app_window_s = app_window_s
        self.device_window_s = device_window_s

    async def admit(self, db: Pool, attempt: LoginAttempt) -> int | None:
        """None when this attempt may try (it now counts as a failure until it succeeds);
        else the seconds until it may try again (and it does not count)."""
        counts = await self._take(db, attempt)
        refused = [c for c in counts if c.failures > self.limits[c.scope]]
        if not refused:
            return None
        await self._give_back(db, [(c.scope, c.client) for c in counts], forget=False)
        return max(math.ceil(max(c.seconds_left for c in refused)), 1)

    async def succeeded(self, db: Pool, attempt: LoginAttempt) -> None:
        """The right password: the attempt was no failure, and its address's (or device's)
        earlier failures are forgotten."""
        if attempt.device:
            counted = [("device", attempt.device)]
        else:  # an admitted attempt was counted in both
            counted = [("app", ""), ("address", self._address(attempt))]
        await self._give_back(db, counted, forget=True)
        await self.prune(db)

    async def failed(self, db: Pool) -> None:
        """A wrong password: it counts already. Old counts go meanwhile."""
        await self.prune(db)

    async def prune(self, db: Pool) -> None:
        await fetch_all(db, "prune_login_failures")

    async def _take(self, db: Pool, attempt: LoginAttempt) -> list[Count]:
        if attempt.device:
            rows = await fetch_all(db, "take_device_login_attempt", {
                "device": attempt.device, "window_s": float(self.device_window_s)})
        else:
            rows = await fetch_all(db, "take_login_attempt", {
                "address": self._address(attempt), "address_window_s": float(self.window_s),
                "app_window_s": float(self.app_window_s),
                "app_max_failures": self.limits["app"]})
        return [Count(r["scope"], r["client"], r["failures"], r["seconds_left"]) for r in rows]

    @staticmethod
    async def _give_back(db: Pool, counted: list[tuple[str, str]], *, forget: bool) -> None:
        await fetch_all(db, "give_back_login_attempt", {
            "scopes": [scope for scope, _ in counted],
            "clients": [client for _, client in counted], "forget": forget})

    @staticmethod
    def _address(attempt: LoginAttempt) -> str:
        return attempt.address[:CLIENT_MAX_CHARS]
