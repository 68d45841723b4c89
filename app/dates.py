"""Dates as the household reads them, and as the contract writes them. No I/O.

    day(moment, timezone)         # "29 November 2026", in the household's time zone
    when(moment, timezone)        # "29 November 2026, 20:01"
    file_stamp(moment, timezone)  # "2026-11-29-2001" (a file name's date and time)
    file_day(moment, timezone)    # "2026-11-29"
    iso_time(moment)              # "2026-11-29T20:01:02Z" (the JSON API's form)

Every date a page, a download or an export shows is written here, and none of these
raises for any datetime: one stored date must not break the home page or a backup.
A datetime without a zone is taken as UTC (asyncpg reads PostgreSQL's `infinity` and
`-infinity` as a naive datetime.max and datetime.min). A moment whose local time falls
outside Python's years 1-9999 (9999-12-31 23:30 UTC is year 10000 in Paris) is shown as
stored, in UTC, and `when` says so.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo

_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)


def to_utc(moment: datetime) -> datetime:
    """The moment in UTC; one that UTC would put beyond year 9999 (or before year 1), the
    calendar's end (only a fixed offset within hours of those ends does)."""
    offset = moment.utcoffset()
    if offset is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return _LATEST if offset < timedelta(0) else _EARLIEST


def _local(moment: datetime, timezone: tzinfo) -> tuple[datetime, str]:
    """The moment in `timezone` and "", or, where that has no year Python can hold, the
    moment in UTC and " UTC" (zoneinfo raises OverflowError or ValueError, by the zone)."""
    utc = to_utc(moment)
    try:
        return utc.astimezone(timezone), ""
    except (OverflowError, ValueError):
        return utc, " UTC"


# The year by hand, not %Y: strftime pads years before 1000 on some platforms, not others.
def day(moment: datetime, timezone: tzinfo) -> str:
    """A date as the household reads it: `29 November 2026`, in its own time zone."""
    local, _ = _local(moment, timezone)
    return f"{local.day} {local:%B} {local.year}"


def when(moment: datetime, timezone: tzinfo) -> str:
    """A date and time as the household reads them: `29 November 2026, 20:01`."""
    local, zone = _local(moment, timezone)
    return f"{local.day} {local:%B} {local.year}, {local:%H:%M}{zone}"


def file_stamp(moment: datetime, timezone: tzinfo) -> str:
    """A date and time for a file name, sorting as it reads: `2026-11-29-2001`."""
    local, _ = _local(moment, timezone)
    return f"{local.year:04}-{local:%m-%d-%H%M}"


def file_day(moment: datetime, timezone: tzinfo) -> str:
    """A date for a file name: `2026-11-29`, the day of its file_stamp."""
    return file_stamp(moment, timezone)[: len("2026-11-29")]


def iso_time(moment: datetime | None, *, exact: bool = False) -> str | None:
    """The contract's timestamps: UTC with `Z`, in whole seconds; `exact` keeps the
    microseconds (a backup restores a story at its very moment)."""
    if moment is None:
        return None
    utc = to_utc(moment).replace(tzinfo=None)
    if not exact:
        utc = utc.replace(microsecond=0)
    # isoformat, not strftime: the same text at a tenth of the cost (three on every poll).
    return utc.isoformat() + "Z"
