"""An amount of money written the way the request's language writes it (Babel).

    money(4_980_000)           # "$4.98"; in French "4,98 $US", in Spanish "4,98 US$"

In a right-to-left page the "$" of Arabic's "US$" sits between Latin letters and the end:
the bidi algorithm gives it the line's direction and the reader saw "$US 4.98". A
left-to-right mark after the symbol keeps "US$" whole.

English keeps the app's own form (app/money's `dollars`): the contract quotes it. Dates,
numbers and lists: app/i18n/formats.py, which knows nothing of money.
"""

from __future__ import annotations

from decimal import Decimal

from app.i18n import ENGLISH, current, direction
from app.money import MICROS, dollars

_NUMBERS = "default"  # the locale's own digits, as app/i18n/formats.py writes numbers


# Babel is imported by the first page that needs it, not at start-up.
def money(micros: int) -> str:
    from babel.numbers import format_currency

    language = current()
    if language == ENGLISH:
        return dollars(micros)
    amount = Decimal(micros) / MICROS
    # As dollars() does: cents from a dollar up, else to a hundredth of a cent.
    amount = amount.quantize(Decimal("0.01") if amount >= 1 or amount == 0 else Decimal("0.0001"))
    written = format_currency(amount, "USD", locale=language, currency_digits=False,
                              decimal_quantization=False, numbering_system=_NUMBERS)
    return written.replace("US$", "US$\u200e") if direction(language) == "rtl" else written
