"""The language middleware: each request's language, chosen once, before anything renders.

    Middleware(LanguageMiddleware, settings=settings)

UI_LANGUAGE, else this device's own (its `language` cookie, set by POST /preferences), else
the household's (its last known, app/shelf/household.py: no query per request; the default
for a device that has not chosen), else Accept-Language, else English (app/i18n/choice.py);
a shared page puts its reader's Accept-Language first. A request the JSON API answers (or
refuses: the one rule, app/web/negotiation.py) is a client's, not the household's pages:
its messages and a failed job's `error` follow its Accept-Language alone, else English
(CONTRACT.md). The choice is a ContextVar of the request's task, so the handler and its
templates speak it, and so does the page for an unexpected error, which Starlette renders
outside every middleware: the choice is undone only after a response.
"""

from __future__ import annotations

from starlette.requests import Request, cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.i18n import ENGLISH, reset_language, set_language
from app.i18n.choice import choose_from, from_accept_language
from app.web.access import PUBLIC_PREFIX, SHARED_PREFIX
from app.web.compression import merge_vary
from app.web.negotiation import error_as_json
from app.web.offline import OFFLINE_ALIAS

# This device's own choice of the pages' language (POST /preferences sets it).
DEVICE_LANGUAGE_COOKIE = "language"


class LanguageMiddleware:
    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        self.setting = settings.ui_language

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["path"].startswith(PUBLIC_PREFIX)
                                       and scope["path"] != OFFLINE_ALIAS):
            await self.app(scope, receive, send)  # the static files speak no language
            return
        accept = cookies = None
        for name, value in scope["headers"]:
            if name == b"accept-language" and accept is None:
                accept = value.decode("latin-1")
            elif name == b"cookie" and cookies is None:
                cookies = value.decode("latin-1")
        services = getattr(scope["app"].state, "services", None)
        if error_as_json(Request(scope)):
            language, by_browser = from_accept_language(accept) or ENGLISH, True
        else:
            language, by_browser = choose_from(
                setting=self.setting,
                household=services.household.language if services is not None else None,
                accept=accept, device=device_language(cookies),
                reader_first=scope["path"].startswith(SHARED_PREFIX))
        token = set_language(language)
        await self.app(scope, receive, _varying(send) if by_browser else send)
        reset_language(token)


def device_language(cookies: str | None) -> str | None:
    """The `language` cookie's value, if the header has one (checked by the caller: any
    value but a page language is passed over)."""
    if not cookies or DEVICE_LANGUAGE_COOKIE not in cookies:
        return None
    return cookie_parser(cookies).get(DEVICE_LANGUAGE_COOKIE)


def _varying(send: Send) -> Send:
    """A page the browser's Accept-Language chose says it varies by it: a cache keeps one
    per language."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = merge_vary(message["headers"], b"Accept-Language")
        await send(message)

    return sending
