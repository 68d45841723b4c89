"""CSRF tokens as pages carry them: masked, different bytes on every response, the same
token underneath.

    masked = mask_csrf(token)           # into the page's form and htmx headers
    unmask_csrf(masked) == token        # what the guard compares with the session's
"""

from __future__ import annotations

import base64
import re
import secrets

CSRF_TOKEN_BYTES = 32  # an HMAC-SHA256, shown as 64 hex digits
# A masked token: base64url of 2 x 32 bytes (pad, masked token), unpadded, 86 characters.
# The last carries 2 bits and 4 zeros, so it is one of AQgw: one spelling per token, and a
# changed character always changes what it decodes to.
MASKED_CSRF = re.compile(r"[A-Za-z0-9_-]{85}[AQgw]")


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
