"""The headers every response carries, refusals included.

    send = with_security_headers(send, https=True)
    send = with_security_headers(send, https=True, asset=True)   # a script, a stylesheet

A static asset gets only what applies to it: the policies for documents (CSP, framing,
referrer, permissions, opener) do nothing on a script, a stylesheet or an image, and would
add some 700 bytes to each of a first visit's files.
"""

from __future__ import annotations

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
    # A household's stories are nobody else's: no search engine lists any page or file.
    "X-Robots-Tag": "noindex, nofollow",
}


ASSET_HEADERS = {name: SECURITY_HEADERS[name] for name in ("X-Content-Type-Options",
                                                           "X-Robots-Tag")}
HSTS = {"Strict-Transport-Security": f"max-age={HSTS_MAX_AGE_S}"}


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode(), value.encode()) for name, value in headers.items()]


# Built once: the raw (name, value) pairs an ASGI message carries.
_CHOSEN = {
    (asset, https): _raw({**(ASSET_HEADERS if asset else SECURITY_HEADERS),
                          **(HSTS if https else {})})
    for asset in (False, True) for https in (False, True)
}


def with_security_headers(send: Send, *, https: bool, asset: bool = False) -> Send:
    """Adds each header the response does not set itself."""
    chosen = _CHOSEN[asset, https]

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message["headers"]}
            message["headers"] = [*message["headers"],
                                  *(pair for pair in chosen if pair[0] not in present)]
        await send(message)

    return send_with_headers
