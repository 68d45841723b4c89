"""The household's settings, set on the Children page: its bedtime, from which the
automatic theme's Night begins (app/web/preferences.py), and its pages' language.

    household = Household(db)
    await household.load()                      # the stored bedtime (at start, on its page)
    household.bedtime                           # the last one known, for a page being rendered
    await household.set_bedtime(parse_bedtime("19:15"))    # Invalid names the field
    household.language                          # "es", or None: each browser's
    await household.set_language(parse_language("es"))

Every page carries the bedtime and the language, and rendering one does not wait for the
database: a page gets the last ones this process knows, and ones older than
BEDTIME_FRESH_S start a read in the background, so a setting made in another process
reaches this one's pages within about that long (at once in the process that made it).
"""

from __future__ import annotations

import asyncio
import re
import time as clock
from datetime import time

from app.db import DATABASE_UNAVAILABLE
from app.errors import Invalid
from app.languages import LANGUAGES
from app.logs import log_caught
from app.queries import Queryable, Statements

DEFAULT_BEDTIME = time(18, 30)  # migration 022's default, before the database is read
BEDTIME_EARLIEST = time(16, 0)  # the table's bounds: Night starts after the morning
BEDTIME_LATEST = time(23, 59)  # and before midnight
BEDTIME_FRESH_S = 30.0
_BEDTIME = re.compile(r"([01]\d|2[0-3]):([0-5]\d)(?::00)?")  # what <input type=time> sends


def parse_bedtime(value: object) -> time:
    """A bedtime from a form's time input ("18:30"), between BEDTIME_EARLIEST and
    BEDTIME_LATEST; Invalid naming the field otherwise."""
    match = _BEDTIME.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise Invalid("Bedtime must be a time of day, such as 18:30.", field="bedtime")
    bedtime = time(int(match.group(1)), int(match.group(2)))
    if not BEDTIME_EARLIEST <= bedtime <= BEDTIME_LATEST:
        raise Invalid(f"Bedtime must be in the evening, from {BEDTIME_EARLIEST:%H:%M} to "
                      f"{BEDTIME_LATEST:%H:%M}.", field="bedtime")
    return bedtime


def parse_language(value: object) -> str | None:
    """The household's language from a form or JSON: a story language, or "" / None for
    each browser's own; Invalid naming the field otherwise."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value not in LANGUAGES:
        raise Invalid(f"language must be one of {', '.join(LANGUAGES)}, or empty.",
                      field="language")
    return value


class Household(Statements):
    """The household's row (sql/queries/household.sql), and the bedtime last read from it."""

    def __init__(self, db: Queryable, *, fresh_s: float = BEDTIME_FRESH_S) -> None:
        super().__init__(db)
        self.fresh_s = fresh_s
        self._bedtime = DEFAULT_BEDTIME
        self._language: str | None = None
        self._read_at = float("-inf")  # clock.monotonic() of the last read
        self._reading: asyncio.Task[None] | None = None

    @property
    def bedtime(self) -> time:
        """The last bedtime known; one older than `fresh_s` is read again meanwhile."""
        self._freshen()
        return self._bedtime

    @property
    def language(self) -> str | None:
        """The last language known (None: each browser's), freshened as the bedtime is."""
        self._freshen()
        return self._language

    def _freshen(self) -> None:
        if clock.monotonic() - self._read_at > self.fresh_s and self._reading is None:
            try:
                self._reading = asyncio.get_running_loop().create_task(self._read_again())
            except RuntimeError:  # no loop running: the last one known will do
                pass

    async def load(self) -> time:
        """The stored bedtime and language (the ones pages are rendered with from now)."""
        row = await self._one("get_household")
        if row is not None:
            self._language = row["language"]
        self._keep((row["bedtime"] if row is not None else None) or DEFAULT_BEDTIME)
        return self._bedtime

    async def set_language(self, language: str | None) -> str | None:
        self._language = await self._val("set_language", {"language": language})
        return self._language

    async def set_bedtime(self, bedtime: time) -> time:
        stored: time | None = await self._val("set_bedtime", {"bedtime": bedtime})
        self._keep(stored or bedtime)
        return self._bedtime

    def _keep(self, bedtime: time) -> None:
        self._bedtime = bedtime
        self._read_at = clock.monotonic()

    async def _read_again(self) -> None:
        try:
            await self.load()
        except Exception as error:  # a page keeps the last bedtime known; tried again later
            self._read_at = clock.monotonic()
            log_caught("bedtime_read_failed", error, expected=DATABASE_UNAVAILABLE)
        finally:
            self._reading = None
