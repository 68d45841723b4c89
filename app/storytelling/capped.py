"""Every body the provider sends, read with a limit: past BODY_MAX_BYTES the reading stops,
before the rest is ever held in memory.

    client = openai.AsyncOpenAI(http_client=capped_http_client())   # capped_transport.py
    # a body over the limit: BodyTooLarge while it is read (the connection is dropped)
    too_large(error)                   # True: the error is (or was caused by) BodyTooLarge

A picture is 4 MB at most (base64 in JSON: about 5.4 MB), a whole story's stream well under
1 MB: a server that sends 50 MB is not answering, and is not read to the end. Bodies come
uncompressed (`Accept-Encoding: identity`), so the limit counts what would be held; a
compressed one, sent anyway, is refused too (its size once unpacked is unknown).
"""

from __future__ import annotations

BODY_MAX_BYTES = 8 * 1024 * 1024


class BodyTooLarge(ValueError):
    """The provider's answer is over BODY_MAX_BYTES (or compressed, against what was asked)."""


def too_large(error: BaseException) -> bool:
    """The error, or what caused it (the library wraps it), is a body over the limit."""
    while error is not None:
        if isinstance(error, BodyTooLarge):
            return True
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return False
