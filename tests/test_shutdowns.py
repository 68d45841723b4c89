"""A model's announced shutdown: the provider's `shutdown_date` read as an ISO date or a Unix
timestamp (anything else is no date), the one WARNING that names it, and when the home page
starts to say so (60 days before) and when it says the date has passed."""

from __future__ import annotations

import logging
import math
from datetime import UTC, date, datetime, timedelta

import pytest

from app.storytelling.shutdowns import NOTICE_FROM_DAYS, Shutdowns, parse_shutdown_date

DAY = date(2026, 12, 11)
NOON = int(datetime(2026, 12, 11, 12, tzinfo=UTC).timestamp())


@pytest.mark.parametrize("said", [
    "2026-12-11", " 2026-12-11 ", "2026-12-11T00:00:00Z", "2026-12-11T23:59:59+00:00",
    NOON, float(NOON), str(NOON),
])
def test_an_iso_date_or_a_unix_timestamp_is_the_day(said):
    assert parse_shutdown_date(said) == DAY


@pytest.mark.parametrize("said", [
    None, "", "soon", "2026-02-30", "11/12/2026", "2026-12-11 or so", True, False, -5, 0,
    10**15, NOON * 1000, math.nan, math.inf, "1e400", "99999-01-01", {"on": NOON}, [NOON],
])
def test_anything_else_is_no_date(said):
    assert parse_shutdown_date(said) is None


def warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_the_provider_s_date_comes_first_and_is_said_once(caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    shutdowns = Shutdowns()
    shutdowns.announce("STORY_MODEL", "gpt-4o-mini", said="2027-03-01",
                       library={"gpt-4o-mini": date(2027, 1, 14)})
    shutdowns.announce("STORY_MODEL", "gpt-4o-mini", said="2027-03-01",
                       library={"gpt-4o-mini": date(2027, 1, 14)})
    [warning] = warnings(caplog)
    assert ("event=model_deprecated setting=STORY_MODEL model=gpt-4o-mini shutdown=2027-03-01"
            " source=provider") in warning
    [announced] = shutdowns.due(date(2027, 2, 1))
    assert (announced.setting, announced.model, announced.on) == (
        "STORY_MODEL", "gpt-4o-mini", date(2027, 3, 1))


def test_without_the_provider_s_date_the_library_s_is_taken(caplog):
    caplog.set_level(logging.INFO, logger="bedtime")
    shutdowns = Shutdowns()
    shutdowns.announce("IMAGE_MODEL", "gpt-image-1", said="garbage",
                       library={"gpt-image-1": date(2026, 10, 23)})
    shutdowns.announce("STORY_MODEL", "gpt-5.1-mini", said=None,
                       library={"gpt-5.1-mini": None})
    shutdowns.announce("STORY_MODEL", "gpt-6-luna", said=None, library={})  # not, this one
    assert [w.split(" detail=")[0] for w in warnings(caplog)] == [
        "event=model_deprecated setting=IMAGE_MODEL model=gpt-image-1 shutdown=2026-10-23"
        " source=openai_library",
        "event=model_deprecated setting=STORY_MODEL model=gpt-5.1-mini shutdown=\"not announced\""
        " source=openai_library",
    ]
    # No date, nothing to count down to: only the image model's is on the page.
    assert [s.model for s in shutdowns.due(date(2026, 12, 7))] == ["gpt-image-1"]


def test_the_page_says_it_from_60_days_before_and_after_the_day_that_it_passed():
    shutdowns = Shutdowns()
    shutdowns.announce("STORY_MODEL", "fake-model", said=DAY.isoformat(), library={})
    first = DAY - timedelta(days=NOTICE_FROM_DAYS)
    assert NOTICE_FROM_DAYS == 60
    assert shutdowns.due(first - timedelta(days=1)) == []
    [shown] = shutdowns.due(first)
    assert not shown.passed(first) and not shown.passed(DAY - timedelta(days=1))
    assert shown.passed(DAY) and shown.passed(DAY + timedelta(days=400))
    assert shutdowns.due(DAY + timedelta(days=400)) == [shown]
