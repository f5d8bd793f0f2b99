"""A report's period: a month or a range of days in an IANA zone; bad input names its field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reports.render.period import MAX_DAYS, PeriodError, month_before, period_of

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def period(month=None, start=None, end=None, tz="UTC"):
    return period_of(month=month, start=start, end=end, time_zone=tz, now=NOW)


def test_a_month_runs_from_its_first_midnight_to_the_next_in_the_zone():
    found = period(month="2026-11", tz="Europe/Paris")
    assert (found.start, found.end) == (
        datetime(2026, 10, 31, 23, 0, tzinfo=UTC),
        datetime(2026, 11, 30, 23, 0, tzinfo=UTC),
    )
    assert found.label == "2026-11"


def test_a_range_includes_its_last_day_and_summer_time_changes_its_length():
    found = period(start="2026-10-24", end="2026-10-25", tz="Europe/Paris")
    assert found.seconds == 49 * 3600  # the 25th lasts 25 hours


def test_the_previous_period_has_the_same_length_and_ends_where_this_starts():
    found = period(month="2026-11", tz="Europe/Paris")
    previous = found.previous()
    assert (previous.end, previous.seconds) == (found.start, found.seconds)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"month": "2026-13"}, "month"),
        ({"month": "26-11"}, "month"),
        ({"month": "2027-01"}, "month"),  # the future: nothing measured
        ({}, "month"),
        ({"month": "2026-11", "start": "2026-11-01"}, "month"),
        ({"start": "2016-01-01", "end": "2025-12-31"}, "to"),  # ten years
        ({"start": "2026-11-10", "end": "2026-11-01"}, "to"),  # the end before the start
        ({"start": "2026-11-31", "end": "2026-12-01"}, "from"),
        ({"start": "2026-11-01"}, "to"),
        ({"end": "2026-11-01"}, "from"),
        ({"month": "2026-11", "tz": "Mars/Olympus"}, "tz"),
        ({"month": "2026-11", "tz": "europe/paris"}, "tz"),
        ({"month": "2026-11", "tz": "../../etc/passwd"}, "tz"),
    ],
)
def test_bad_input_names_its_field(kwargs, field):
    with pytest.raises(PeriodError) as caught:
        period(**kwargs)
    assert caught.value.field == field


def test_the_month_before_is_read_in_the_zone():
    # 1 December 00:30 in Paris is still 30 November in UTC.
    moment = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)
    assert (month_before(moment, "Europe/Paris"), month_before(moment, "UTC")) == ("2026-11", "2026-10")
    assert month_before(datetime(2026, 1, 5, tzinfo=UTC), "UTC") == "2025-12"


# --- any input: a period or a PeriodError, nothing else ----------------------------------------

_edge_years = st.sampled_from(["0000", "0001", "1969", "1970", "2026", "9998", "9999", "10000", "99999"])
_edge_parts = st.sampled_from(["00", "01", "02", "11", "12", "13", "28", "29", "30", "31", "32", "99"])
_months = st.one_of(st.builds("{}-{}".format, _edge_years, _edge_parts), st.text(max_size=12))
_days = st.one_of(st.builds("{}-{}-{}".format, _edge_years, _edge_parts, _edge_parts), st.text(max_size=12))
_zones = st.sampled_from(["UTC", "Pacific/Kiritimati", "Etc/GMT+12", "Europe/Paris", "Nowhere/City"])


@given(
    month=st.one_of(st.none(), _months),
    start=st.one_of(st.none(), _days),
    end=st.one_of(st.none(), _days),
    tz=_zones,
)
def test_any_month_range_or_zone_is_a_period_or_an_error_naming_its_field(month, start, end, tz):
    try:
        found = period(month=month, start=start, end=end, tz=tz)
    except PeriodError as error:
        field = error.field
    else:
        field = None
        assert found.start < found.end <= found.start + timedelta(days=MAX_DAYS + 1)
        assert found.start < NOW
    assert field in {None, "month", "from", "to", "tz"}
