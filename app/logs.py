"""Structured logs: one line per event, `event=name key=value ...`, on stdout.

    log("guard_lost", level=logging.WARNING, job_id=17, transition="complete")
    log("worker_error", level=logging.ERROR, job_id=17, exc_info=error)   # + its traceback
    log_caught("sweep_failed", error, expected=DATABASE_UNAVAILABLE)

An unexpected exception is logged once, where it is caught, as an ERROR whose line is
followed by its traceback (the standard multi-line form); an expected refusal (an outage
waited out, a provider's error answer) stays one line.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys

LOGGER_NAME = "bedtime"
logger = logging.getLogger(LOGGER_NAME)
# The server's own logger: after the app's 500 handler has answered, Starlette raises the
# exception again so that servers can log it, and uvicorn does, with the same traceback.
SERVER_LOGGER_NAME = "uvicorn.error"
_LOGGED = "_bedtime_logged"  # set on an exception whose traceback is in the log already
# uvicorn's line for each request it answers.
ACCESS_LOGGER_NAME = "uvicorn.access"
# What an open page asks for again every few seconds: a card's job, whether spending has
# closed, a picture or a reading being made. One tablet left open all evening would write
# a line every 3 s for each, and bury the log's events.
POLLED_PATH = re.compile(
    r"(?:/stories/jobs/\d+|/closed|/stories/\d+/(?:picture|narration)/frame)(?:\?.*)?")


class _NotLoggedAlready(logging.Filter):
    """Drops a record whose exception the app has logged with its traceback: once is enough."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not getattr(error, _LOGGED, False)


class _NotAnAnsweredPoll(logging.Filter):
    """Drops uvicorn's line for a poll answered 2xx or 304: a refused or failed poll, and
    every other request, keep theirs. Dropped before the line is formatted and written,
    the costly part: a poll's CPU time counts (docs/performance.md)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not isinstance(args, tuple) or len(args) != 5:  # not uvicorn's request line
            return True
        _client, method, path, _version, status = args
        answered = isinstance(status, int) and (200 <= status < 300 or status == 304)
        return not (method == "GET" and answered and isinstance(path, str)
                    and POLLED_PATH.fullmatch(path) is not None)


def setup_logging() -> None:
    """Send the app's events to stdout once, however many apps a process builds."""
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = True
    server = logging.getLogger(SERVER_LOGGER_NAME)
    if not any(isinstance(f, _NotLoggedAlready) for f in server.filters):
        server.addFilter(_NotLoggedAlready())
    access = logging.getLogger(ACCESS_LOGGER_NAME)
    if not any(isinstance(f, _NotAnAnsweredPoll) for f in access.filters):
        access.addFilter(_NotAnAnsweredPoll())


def _value(value: object) -> str:
    text = str(value)
    if text == "" or any(c.isspace() or c in '"=' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def log(event: str, *, level: int = logging.INFO, exc_info: BaseException | bool = False,
        **fields: object) -> None:
    """`exc_info`: an exception (or True, inside an `except`) whose traceback follows the line."""
    parts = [f"event={event}"] + [f"{key}={_value(value)}" for key, value in fields.items()]
    logger.log(level, " ".join(parts), exc_info=exc_info or None)
    error = sys.exc_info()[1] if exc_info is True else exc_info or None
    if isinstance(error, BaseException) and logger.isEnabledFor(level):
        with contextlib.suppress(AttributeError):  # a few built-in exceptions take no attributes
            setattr(error, _LOGGED, True)


def causes(error: BaseException) -> str:
    """The error and what caused it, for a log's `detail`: "APIConnectionError('Connection
    error.') <- ReadError('')", so the line says which connection fault it was."""
    chain: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(chain) < 4:
        seen.add(id(current))
        chain.append(repr(current))
        current = current.__cause__ or current.__context__
    return " <- ".join(chain)


def log_caught(event: str, error: BaseException, *,
               expected: tuple[type[BaseException], ...] = (), **fields: object) -> None:
    """A caught exception: one WARNING line when it is one of `expected` (a database outage
    a loop waits out), else an ERROR with its traceback (a defect, to be found and fixed)."""
    if isinstance(error, expected):
        log(event, level=logging.WARNING, exc_info=False, **fields, error=repr(error))
    else:
        log(event, level=logging.ERROR, **fields, error=repr(error), exc_info=error)
