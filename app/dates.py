"""Dates as the household reads them, and as the contract writes them. No I/O.

    day(moment, timezone)      # "29 November 2026", in the household's time zone
    when(moment, timezone)     # "29 November 2026, 20:01"
    iso_time(moment)           # "2026-11-29T20:01:02Z" (the JSON API's form)
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo


def day(moment: datetime, timezone: tzinfo) -> str:
    """A date as the household reads it: `29 November 2026`, in its own time zone."""
    local = moment.astimezone(timezone)
    return f"{local.day} {local:%B %Y}"


def when(moment: datetime, timezone: tzinfo) -> str:
    """A date and time as the household reads them: `29 November 2026, 20:01`."""
    local = moment.astimezone(timezone)
    return f"{local.day} {local:%B %Y, %H:%M}"


def iso_time(moment: datetime | None, *, exact: bool = False) -> str | None:
    """The contract's timestamps: UTC with `Z`, in whole seconds; `exact` keeps the
    microseconds (a backup restores a story at its very moment)."""
    if moment is None:
        return None
    utc = moment.astimezone(UTC)
    if exact:
        return utc.replace(tzinfo=None).isoformat() + "Z"
    # isoformat, not strftime: the same text at a tenth of the cost (three on every poll).
    return utc.replace(tzinfo=None, microsecond=0).isoformat() + "Z"
