"""Structured logs: one line per event, `event=name key=value ...`, on stdout.

    log("guard_lost", level=logging.WARNING, job_id=17, transition="complete")
"""

from __future__ import annotations

import logging
import sys

LOGGER_NAME = "bedtime"
logger = logging.getLogger(LOGGER_NAME)


def setup_logging() -> None:
    """Send the app's events to stdout once, however many apps a process builds."""
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = True


def _value(value: object) -> str:
    text = str(value)
    if text == "" or any(c.isspace() or c in '"=' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def log(event: str, *, level: int = logging.INFO, exc_info: bool = False,
        **fields: object) -> None:
    """`exc_info`: the exception being handled, its traceback after the line."""
    parts = [f"event={event}"] + [f"{key}={_value(value)}" for key, value in fields.items()]
    logger.log(level, " ".join(parts), exc_info=exc_info)
