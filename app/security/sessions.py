"""Household sessions and device cookies.

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
that carries one is counted for that device alone (app/security/limits.py).

Each session has its CSRF token (`csrf_token`), which pages carry masked
(app/security/csrf.py).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from itsdangerous import BadSignature, URLSafeTimedSerializer

from app.db import Pool
from app.queries import fetch_all, fetch_val
from app.security.limits import CLIENT_MAX_CHARS

SESSION_MAX_AGE_S = 30 * 24 * 3600  # a session lasts a month after its last use
SESSION_RENEW_AFTER_S = 24 * 3600  # the cookie is re-signed by use, at most once a day
# The session's last use is written at most this often: the check runs on every request.
SESSION_SEEN_EVERY_S = 5 * 60
DEVICE_MAX_AGE_S = 365 * 24 * 3600  # renewed at each sign-in and with the session cookie
COOKIE_MAX_CHARS = 512  # a real cookie is ~100 characters; anything longer is not ours


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
