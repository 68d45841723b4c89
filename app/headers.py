"""The headers every response carries, refusals included.

    send = with_security_headers(send, https=True)
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import Message, Send

HSTS_MAX_AGE_S = 365 * 24 * 3600
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'; worker-src 'self'; manifest-src 'self'"
)
# Nothing the app does not use (reading aloud with speechSynthesis needs no permission).
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()" for feature in (
        "accelerometer", "autoplay", "camera", "display-capture", "geolocation", "gyroscope",
        "hid", "magnetometer", "microphone", "midi", "payment", "publickey-credentials-get",
        "serial", "usb", "xr-spatial-tracking",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Permissions-Policy": PERMISSIONS_POLICY,
    "Cross-Origin-Opener-Policy": "same-origin",
}


def with_security_headers(send: Send, *, https: bool) -> Send:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers.setdefault(name, value)
            if https:
                headers.setdefault("Strict-Transport-Security", f"max-age={HSTS_MAX_AGE_S}")
        await send(message)

    return send_with_headers
