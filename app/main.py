"""The app factory and the lifespan that owns everything long-lived.

    app = create_app()                              # what uvicorn serves (the Procfile)
    app = create_app(settings, storyteller=fake)    # what tests build, as many as they like

Start-up: connect, migrate, sweep once, register this process, start the worker (it
claims jobs from the table, woken by LISTEN) and the sweeper, then serve. Shutdown:
refuse new jobs, stop claiming, let the running ones finish within the grace period,
leave the waiting ones to any other process, close the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable
from types import FrameType

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.types import ExceptionHandler

from app.config import Settings, load_settings
from app.config_values import ConfigError
from app.db import DATABASE_UNAVAILABLE
from app.errors import AppError
from app.logs import log, setup_logging
from app.runtime import running_services
from app.security.guard import Guard
from app.security.secret_key import load_secret_key
from app.services import Services
from app.stories import Storyteller
from app.web.access import SecurityMiddleware, page_context
from app.web.assets import Assets
from app.web.compression import CompressionMiddleware
from app.web.errors import (
    handle_app_error,
    handle_database_down,
    handle_http_error,
    handle_unexpected,
)
from app.web.language import LanguageMiddleware
from app.web.routes import routes
from app.web.templates import STATIC_DIR, Templates, make_templates, warm_pages


def create_app(
    settings: Settings | None = None, *, storyteller: Storyteller | None = None
) -> Starlette:
    setup_logging()
    if settings is None:
        settings = load_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with running_services(settings, storyteller) as services:
            guard.log_mode()
            app.state.services = services
            restore_sigterm = _close_intake_on_sigterm(services)
            # Runs once the app serves (the loop is free after start-up completes): the
            # templates, and the household's catalogue and Babel's formats (app/i18n).
            language = settings.ui_language or services.household.language
            warming = asyncio.create_task(
                asyncio.to_thread(warm_pages, app.state.templates, language),
                name="warm_templates")
            try:
                yield
            finally:
                restore_sigterm()
                await warming  # a thread cannot be cancelled; it is done in milliseconds

    guard = Guard(
        settings, secret_key=load_secret_key(settings) if settings.household_password else None
    )

    def every_page(request: Request) -> dict[str, object]:
        return {"demo_mode": settings.storyteller == "demo", **page_context(guard, request)}

    exception_handlers: dict[type[BaseException] | int, ExceptionHandler] = {
        AppError: handle_app_error,
        HTTPException: handle_http_error,
        Exception: handle_unexpected,
    }
    for error_class in DATABASE_UNAVAILABLE:
        exception_handlers[error_class] = handle_database_down

    assets = Assets(STATIC_DIR)  # once per app: the static files, for the routes and pages
    app = Starlette(
        routes=routes(assets),
        lifespan=lifespan,
        exception_handlers=exception_handlers,
        # Compression outermost: it sees the final response, security headers and all.
        # The language before the guard: its refusals are pages in the reader's language too.
        middleware=[Middleware(CompressionMiddleware),
                    Middleware(LanguageMiddleware, settings=settings),
                    Middleware(SecurityMiddleware, guard=guard)],
    )
    app.state.settings = settings
    app.state.guard = guard
    app.state.templates = Templates(
        lambda: make_templates(settings.tz, static=assets.urls, inline=assets.inline,
                               card_poll_s=settings.card_poll_s))
    app.state.page_context = every_page
    return app


def _close_intake_on_sigterm(services: Services) -> Callable[[], None]:
    """At SIGTERM, refuse new jobs (503) and claim no more at once, before uvicorn starts
    its own shutdown: waiting jobs stay pending for any other process."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        if not services.intake.closed:
            services.intake.closed = True
            services.worker.stop_claiming()
            log("shutdown_requested", signal="SIGTERM")
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, on_sigterm)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


def _exit_zero_after_graceful_sigterm() -> None:
    """After its graceful shutdown, uvicorn restores the handler it found and re-raises
    SIGTERM into it; with the default one the process would end "killed by SIGTERM" even
    though everything was stopped in order. This handler makes that last step exit 0."""
    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


def _app_or_exit() -> Starlette:
    try:
        app = create_app()
    except ConfigError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    _exit_zero_after_graceful_sigterm()
    return app


def __getattr__(name: str) -> Starlette:
    """`app.main:app`, what uvicorn serves, is built when uvicorn asks for it, once: a test
    or a tool that imports this module reads no settings and builds nothing."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    built = globals()["app"] = _app_or_exit()
    return built
