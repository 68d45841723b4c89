"""MONTHLY_BUDGET and PRICES, read from their text (app/config.py's parsers, for money).

    budget_micros("MONTHLY_BUDGET", "2.50")      # 2_500_000
    prices("PRICES", '{"my-model": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}')

Either raises ConfigError naming the variable: bad JSON, an unknown key, a price that is
not a finite number from 0 to 1,000 US dollars (per million tokens, or per image).
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation

from app.config_values import ConfigError
from app.money import Price, micros

BUDGET_MAX_USD = Decimal(1_000_000)
# The most a price may be, in US dollars per million tokens or per image: far above any
# model's, low enough that no cost the app reckons can overflow (a story's most possible
# cost is a few dollars even at this price; the ledger's bigint holds nine quintillion).
PRICE_MAX_USD = Decimal(1_000)
PRICE_KEYS = ("input_per_mtok", "output_per_mtok", "cached_per_mtok", "per_image",
              "audio_output_per_mtok")


def budget_micros(name: str, raw: str) -> int:
    try:
        amount = Decimal(raw.removeprefix("$"))
    except InvalidOperation:
        raise ConfigError(f"{name} must be an amount in US dollars (5, 2.50),"
                          f" got {raw!r}") from None
    if not amount.is_finite() or not 0 <= amount <= BUDGET_MAX_USD:
        raise ConfigError(f"{name} must be between 0 and {BUDGET_MAX_USD:,} US dollars,"
                          f" got {raw!r}")
    return micros(amount)


def prices(name: str, raw: str) -> dict[str, Price]:
    try:
        table = json.loads(raw, parse_float=Decimal, parse_int=Decimal)
    except ValueError as error:
        raise ConfigError(f"{name} must be JSON ({error.args[0]})") from None
    if not isinstance(table, dict):
        raise ConfigError(f'{name} must be a JSON object: {{"model": {{"input_per_mtok": ...}}}}')
    parsed = {}
    for model, entry in table.items():
        if not isinstance(entry, dict) or not entry:
            raise ConfigError(f"{name}: {model!r} must be an object of prices, such as"
                              ' {"input_per_mtok": 0.15, "output_per_mtok": 0.6}')
        unknown = sorted(set(entry) - set(PRICE_KEYS))
        if unknown:
            raise ConfigError(f"{name}: {model!r} has an unknown key {unknown[0]!r}"
                              f" (the keys: {', '.join(PRICE_KEYS)})")
        for key, value in entry.items():
            if (not isinstance(value, Decimal) or not value.is_finite()
                    or not 0 <= value <= PRICE_MAX_USD):
                raise ConfigError(f"{name}: {model!r} {key} must be a number of US dollars"
                                  f" from 0 to {PRICE_MAX_USD:,}, got {value}")
        parsed[model] = Price(input_per_mtok=entry.get("input_per_mtok", Decimal(0)),
                              output_per_mtok=entry.get("output_per_mtok", Decimal(0)),
                              cached_per_mtok=entry.get("cached_per_mtok"),
                              per_image=entry.get("per_image"),
                              audio_output_per_mtok=entry.get("audio_output_per_mtok"))
    return parsed

