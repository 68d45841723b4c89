"""Money: what each call to the provider cost, the month's budget, and set-asides.

Amounts are whole micro-dollars (int: 1 USD = 1,000,000), exact and summable in SQL;
a price is US dollars per million tokens (or per picture), a Decimal.

    price = Price(input_per_mtok=Decimal("0.1"), output_per_mtok=Decimal("0.5"))
    charge = price.charge(Usage(input_tokens=900, output_tokens=1200))   # micro-dollars
    usd(charge)     # "0.000690"
    bounded(reported, most)   # the provider's report as a Usage, or None: not one it could make
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

MICROS = 1_000_000
PER_MTOK = Decimal(1_000_000)


@dataclass(frozen=True)
class MonthBudget:
    """MONTHLY_BUDGET for the month under way: its cap and its first midnight (in TZ)."""

    limit_micros: int
    month_start: datetime


@dataclass(frozen=True)
class Usage:
    """What the provider reported for one call."""

    input_tokens: int = 0  # cached ones included, as OpenAI counts them
    cached_tokens: int = 0
    output_tokens: int = 0
    images: int = 0
    audio_tokens: int = 0  # of the output tokens, those that are audio (a narration's)


def bounded(reported: Usage, most: Usage) -> Usage | None:
    """A provider's usage report read as numbers the call could have produced: each count a
    whole number from 0 to `most`'s (cached tokens at most the input's); None for anything
    else (negative, absurd, not a number). The report is untrusted input: a server may send
    `-5`, `1e300`, `"many"` or 10**18, and none of them may lose a story or lock a month."""
    counts: dict[str, int] = {}
    for name, value in vars(reported).items():
        ceiling = (counts["input_tokens"] if name == "cached_tokens" else
                   counts["output_tokens"] if name == "audio_tokens" else getattr(most, name))
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= ceiling:
            return None
        counts[name] = value
    return Usage(**counts)


@dataclass(frozen=True)
class Price:
    """A model's price: US dollars per million tokens, and per picture where it has one."""

    input_per_mtok: Decimal = Decimal(0)
    output_per_mtok: Decimal = Decimal(0)
    cached_per_mtok: Decimal | None = None  # None: as the input's
    per_image: Decimal | None = None  # a picture at this price, not by its tokens
    audio_output_per_mtok: Decimal | None = None  # audio written (a narration); None: as output

    def cost_usd(self, usage: Usage) -> Decimal:
        if usage.images and self.per_image is not None:
            return self.per_image * usage.images
        cached = min(usage.cached_tokens, usage.input_tokens)
        cached_rate = self.input_per_mtok if self.cached_per_mtok is None else self.cached_per_mtok
        audio = min(usage.audio_tokens, usage.output_tokens)
        audio_rate = (self.output_per_mtok if self.audio_output_per_mtok is None
                      else self.audio_output_per_mtok)
        return ((usage.input_tokens - cached) * self.input_per_mtok + cached * cached_rate
                + (usage.output_tokens - audio) * self.output_per_mtok
                + audio * audio_rate) / PER_MTOK

    def charge(self, usage: Usage) -> int:
        """The call's cost in micro-dollars (half a micro-dollar rounds up)."""
        return micros(self.cost_usd(usage))

    def as_json(self) -> dict[str, str | None]:
        """The price as recorded with each call (a later change rewrites no history); an
        audio rate only where the model has one of its own."""
        return {name: None if value is None else str(value)
                for name, value in vars(self).items()
                if not (name == "audio_output_per_mtok" and value is None)}


def micros(amount_usd: Decimal) -> int:
    return int((amount_usd * MICROS).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def usd(amount_micros: int) -> str:
    """Micro-dollars as the contract's decimal string of US dollars: "0.012300"."""
    return str((Decimal(amount_micros) / MICROS).quantize(Decimal("0.000001")))


def dollars(amount_micros: int) -> str:
    """For a parent: "$4.98"; below a dollar, to a hundredth of a cent with no zeros past
    the cents ("$0.0352", "$0.05"), so a month of small calls never reads "$0.00"."""
    amount = Decimal(amount_micros) / MICROS
    if amount >= 1 or amount == 0:
        return f"${amount.quantize(Decimal('0.01'))}"
    text = str(amount.quantize(Decimal("0.0001"))).rstrip("0")
    whole, _, cents = text.partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"
