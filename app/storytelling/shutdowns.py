"""Configured models whose shutdown is announced, and when the home page says so.

The date is the provider's own answer to the start-up `GET /models/{id}` (`shutdown_date`),
else the pinned openai library's list (app/storytelling/models.py).

    shutdowns = Shutdowns()
    shutdowns.announce("STORY_MODEL", "gpt-6-luna", said=model.shutdown_date,
                       library=chat_models().deprecated)   # one WARNING, once
    shutdowns.due(today)          # what the home page names: from 60 days before the date
    parse_shutdown_date(1796990400)   # date(2026, 12, 11); "2026-12-11" too; "soon": None

The provider's field is untrusted: an ISO date (or date and time) or a Unix timestamp in
seconds is a date; anything else, or a day outside EARLIEST_DAY..LATEST_DAY (a timestamp
in milliseconds, a zero), is no date, passed over quietly (the library's date, if any, is
taken instead).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from app.logs import log

# The home page names a model this many days before its shutdown, and from then on.
NOTICE_FROM_DAYS = 60
# A shutdown date outside these is not one (a timestamp in milliseconds, 0, a typo).
EARLIEST_DAY = date(2000, 1, 1)
LATEST_DAY = date(2199, 12, 31)
PROVIDER, LIBRARY = "provider", "openai_library"
_SECONDS = re.compile(r"\d{1,12}(\.\d+)?")


def parse_shutdown_date(said: object) -> date | None:
    """The day `said` names (an ISO date or date and time, a Unix timestamp in seconds, as
    a number or a string of digits); None for anything else."""
    if isinstance(said, bool):  # an int to Python, never a date
        return None
    if isinstance(said, str):
        text = said.strip()
        if _SECONDS.fullmatch(text):
            return _bounded(_from_timestamp(float(text)))
        return _bounded(_from_iso(text))
    if isinstance(said, int | float):
        return _bounded(_from_timestamp(float(said)))
    return None


def _from_timestamp(seconds: float) -> date | None:
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).date()
    except (OverflowError, OSError, ValueError):
        return None


def _from_iso(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.astimezone(UTC).date() if moment.tzinfo else moment.date()


def _bounded(day: date | None) -> date | None:
    return day if day is not None and EARLIEST_DAY <= day <= LATEST_DAY else None


@dataclass(frozen=True)
class ModelShutdown:
    """A configured model (`setting` names it) and the day its provider shuts it down."""

    setting: str
    model: str
    on: date

    def shown(self, today: date) -> bool:
        return today >= self.on - timedelta(days=NOTICE_FROM_DAYS)

    def passed(self, today: date) -> bool:
        """The day has come: the model may be answering no more."""
        return today >= self.on


class Shutdowns:
    """What this process learnt at start-up (its memory only: every process asks)."""

    def __init__(self) -> None:
        self._announced: dict[str, ModelShutdown] = {}
        self._said: set[str] = set()

    def announce(self, setting: str, model: str, *, said: object,
                 library: Mapping[str, date | None]) -> None:
        """The shutdown of `setting`'s `model`: the provider's date (`said`: its answer's
        `shutdown_date`, as sent) or else the library's, in one WARNING per setting."""
        provided = parse_shutdown_date(said)
        on: date | None
        if said is not None and said != "" and provided is None:
            log("shutdown_date_unreadable", setting=setting, model=model,
                said=repr(said)[:80])
        if provided is not None:
            on, source = provided, PROVIDER
        elif model in library:
            on, source = library[model], LIBRARY
        else:
            return
        if setting in self._said:
            return
        self._said.add(setting)
        log("model_deprecated", level=logging.WARNING, setting=setting, model=model,
            shutdown=on.isoformat() if on else "not announced", source=source,
            detail=f"{'the provider' if source == PROVIDER else 'the openai library'} "
                   f"announces its shutdown: set {setting} to a current model")
        if on is not None:
            self._announced[setting] = ModelShutdown(setting, model, on)

    def due(self, today: date) -> list[ModelShutdown]:
        """The shutdowns the home page names today, the soonest first."""
        return sorted((shutdown for shutdown in self._announced.values()
                       if shutdown.shown(today)), key=lambda s: (s.on, s.setting))
