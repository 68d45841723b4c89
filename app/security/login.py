"""Signing in and out (password mode): GET/POST /login, POST /logout."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from app.logs import log
from app.security.guard import SESSION_COOKIE, Guard
from app.web.responses import (
    local_path,
    parse_form,
    read_body,
    render,
)


def _guard(request: Request) -> Guard:
    return request.app.state.guard


async def login_page(request: Request) -> Response:
    guard = _guard(request)
    next_path = local_path(request.query_params.get("next") or "", "/")
    if guard.mode != "password" or guard.session(request) is not None:
        return RedirectResponse(next_path, status_code=303)
    return render(request, "login.html", {"next": next_path, "page_title": "Sign in"})


async def login(request: Request) -> Response:
    guard = _guard(request)
    if guard.mode != "password" or guard.sessions is None:
        return RedirectResponse("/", status_code=303)
    form = await parse_form(request, await read_body(request))
    next_path = local_path(str(form.get("next") or ""), "/")
    address = request.client.host if request.client else "unknown"
    context: dict[str, object] = {"next": next_path, "page_title": "Sign in"}
    wait_s = guard.limiter.retry_after_s(address)
    if wait_s is not None:
        log("login_limited", level=logging.WARNING, client=address, retry_after_s=wait_s)
        context["error"] = f"Too many tries. Please wait {wait_s} seconds and try again."
        return render(request, "login.html", context, status_code=429,
                      headers={"Retry-After": str(wait_s)})
    if not guard.password_matches(str(form.get("password") or "")):
        guard.limiter.failed(address)
        log("login_failed", level=logging.WARNING, client=address)
        context["error"] = "That isn't the household password. Please try again."
        return render(request, "login.html", context, status_code=401)
    guard.limiter.succeeded(address)
    sid = await guard.sessions.open(request.app.state.services.db)
    log("login", client=address)
    response = RedirectResponse(next_path, status_code=303)
    guard.set_session_cookie(response, request, sid)
    return response


async def logout(request: Request) -> Response:
    guard = _guard(request)
    session = guard.session(request)
    if session is not None and guard.sessions is not None:
        await guard.sessions.end(request.app.state.services.db, session[0])
        log("logout")
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax",
                           secure=request.url.scheme == "https")
    return response


