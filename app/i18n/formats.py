"""Dates, numbers and lists written the way the request's language writes them (Babel);
money: app/money/amounts.py.

    day(moment, timezone)      # "29 November 2026"; in French "29 nov. 2026"; "2026年11月29日"
    when(moment, timezone)     # "29 November 2026, 20:01"; in Arabic "٢٩ نوفمبر ٢٠٢٦، ٨:٠١ م"
    calendar_day(date)         # a date with no moment, as `day` writes one: "11 December 2026"
    short_day(date)            # "29 Nov", a chart's end
    number(7)                  # "7" in the language's own digits
    names(["a", "b", "c"])     # "a, b and c"; in Spanish "a, b y c"

English keeps the app's own forms (app/dates.py): the contract quotes them. A
language's record says how long a day is written and whether its days and months follow
CLDR's skeletons (Japanese: "11月29日", "2026年11月"; app/languages.py).
"""

from __future__ import annotations

from datetime import date, datetime, tzinfo

from app import dates
from app.i18n import ENGLISH, current
from app.languages import language_of

_NUMBERS = "default"  # the locale's own digits (Babel's default is always Latin)


# Babel is imported by the first page that needs it, not at start-up.
def day(moment: datetime, timezone: tzinfo) -> str:
    from babel.dates import format_date

    language = current()
    if language == ENGLISH:
        return dates.day(moment, timezone)
    local = _local(moment, timezone)
    if local is None:
        return dates.day(moment, timezone)
    return format_date(local, language_of(language).day_format, locale=language)


def when(moment: datetime, timezone: tzinfo) -> str:
    from babel.dates import format_date, format_time

    language = current()
    local = _local(moment, timezone) if language != ENGLISH else None
    if local is None:
        return dates.when(moment, timezone)
    written = language_of(language)
    between = " " if written.dates_by_skeleton else ", "
    return (f"{format_date(local, written.day_format, locale=language)}{between}"
            f"{format_time(local, 'short', locale=language)}")


def calendar_day(moment: date) -> str:
    """A day of the calendar (a model's shutdown), written as `day` writes a moment's."""
    language = current()
    if language == ENGLISH:
        return f"{moment.day} {moment:%B} {moment.year}"  # app/dates.py's `day`
    from babel.dates import format_date

    return format_date(moment, language_of(language).day_format, locale=language)


def short_day(moment: date) -> str:
    return _day_of(moment, f"{moment.day} {moment:%b}", "d MMM", "MMMd")


def long_day(moment: date) -> str:
    """A day in a table of days: "29 November"."""
    return _day_of(moment, f"{moment.day} {moment:%B}", "d MMMM", "MMMMd")


def month_name(moment: date) -> str:
    """A month and its year: "December 2026"; in Polish "grudzień 2026"."""
    return _day_of(moment, f"{moment:%B} {moment.year}", "LLLL y", "yMMMM")


def number(value: int) -> str:
    from babel.numbers import format_decimal

    language = current()
    if language == ENGLISH:
        return str(value)
    return format_decimal(value, locale=language, numbering_system=_NUMBERS)


def names(items: list[str]) -> str:
    """A list as the language joins it: "a, b and c", "a, b y c", "a، وb، وc"."""
    from babel.lists import format_list

    return format_list(items, locale=current()) if items else ""


def _day_of(moment: date, english: str, pattern: str, skeleton: str) -> str:
    """A day or a month: in English as the app writes it (`english`), else by the app's
    `pattern`, or by CLDR's `skeleton` for a language whose days are written in another
    order."""
    language = current()
    if language == ENGLISH:
        return english
    from babel.dates import format_date, format_skeleton

    if language_of(language).dates_by_skeleton:
        return format_skeleton(skeleton, moment, locale=language)
    return format_date(moment, pattern, locale=language)


def _local(moment: datetime, timezone: tzinfo) -> datetime | None:
    """The moment in the household's zone, or None where Python's calendar ends
    (app/dates.py then writes it as stored)."""
    try:
        local = dates.to_utc(moment).astimezone(timezone)
    except (OverflowError, ValueError):
        return None
    return local
