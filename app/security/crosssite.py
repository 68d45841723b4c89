"""The cross-site rule: does a state-changing request come from the app's own pages?

    cross_site_verdict(request)   # True: provably ours; False: provably not; None: no
                                  # provenance at all (curl, a script)

The middleware (app/web/access.py) combines this verdict with the bearer token, the
session's CSRF token and the request's content type.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request


def origin_of(url: str) -> str | None:
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


def own_origin(request: Request) -> str | None:
    return origin_of(f"{request.scope['scheme']}://{request.headers.get('host', '')}")


def cross_site_verdict(request: Request) -> bool | None:
    """Checked in order, the first header present decides:

    1. `Origin` (every current browser sends it on a POST): its host and port must equal
       the request's `Host`. The scheme is not compared, so a PaaS proxy that does not
       pass `X-Forwarded-Proto` through cannot lock the household out; "null" is refused.
    2. `Referer` (older browsers, some privacy settings): the same comparison.
    3. `Sec-Fetch-Site`: `same-origin` or `none` (typed by the user) pass; `same-site`
       (a sibling subdomain on a shared PaaS domain) and `cross-site` do not.

    None means curl or a script: no browser makes a state-changing request without at
    least one of these.
    """
    origin = request.headers.get("origin")
    if origin is not None:
        own = own_origin(request)
        return own is not None and origin_of(origin) == own
    referer = request.headers.get("referer")
    if referer is not None:
        own = own_origin(request)
        return own is not None and origin_of(referer) == own
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    return None
