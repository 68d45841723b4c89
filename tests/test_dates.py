"""The date formatters (app/dates.py) never raise: every datetime PostgreSQL can hand back
(as asyncpg reads it: UTC, or a naive datetime.max/min for the infinities), with any
zone attached, shows in every household time zone."""

from __future__ import annotations

import os
import re
import zoneinfo
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.dates import day, file_day, file_stamp, iso_time, when
from tests.helpers.campaigns import examples

PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
PROPERTY = settings(
    max_examples=examples(500),  # FULL_CAMPAIGNS=1 (make test-all): all 500
    deadline=None,
    derandomize=bool(os.environ.get("CI")),  # CI replays the same examples; locally they vary
)

# A fixed offset, as far as Python allows either way (within a day of UTC).
FIXED_OFFSETS = st.builds(
    timezone, st.timedeltas(min_value=timedelta(hours=-23, minutes=-59),
                            max_value=timedelta(hours=23, minutes=59)))
# What a moment may carry: asyncpg's UTC, any IANA zone, any fixed offset, or nothing.
MOMENTS = st.one_of(
    st.datetimes(timezones=st.just(UTC)),
    st.datetimes(timezones=st.timezones()),
    st.datetimes(timezones=FIXED_OFFSETS),
    st.datetimes(),  # naive
    st.sampled_from([datetime.min, datetime.max, datetime.min.replace(tzinfo=UTC),
                     datetime.max.replace(tzinfo=UTC)]),
)
HOUSEHOLD_ZONES = st.sampled_from(sorted(zoneinfo.available_timezones())).map(
    zoneinfo.ZoneInfo) | st.just(UTC)
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z")


@pytest.mark.campaign
@PROPERTY
@given(moment=MOMENTS, zone=HOUSEHOLD_ZONES)
@example(moment=datetime(9999, 12, 31, 23, 30, tzinfo=UTC), zone=PARIS)
@example(moment=datetime(1, 1, 1, 1, 0, tzinfo=UTC), zone=NEW_YORK)
@example(moment=datetime.max, zone=PARIS)
@example(moment=datetime.min, zone=NEW_YORK)
@example(moment=datetime.max.replace(tzinfo=timezone(-timedelta(hours=23))), zone=UTC)
@example(moment=datetime.min.replace(tzinfo=timezone(timedelta(hours=23))), zone=UTC)
def test_the_formatters_never_raise_for_any_moment_in_any_zone(moment, zone):
    for shown in (day(moment, zone), when(moment, zone)):
        assert isinstance(shown, str) and shown
    assert re.fullmatch(r"\d{4}-\d\d-\d\d-\d{4}", file_stamp(moment, zone))
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", file_day(moment, zone))
    for exact in (False, True):
        iso = iso_time(moment, exact=exact)
        assert iso is not None and ISO.fullmatch(iso), iso
        assert datetime.fromisoformat(iso).tzinfo is not None


@pytest.mark.campaign
@PROPERTY
@given(moment=st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31),
                           timezones=st.just(UTC)), zone=HOUSEHOLD_ZONES)
def test_away_from_the_calendar_ends_dates_are_the_households_own(moment, zone):
    local = moment.astimezone(zone)
    assert day(moment, zone) == f"{local.day} {local:%B} {local.year}"
    assert when(moment, zone).endswith(f", {local:%H:%M}")
    assert iso_time(moment, exact=True) == moment.replace(tzinfo=None).isoformat() + "Z"


@pytest.mark.parametrize(("moment", "zone", "shown"), [
    (datetime(2026, 11, 29, 19, 1, 2, tzinfo=UTC), PARIS, "29 November 2026, 20:01"),
    (datetime(9999, 12, 31, 23, 30, tzinfo=UTC), PARIS, "31 December 9999, 23:30 UTC"),
    (datetime(1, 1, 1, 1, 0, tzinfo=UTC), NEW_YORK, "1 January 1, 01:00 UTC"),
    (datetime.max, PARIS, "31 December 9999, 23:59 UTC"),  # asyncpg's `infinity`
    (datetime(2026, 11, 29, 19, 1), PARIS, "29 November 2026, 20:01"),  # naive: UTC
])
def test_when_is_local_unless_the_local_year_is_out_of_range_then_utc(moment, zone, shown):
    assert when(moment, zone) == shown


def test_file_names_sort_by_date_even_in_the_first_millennium():
    assert file_stamp(datetime(1, 1, 1, 1, 0, tzinfo=UTC), NEW_YORK) == "0001-01-01-0100"
    assert file_stamp(datetime(2026, 11, 29, 19, 1, tzinfo=UTC), PARIS) == "2026-11-29-2001"
    assert file_day(datetime(999, 3, 4, tzinfo=UTC), UTC) == "0999-03-04"


def test_iso_time_takes_a_naive_moment_as_utc_and_clamps_past_the_calendar():
    assert iso_time(datetime(2026, 11, 29, 19, 1, 2, 5)) == "2026-11-29T19:01:02Z"
    assert iso_time(datetime.max, exact=True) == "9999-12-31T23:59:59.999999Z"
    late = datetime.max.replace(tzinfo=timezone(-timedelta(hours=5)))  # year 10000 in UTC
    assert iso_time(late, exact=True) == "9999-12-31T23:59:59.999999Z"
    assert iso_time(None) is None
