"""Dates, lists and money as each language writes them (app/i18n/formats.py,
app/money/amounts.py), and names kept in the case the family typed them: a parent reading
Spanish, Arabic or Polish meets no form of another language."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from babel.messages.pofile import read_po

from app.i18n import speaking
from app.i18n.formats import long_day, month_name, short_day, when
from app.money.amounts import money
from tests.helpers.platform import ROOT

DECEMBER_4 = date(2026, 12, 4)


@pytest.mark.parametrize(("language", "day", "month"), [
    ("en", "4 December", "December 2026"),
    ("es", "4 de diciembre", "diciembre de 2026"),
    ("pt", "4 de dezembro", "dezembro de 2026"),
    ("de", "4. Dezember", "Dezember 2026"),
    ("pl", "4 grudnia", "grudzień 2026"),  # a day's month in the genitive, a month alone not
    ("ja", "12月4日", "2026年12月"),
])
def test_a_day_and_a_month_take_the_language_s_own_words_and_case(language, day, month):
    with speaking(language):
        assert (long_day(DECEMBER_4), month_name(DECEMBER_4)) == (day, month)


def test_a_chart_s_short_day_keeps_the_language_s_order():
    with speaking("de"):
        assert short_day(DECEMBER_4) == "4. Dez."
    with speaking("es"):
        assert short_day(DECEMBER_4) == "4 dic"


def test_arabic_joins_a_day_and_its_time_with_the_arabic_comma():
    with speaking("ar"):
        written = when(datetime(2026, 12, 4, 20, 1, tzinfo=UTC), UTC)
    assert "،" in written and "," not in written
    with speaking("es"):
        assert when(datetime(2026, 12, 4, 20, 1, tzinfo=UTC), UTC) == "4 dic 2026, 20:01"


def test_dollars_read_us_dollar_in_spanish_and_stay_whole_right_to_left():
    with speaking("es"):
        assert money(5_000_000) == "5,00\xa0US$"
    with speaking("ar"):
        written = money(5_000_000)
    # "$" between Latin letters and the end takes the right-to-left line's direction (read
    # "$US 5.00") unless a strong left-to-right character follows it.
    symbol_end = written.index("US$") + len("US$")
    assert written[symbol_end:symbol_end + 1] == "\u200e", repr(written)


@pytest.mark.parametrize("language", ["pl", "uk"])
def test_a_name_never_follows_a_preposition_that_would_decline_it(language):
    """Polish and Ukrainian decline names after "dla"/"для" ("dla Mii"): the app cannot,
    so a typed name follows a colon ("dla: Mia") and keeps the form it was typed in."""
    with (ROOT / "app" / "locale" / language / "LC_MESSAGES" / "messages.po").open("rb") as po:
        catalogue = read_po(po)
    declined = re.compile(r"\b(dla|для|Dla|Для)\s+(<bdi>)?%\((name|child|who)\)s")
    wrong = [str(message.string) for message in catalogue
             if message.string and declined.search(str(message.string))]
    assert wrong == []
