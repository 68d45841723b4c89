"""Dates, numbers and lists written the way the request's language writes them (Babel);
money: app/money/amounts.py.

    day(moment, timezone)      # "29 November 2026"; in French "29 nov. 2026"; "2026年11月29日"
    when(moment, timezone)     # "29 November 2026, 20:01"; in Arabic "29 نوفمبر 2026، 8:01 م"
    calendar_day(date)         # a date with no moment, as `day` writes one: "11 December 2026"
    short_day(date)            # "29 Nov", a chart's end
    long_day(date)             # "29 November"; in Spanish "29 de noviembre"
    month_name(date)           # "November 2026"; in Spanish "noviembre de 2026"
    number(7)                  # "7" in the language's own digits
    names(["a", "b", "c"])     # "a, b and c"; in Spanish "a, b y c"

English keeps the app's own forms (app/dates.py): the contract quotes them. A
language's record says how long a day is written (app/languages.py); a day without its
year and a month are written by CLDR's skeletons, which know each language's order and
linking words ("29 de noviembre", "4. Dezember", "11月29日"), and a day and its time are
joined as the language joins them (the Arabic comma "،").
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
    from babel import Locale

    joined: str = Locale.parse(language).datetime_formats["medium"]  # "{1}, {0}", "{1}، {0}"
    return joined.format(format_time(local, "short", locale=language),
                         format_date(local, language_of(language).day_format, locale=language))


def calendar_day(moment: date) -> str:
    """A day of the calendar (a model's shutdown), written as `day` writes a moment's."""
    language = current()
    if language == ENGLISH:
        return f"{moment.day} {moment:%B} {moment.year}"  # app/dates.py's `day`
    from babel.dates import format_date

    return format_date(moment, language_of(language).day_format, locale=language)


def short_day(moment: date) -> str:
    return _day_of(moment, f"{moment.day} {moment:%b}", "MMMd")


def long_day(moment: date) -> str:
    """A day in a table of days or a sentence: "29 November"; "29 de noviembre"."""
    return _day_of(moment, f"{moment.day} {moment:%B}", "MMMMd")


def month_name(moment: date) -> str:
    """A month and its year: "December 2026"; in Spanish "diciembre de 2026", in Polish
    "grudzień 2026"."""
    return _day_of(moment, f"{moment:%B} {moment.year}", "yMMMM")


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


def _day_of(moment: date, english: str, skeleton: str) -> str:
    """A day or a month: in English as the app writes it (`english`), else by CLDR's
    `skeleton` ("MMMMd": the language's own order and words, "4 de diciembre"); a bare
    pattern ("d MMMM") would drop them ("4 diciembre")."""
    language = current()
    if language == ENGLISH:
        return english
    from babel.dates import format_skeleton

    return format_skeleton(skeleton, moment, locale=language)


def _local(moment: datetime, timezone: tzinfo) -> datetime | None:
    """The moment in the household's zone, or None where Python's calendar ends
    (app/dates.py then writes it as stored)."""
    try:
        local = dates.to_utc(moment).astimezone(timezone)
    except (OverflowError, ValueError):
        return None
    return local
