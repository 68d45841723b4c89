"""Dates, numbers and money written the way the request's language writes them (Babel).

    day(moment, timezone)      # "29 November 2026"; in French "29 nov. 2026"
    when(moment, timezone)     # "29 November 2026, 20:01"; in Arabic "٢٩ نوفمبر ٢٠٢٦، ٨:٠١ م"
    short_day(date)            # "29 Nov", a chart's end
    money(micros)              # "$4.98"; in French "4,98 $US"
    number(7)                  # "7" in the language's own digits
    names(["a", "b", "c"])     # "a, b and c"; in Spanish "a, b y c"

English keeps the app's own forms (app/dates.py, app/money): the contract quotes them.
"""

from __future__ import annotations

from datetime import date, datetime, tzinfo
from decimal import Decimal

from app import dates
from app.i18n import ENGLISH, current
from app.money import MICROS, dollars

_NUMBERS = "default"  # the locale's own digits (Babel's default is always Latin)
_DAY_FORMAT = {"ar": "long"}  # "4 ديسمبر 2026" reads better than its slashed medium form


# Babel is imported by the first page that needs it, not at start-up.
def day(moment: datetime, timezone: tzinfo) -> str:
    from babel.dates import format_date

    language = current()
    if language == ENGLISH:
        return dates.day(moment, timezone)
    local = _local(moment, timezone)
    if local is None:
        return dates.day(moment, timezone)
    return format_date(local, _DAY_FORMAT.get(language, "medium"), locale=language)


def when(moment: datetime, timezone: tzinfo) -> str:
    from babel.dates import format_date, format_time

    language = current()
    local = _local(moment, timezone) if language != ENGLISH else None
    if local is None:
        return dates.when(moment, timezone)
    return (f"{format_date(local, _DAY_FORMAT.get(language, 'medium'), locale=language)}, "
            f"{format_time(local, 'short', locale=language)}")


def short_day(moment: date) -> str:
    from babel.dates import format_date

    language = current()
    if language == ENGLISH:
        return f"{moment.day} {moment:%b}"
    return format_date(moment, "d MMM", locale=language)


def long_day(moment: date) -> str:
    """A day in a table of days: "29 November"."""
    from babel.dates import format_date

    language = current()
    if language == ENGLISH:
        return f"{moment.day} {moment:%B}"
    return format_date(moment, "d MMMM", locale=language)


def month_name(moment: date) -> str:
    """A month and its year: "December 2026"; in Polish "grudzień 2026"."""
    from babel.dates import format_date

    language = current()
    if language == ENGLISH:
        return f"{moment:%B} {moment.year}"
    return format_date(moment, "LLLL y", locale=language)


def money(micros: int) -> str:
    from babel.numbers import format_currency

    language = current()
    if language == ENGLISH:
        return dollars(micros)
    amount = Decimal(micros) / MICROS
    # As dollars() does: cents from a dollar up, else to a hundredth of a cent.
    amount = amount.quantize(Decimal("0.01") if amount >= 1 or amount == 0 else Decimal("0.0001"))
    return format_currency(amount, "USD", locale=language, currency_digits=False,
                           decimal_quantization=False, numbering_system=_NUMBERS)


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


def _local(moment: datetime, timezone: tzinfo) -> datetime | None:
    """The moment in the household's zone, or None where Python's calendar ends
    (app/dates.py then writes it as stored)."""
    try:
        local = dates.to_utc(moment).astimezone(timezone)
    except (OverflowError, ValueError):
        return None
    return local
