"""The 90-day bars and the uptime figures: days in the page's zone, maintenance and no data out of the denominator, never flattering."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statuspages.render.bars import (
    CRITICAL_DOWNTIME_MINUTES,
    MAJOR_DOWNTIME_MINUTES,
    MAX_INCIDENTS_PER_DAY,
    BarLevel,
    IncidentSpan,
    Interval,
    bar_level,
    day_bars,
    merge,
    period_uptime,
    uptime_percent,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
BERLIN = ZoneInfo("Europe/Berlin")


def at(*args: int, tz=UTC) -> datetime:
    return datetime(*args, tzinfo=tz)


def span(start: datetime, **length: float) -> Interval:
    return Interval(start, start + timedelta(**length))


@pytest.mark.parametrize(
    ("downtime", "counted", "expected"),
    [
        (0, 86_400, "100.00"),
        (1, 86_400, "99.99"),  # 99.9988 %: floored, never "100.00"
        (8, 86_400, "99.99"),
        (9, 86_400, "99.98"),  # 99.98958 %: floored, not rounded to 99.99
        (864, 86_400, "99.00"),
        (43_200, 86_400, "50.00"),
        (86_400, 86_400, "0.00"),
        (1, 3, "66.66"),
        (1, 1_000_000_000, "99.99"),
        (0, 1, "100.00"),
        (0, 0, None),  # nothing measured: "no data", never 100 %
    ],
)
def test_uptime_is_floored_to_hundredths(downtime, counted, expected):
    assert uptime_percent(downtime_seconds=downtime, counted_seconds=counted) == expected


def test_negative_seconds_are_refused():
    with pytest.raises(ValueError, match="negative"):
        uptime_percent(downtime_seconds=-1, counted_seconds=10)


@pytest.mark.parametrize(
    ("downtime_minutes", "maintenance_seconds", "counted_seconds", "level"),
    [
        (0, 0, 86_400, BarLevel.UP),
        (1, 0, 86_400, BarLevel.MINOR),
        (MAJOR_DOWNTIME_MINUTES - 1, 0, 86_400, BarLevel.MINOR),
        (MAJOR_DOWNTIME_MINUTES, 0, 86_400, BarLevel.MAJOR),
        (CRITICAL_DOWNTIME_MINUTES - 1, 0, 86_400, BarLevel.MAJOR),
        (CRITICAL_DOWNTIME_MINUTES, 0, 86_400, BarLevel.CRITICAL),
        # Maintenance without downtime is blue; downtime outside the window still colours the day.
        (0, 3_600, 82_800, BarLevel.MAINTENANCE),
        (5, 3_600, 82_800, BarLevel.MINOR),
        (0, 86_400, 0, BarLevel.MAINTENANCE),
        (0, 0, 0, BarLevel.NO_DATA),
    ],
)
def test_bar_level_is_named_by_downtime_minutes(
    downtime_minutes, maintenance_seconds, counted_seconds, level
):
    assert (
        bar_level(
            downtime_minutes=downtime_minutes,
            maintenance_seconds=maintenance_seconds,
            counted_seconds=counted_seconds,
        )
        is level
    )


def test_ninety_bars_end_today_in_the_page_zone():
    # 12:00 UTC on 29 Nov is already 30 Nov in Auckland (UTC+13).
    bars = day_bars(now=NOW, time_zone="Pacific/Auckland", downtime=[], data=[Interval(at(2026, 1, 1), NOW)])

    assert len(bars) == 90
    assert bars[-1].day == date(2026, 11, 30)
    assert bars[0].day == date(2026, 9, 2)
    assert bars[-1].end == NOW
    assert all(a.end == b.start for a, b in itertools.pairwise(bars))


def test_a_day_of_downtime_lands_on_the_zone_s_day():
    # 23:30 UTC on 27 Nov for an hour: 00:30 to 01:30 on 28 Nov in Berlin.
    down = span(at(2026, 11, 27, 23, 30), hours=1)
    data = [Interval(at(2026, 11, 1), NOW)]

    bars = {bar.day: bar for bar in day_bars(now=NOW, time_zone="Europe/Berlin", downtime=[down], data=data)}

    assert bars[date(2026, 11, 27)].downtime_seconds == 0
    assert bars[date(2026, 11, 28)].downtime_seconds == 3_600
    assert bars[date(2026, 11, 28)].downtime_minutes == 60
    assert bars[date(2026, 11, 28)].level is BarLevel.MAJOR


@pytest.mark.parametrize(
    ("day", "hours"),
    [
        (date(2026, 3, 29), 23),  # clocks go forward in Berlin
        (date(2026, 10, 25), 25),  # clocks go back
        (date(2026, 6, 1), 24),
    ],
)
def test_summer_time_days_last_23_or_25_hours(day, hours):
    now = at(2026, 11, 29)
    data = [Interval(at(2025, 1, 1), now)]

    bars = {
        bar.day: bar for bar in day_bars(now=now, time_zone="Europe/Berlin", downtime=[], data=data, days=365)
    }

    assert bars[day].counted_seconds == hours * 3_600
    assert bars[day].end - bars[day].start == timedelta(hours=hours)
    assert bars[day].uptime == "100.00"


def test_a_zone_that_skips_midnight_starts_the_day_at_its_first_instant():
    # Santiago moves its clocks forward at 24:00 on the first Saturday of September: 6 Sep 2026
    # starts at 01:00 local, and lasts 23 hours.
    now = at(2026, 9, 10)
    data = [Interval(at(2026, 8, 1), now)]

    bars = {
        bar.day: bar
        for bar in day_bars(now=now, time_zone="America/Santiago", downtime=[], data=data, days=10)
    }

    assert bars[date(2026, 9, 6)].start == datetime(2026, 9, 6, 1, 0, tzinfo=ZoneInfo("America/Santiago"))
    assert bars[date(2026, 9, 6)].counted_seconds == 23 * 3_600


def test_maintenance_and_unmonitored_time_leave_the_denominator():
    day = date(2026, 11, 28)
    start = at(2026, 11, 28)
    # Measured from 06:00 only (created that morning); maintenance 10:00-12:00 with downtime
    # inside it (not counted) and 30 minutes of downtime after it (counted).
    data = [Interval(at(2026, 11, 28, 6), NOW)]
    maintenance = [span(at(2026, 11, 28, 10), hours=2)]
    downtime = [span(at(2026, 11, 28, 10, 30), hours=1), span(at(2026, 11, 28, 13), minutes=30)]

    bars = {
        bar.day: bar
        for bar in day_bars(now=NOW, time_zone="UTC", downtime=downtime, maintenance=maintenance, data=data)
    }
    bar = bars[day]

    assert bar.start == start
    assert bar.counted_seconds == (18 - 2) * 3_600
    assert bar.downtime_seconds == 30 * 60
    assert bar.maintenance_seconds == 2 * 3_600
    assert bar.uptime == "96.87"  # 15.5 h of 16 h = 96.875 %: floored
    assert bar.level is BarLevel.MAJOR
    assert bars[date(2026, 11, 27)].no_data
    assert bars[date(2026, 11, 27)].level is BarLevel.NO_DATA
    assert bars[date(2026, 11, 27)].uptime is None


def test_downtime_counts_as_measured_even_outside_the_data_intervals():
    downtime = [span(at(2026, 11, 28, 1), hours=1)]

    bar = day_bars(now=NOW, time_zone="UTC", downtime=downtime, data=[], days=2)[0]

    assert bar.counted_seconds == 3_600
    assert bar.uptime == "0.00"


def test_twenty_seconds_of_downtime_is_a_minute_and_never_100_percent():
    downtime = [span(at(2026, 11, 28, 9), seconds=20)]
    data = [Interval(at(2026, 11, 1), NOW)]

    bar = day_bars(now=NOW, time_zone="UTC", downtime=downtime, data=data, days=2)[0]

    assert bar.downtime_minutes == 1
    assert bar.level is BarLevel.MINOR
    assert bar.uptime == "99.97"


def test_today_counts_only_up_to_now():
    data = [Interval(at(2026, 11, 1), at(2026, 12, 31))]

    today = day_bars(now=NOW, time_zone="UTC", downtime=[], data=data, days=1)[0]

    assert today.counted_seconds == 12 * 3_600


def test_each_day_names_the_incidents_open_on_it():
    incidents = [
        IncidentSpan("API errors", at(2026, 11, 27, 23), at(2026, 11, 28, 1)),
        IncidentSpan("Still open", at(2026, 11, 29, 8), None),
        # Resolved exactly at midnight: it belongs to the day before only.
        IncidentSpan("Ends at midnight", at(2026, 11, 26, 22), at(2026, 11, 27)),
    ]

    bars = {
        bar.day: bar
        for bar in day_bars(now=NOW, time_zone="UTC", downtime=[], data=[], incidents=incidents, days=5)
    }

    assert bars[date(2026, 11, 26)].incidents == ("Ends at midnight",)
    assert bars[date(2026, 11, 27)].incidents == ("API errors",)
    assert bars[date(2026, 11, 28)].incidents == ("API errors",)
    assert bars[date(2026, 11, 29)].incidents == ("Still open",)


def test_a_day_lists_a_bounded_number_of_incidents():
    incidents = [IncidentSpan(f"incident {n}", at(2026, 11, 29, 1), at(2026, 11, 29, 2)) for n in range(40)]

    today = day_bars(now=NOW, time_zone="UTC", downtime=[], incidents=incidents, days=1)[0]

    assert len(today.incidents) == MAX_INCIDENTS_PER_DAY
    assert today.more_incidents == 40 - MAX_INCIDENTS_PER_DAY


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"now": datetime(2026, 11, 29)}, "aware"),
        ({"days": 0}, "days"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    arguments = {"now": NOW, "time_zone": "UTC", "downtime": [], **kwargs}
    with pytest.raises(ValueError, match=message):
        day_bars(**arguments)


def test_an_interval_that_ends_before_it_starts_is_refused():
    with pytest.raises(ValueError, match="before it starts"):
        Interval(at(2026, 11, 2), at(2026, 11, 1))


# Property tests: intervals within the 90 days before NOW, to the second.
WINDOW_START = NOW - timedelta(days=95)
moments = st.integers(min_value=0, max_value=96 * 86_400).map(lambda s: WINDOW_START + timedelta(seconds=s))
intervals = st.tuples(moments, moments).map(lambda pair: Interval(min(pair), max(pair)))
zones = st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"])


@given(st.lists(intervals, max_size=12))
def test_merging_is_idempotent_and_disjoint(items):
    merged = merge(items)

    assert merge(merged) == merged
    assert all(a.end < b.start for a, b in itertools.pairwise(merged))
    assert sum(i.seconds for i in merged) <= sum(i.seconds for i in items)


@given(
    st.lists(intervals, max_size=8),
    st.lists(intervals, max_size=4),
    st.lists(intervals, max_size=4),
    zones,
)
def test_uptime_never_flatters(downtime, maintenance, data, zone):
    bars = day_bars(now=NOW, time_zone=zone, downtime=downtime, maintenance=maintenance, data=data)

    for bar in [*bars, None]:
        counted = sum(b.counted_seconds for b in bars) if bar is None else bar.counted_seconds
        down = sum(b.downtime_seconds for b in bars) if bar is None else bar.downtime_seconds
        uptime = period_uptime(bars) if bar is None else bar.uptime
        assert down <= counted
        if counted == 0:
            assert uptime is None
        else:
            assert uptime is not None
            assert float(uptime) <= 100
            assert (uptime == "100.00") == (down == 0)


@given(st.lists(intervals, max_size=8), st.lists(intervals, max_size=4), zones)
def test_day_bars_sum_to_the_period(downtime, data, zone):
    bars = day_bars(now=NOW, time_zone=zone, downtime=downtime, data=data)
    start, end = bars[0].start, bars[-1].end
    clipped = [
        Interval(max(i.start, start), min(i.end, end))
        for i in merge([*data, *downtime])
        if i.end > start and i.start < end
    ]

    assert sum(bar.counted_seconds for bar in bars) == sum(i.seconds for i in merge(clipped))
    assert sum(int((bar.end - bar.start).total_seconds()) for bar in bars) == int(
        (end - start).total_seconds()
    )
