"""Signing in and out (password mode): GET/POST /login, POST /logout."""

from __future__ import annotations

import logging
import math

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from app.i18n import N_
from app.logs import log
from app.security.guard import SESSION_COOKIE, Guard
from app.web.inputs import local_path, parse_form, read_body
from app.web.templates import render


def _guard(request: Request) -> Guard:
    guard: Guard = request.app.state.guard
    return guard


def _context(next_path: str, *, known_device: bool) -> dict[str, object]:
    """`known_device`: this device has signed in here before (so: "Welcome back")."""
    return {"next": next_path, "page_title": N_("Sign in"), "known_device": known_device}


async def login_page(request: Request) -> Response:
    guard = _guard(request)
    next_path = local_path(request.query_params.get("next") or "", "/")
    if guard.mode != "password" or guard.session(request) is not None:
        return RedirectResponse(next_path, status_code=303)
    context = _context(next_path, known_device=guard.device(request) is not None)
    return render(request, "login.html", context)


async def login(request: Request) -> Response:
    guard = _guard(request)
    if guard.mode != "password" or guard.sessions is None:
        return RedirectResponse("/", status_code=303)
    form = await parse_form(request, await read_body(request))
    next_path = local_path(str(form.get("next") or ""), "/")
    attempt = guard.login_attempt(request)
    context = _context(next_path, known_device=attempt.device is not None)
    db = request.app.state.services.db
    known = "yes" if attempt.device else "no"
    admission = await guard.limiter.admission(db, attempt)
    wait_s = admission.wait_s
    if wait_s is not None:
        log("login_limited", level=logging.WARNING, client=attempt.address,
            known_device=known, retry_after_s=wait_s)
        context["wait_minutes"] = math.ceil(wait_s / 60)
        return render(request, "login.html", context, status_code=429,
                      headers={"Retry-After": str(wait_s)})
    if not guard.password_matches(str(form.get("password") or "")):
        await guard.limiter.failed(db)
        log("login_failed", level=logging.WARNING, client=attempt.address, known_device=known)
        context["error"] = "That isn't the household password. Please try again."
        # How many more wrong ones before a wait: so nobody is locked out by surprise.
        context["tries_left"] = admission.tries_left
        context["resets_minutes"] = math.ceil(admission.resets_in_s / 60)
        return render(request, "login.html", context, status_code=401)
    await guard.limiter.succeeded(db, attempt)
    sid = await guard.sessions.open(db)
    log("login", client=attempt.address, known_device=known)
    response = RedirectResponse(next_path, status_code=303)
    guard.set_session_cookie(response, request, sid)
    guard.set_device_cookie(response, request, attempt.device or guard.sessions.new_device())
    return response


async def logout(request: Request) -> Response:
    guard = _guard(request)
    session = guard.session(request)
    if session is not None and guard.sessions is not None:
        await guard.sessions.end(request.app.state.services.db, session[0])
        log("logout")
    response = RedirectResponse("/login", status_code=303)
    # The device cookie stays: this device has signed in before, whoever floods the login.
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax",
                           secure=request.url.scheme == "https")
    return response
