"""Household sessions and the login limiter.

    sessions = Sessions(password, secret_key)
    cookie = sessions.sign(await sessions.open(db))      # at sign-in
    sid, age_s = sessions.unsign(cookie) or (None, 0)    # on each request
    await sessions.alive(db, sid); await sessions.end(db, sid)

The cookie is signed (itsdangerous) with a key derived from SECRET_KEY and the password,
so changing HOUSEHOLD_PASSWORD signs every device out. It carries only a session id, which
lives in the `sessions` table: signing out ends it there, so a copied cookie stops working.

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
from collections import OrderedDict, deque
from pathlib import Path

from itsdangerous import BadSignature, URLSafeTimedSerializer

from app.config import Settings
from app.db import Pool
from app.queries import fetch_all, fetch_val

SESSION_MAX_AGE_S = 30 * 24 * 3600  # a parent signs in once per tablet
SESSION_RENEW_AFTER_S = 24 * 3600  # a tablet in use stays signed in
COOKIE_MAX_CHARS = 512  # a real cookie is ~100 characters; anything longer is not ours
# Failed logins: per client address, and for the whole app, so that guessing from many
# addresses is limited too. One address (5 a minute) cannot use up the app's ceiling.
LOGIN_FAILURES_MAX = 5
LOGIN_WINDOW_S = 60
APP_LOGIN_FAILURES_MAX = 100
APP_LOGIN_WINDOW_S = 15 * 60
LIMITER_ADDRESSES_MAX = 10_000  # memory stays bounded whatever addresses come
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

    def csrf_token(self, sid: str) -> str:
        return hmac.new(self._csrf_key, sid.encode(), hashlib.sha256).hexdigest()

    async def open(self, db: Pool) -> str:
        await fetch_all(db, "prune_sessions", {"max_age_s": float(SESSION_MAX_AGE_S)})
        return await fetch_val(db, "create_session", {"sid": secrets.token_urlsafe(24)})

    async def alive(self, db: Pool, sid: str) -> bool:
        # On every request in password mode: one indexed read, compiled no more than once.
        return await fetch_val(db, "session_alive", {"sid": sid}) is not None

    async def end(self, db: Pool, sid: str) -> None:
        await fetch_val(db, "end_session", {"sid": sid})


class LoginLimiter:
    """Failed logins per client address, and for the whole app; past either limit, every
    attempt (even with the right password) waits out the window."""

    def __init__(
        self,
        *,
        max_failures: int = LOGIN_FAILURES_MAX,
        window_s: float = LOGIN_WINDOW_S,
        app_max_failures: int = APP_LOGIN_FAILURES_MAX,
        app_window_s: float = APP_LOGIN_WINDOW_S,
        max_addresses: int = LIMITER_ADDRESSES_MAX,
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.app_window_s = app_window_s
        self.max_addresses = max_addresses
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._app_failures: deque[float] = deque(maxlen=app_max_failures)

    def retry_after_s(self, address: str) -> int | None:
        """None when this address may try; else the seconds until it may try again."""
        now = time.monotonic()
        waits = []
        failures = self._recent(address, now)
        if failures is not None and len(failures) >= self.max_failures:
            waits.append(failures[0] + self.window_s - now)
        app = self._app_failures
        if len(app) == app.maxlen and app[0] > now - self.app_window_s:
            waits.append(app[0] + self.app_window_s - now)
        return max(math.ceil(max(waits)), 1) if waits else None

    def failed(self, address: str) -> None:
        now = time.monotonic()
        failures = self._recent(address, now)
        if failures is None:
            failures = self._failures[address] = deque(maxlen=self.max_failures)
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)  # the address quiet the longest
        failures.append(now)
        self._failures.move_to_end(address)
        self._app_failures.append(now)

    def succeeded(self, address: str) -> None:
        self._failures.pop(address, None)

    def _recent(self, address: str, now: float) -> deque[float] | None:
        failures = self._failures.get(address)
        if failures is None:
            return None
        while failures and failures[0] < now - self.window_s:
            failures.popleft()
        if not failures:
            del self._failures[address]
            return None
        return failures

    @property
    def tracked_addresses(self) -> int:
        return len(self._failures)
