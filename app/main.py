"""The app factory and the lifespan that owns everything long-lived.

    app = create_app()                              # what uvicorn serves (the Procfile)
    app = create_app(settings, storyteller=fake)    # what tests build, as many as they like

Start-up: connect, migrate, sweep once, restore the pending jobs, start the worker and
the sweeper, then serve. Shutdown: refuse new jobs, let the running one finish within
the grace period, stop, close the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable

import openai
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request

from app.config import ConfigError, Settings, load_settings
from app.db import DATABASE_UNAVAILABLE, connect_pool, database_url
from app.errors import AppError
from app.logs import log, setup_logging
from app.moderation import MODERATION_TIMEOUT_S, ModeratedStoryteller, Moderator
from app.routes import routes
from app.security import Guard, SecurityMiddleware, load_secret_key, login_routes
from app.services import Services
from app.storytellers import DemoStoryteller, OpenAIStoryteller, Storyteller
from app.web import (
    handle_app_error,
    handle_database_down,
    handle_http_error,
    handle_unexpected,
    make_templates,
)


def make_storyteller(settings: Settings) -> Storyteller:
    if settings.storyteller == "openai":
        client = openai.AsyncOpenAI(
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url,
            max_retries=0,  # one request per job, ever: a retry is a second bill
            timeout=settings.llm_timeout_s,
        )
        return OpenAIStoryteller(client, model=settings.story_model)
    return DemoStoryteller(delay_s=settings.demo_delay_s)


def make_moderator(settings: Settings) -> Moderator | None:
    """MODERATION=on screens through the provider's endpoint; the demo storyteller has none."""
    if not settings.moderation:
        return None
    if settings.storyteller != "openai":
        # Demo stories are assembled offline from fixed, gentle templates, and there is no
        # provider to ask: nothing to screen, and no key to screen with.
        log("moderation_skipped", level=logging.WARNING, storyteller=settings.storyteller,
            reason="no moderation endpoint without a provider")
        return None
    client = openai.AsyncOpenAI(
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        max_retries=0,  # the moderator decides about retries itself
        timeout=MODERATION_TIMEOUT_S,
    )
    return Moderator(client)


def create_app(
    settings: Settings | None = None, *, storyteller: Storyteller | None = None
) -> Starlette:
    setup_logging()
    if settings is None:
        settings = load_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        url = await asyncio.to_thread(database_url, settings)  # may start the embedded server
        db = connect_pool(url)
        await db.connect()
        chosen_storyteller = storyteller or make_storyteller(settings)
        moderator = make_moderator(settings)
        if moderator is not None:
            chosen_storyteller = ModeratedStoryteller(chosen_storyteller, moderator)
        services = Services.build(settings, db, chosen_storyteller, moderator)
        guard.log_mode()
        app.state.services = services
        try:
            await services.start()
            restore_sigterm = _close_intake_on_sigterm(services)
            try:
                yield
            finally:
                restore_sigterm()
                await services.stop()
        finally:
            await chosen_storyteller.aclose()
            await db.disconnect()

    guard = Guard(
        settings, secret_key=load_secret_key(settings) if settings.household_password else None
    )

    def page_context(request: Request) -> dict[str, object]:
        return {"demo_mode": settings.storyteller == "demo", **guard.page_context(request)}

    exception_handlers: dict[type[Exception] | int, Callable] = {
        AppError: handle_app_error,
        HTTPException: handle_http_error,
        Exception: handle_unexpected,
    }
    for error_class in DATABASE_UNAVAILABLE:
        exception_handlers[error_class] = handle_database_down

    app = Starlette(
        routes=login_routes() + routes(),
        lifespan=lifespan,
        exception_handlers=exception_handlers,
        middleware=[Middleware(SecurityMiddleware, guard=guard)],
    )
    app.state.settings = settings
    app.state.guard = guard
    app.state.templates = make_templates(settings.tz)
    app.state.page_context = page_context
    return app


def _close_intake_on_sigterm(services: Services) -> Callable[[], None]:
    """At SIGTERM, refuse new jobs at once (503), before uvicorn starts its own shutdown."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: object) -> None:
        if not services.intake.closed:
            services.intake.closed = True
            log("shutdown_requested", signal="SIGTERM")
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, on_sigterm)
    return lambda: signal.signal(signal.SIGTERM, previous)


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


app = _app_or_exit()
