"""Check the pure maintenance-window rules with tables: occurrences, DST, bounds, refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr

from monitors.maintenance import (
    MAX_OCCURRENCES,
    Occurrence,
    Schedule,
    ScheduleError,
    active_at,
    next_occurrence,
    occurrences,
    schedule_from,
    series_end,
    windows_ended,
)

BERLIN = ZoneInfo("Europe/Berlin")
HOUR = timedelta(hours=1)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def berlin_daily(**extra: object) -> Schedule:
    """A window every day from 02:00 to 03:00 Berlin time, since 2026-01-01."""
    options: dict[str, object] = {"duration": HOUR, "rrule": "FREQ=DAILY", "timezone": "Europe/Berlin"}
    options.update(extra)
    return schedule_from(starts_at=datetime(2026, 1, 1, 2, 0, tzinfo=BERLIN), **options)  # type: ignore[arg-type]


# --- one-off ---------------------------------------------------------------------------------------

ONE_OFF = schedule_from(starts_at=utc(2026, 12, 1, 10), ends_at=utc(2026, 12, 1, 12))


@pytest.mark.parametrize(
    ("moment", "inside"),
    [
        (utc(2026, 12, 1, 9, 59, 59), False),
        (utc(2026, 12, 1, 10), True),  # the start is inside
        (utc(2026, 12, 1, 11, 30), True),
        (utc(2026, 12, 1, 11, 59, 59), True),
        (utc(2026, 12, 1, 12), False),  # the end is not
    ],
)
def test_a_one_off_window_covers_its_start_but_not_its_end(moment, inside):
    assert (active_at(ONE_OFF, moment) is not None) is inside


def test_a_one_off_window_given_a_duration_is_the_same_as_given_its_end():
    by_duration = schedule_from(starts_at=utc(2026, 12, 1, 10), duration=timedelta(hours=2))

    assert by_duration == ONE_OFF
    assert series_end(ONE_OFF) == utc(2026, 12, 1, 12)


def test_a_one_off_window_given_another_offset_is_stored_in_utc():
    schedule = schedule_from(
        starts_at=datetime(2026, 12, 1, 11, tzinfo=BERLIN), ends_at=datetime(2026, 12, 1, 13, tzinfo=BERLIN)
    )

    assert schedule == ONE_OFF


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (utc(2026, 12, 1), utc(2026, 12, 1, 10), []),  # ends as the window starts
        (utc(2026, 12, 1), utc(2026, 12, 1, 10, 0, 1), [(utc(2026, 12, 1, 10), utc(2026, 12, 1, 12))]),
        (utc(2026, 12, 1, 11), utc(2026, 12, 1, 11, 1), [(utc(2026, 12, 1, 10), utc(2026, 12, 1, 12))]),
        (utc(2026, 12, 1, 12), utc(2026, 12, 2), []),
    ],
)
def test_occurrences_of_a_one_off_window_are_those_overlapping_the_range(start, end, expected):
    assert [(item.start, item.end) for item in occurrences(ONE_OFF, start, end)] == expected


@pytest.mark.parametrize(
    ("after", "expected"),
    [(utc(2026, 11, 30), utc(2026, 12, 1, 10)), (utc(2026, 12, 1, 10), None), (utc(2026, 12, 2), None)],
)
def test_the_next_occurrence_of_a_one_off_window_is_itself_until_it_starts(after, expected):
    found = next_occurrence(ONE_OFF, after)

    assert (found.start if found else None) == expected


# --- recurring, in local time --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "start_utc"),
    [
        # Winter (CET, +01:00): 02:00 local is 01:00 UTC.
        (utc(2026, 3, 28, 12), utc(2026, 3, 28, 1)),
        # 29 March 2026 springs forward at 02:00: 02:00 does not exist and is read with the
        # offset before the change, so the window starts at 01:00 UTC (03:00 CEST).
        (utc(2026, 3, 29, 12), utc(2026, 3, 29, 1)),
        # Summer (CEST, +02:00): 02:00 local is 00:00 UTC; the window stayed at 02:00 local.
        (utc(2026, 3, 30, 12), utc(2026, 3, 30, 0)),
        (utc(2026, 10, 24, 12), utc(2026, 10, 24, 0)),
        # 25 October falls back at 03:00: 02:00 happens twice, the first (CEST) is taken.
        (utc(2026, 10, 25, 12), utc(2026, 10, 25, 0)),
        (utc(2026, 10, 26, 12), utc(2026, 10, 26, 1)),
    ],
)
def test_a_daily_window_stays_at_two_in_the_morning_local_time_across_dst(day, start_utc):
    found = occurrences(berlin_daily(), day - timedelta(hours=12), day)

    assert found == [Occurrence(start_utc, start_utc + HOUR)]


@pytest.mark.parametrize(
    ("moment", "expected_start"),
    [
        (utc(2026, 7, 1, 0, 30), utc(2026, 7, 1, 0)),  # 02:30 CEST
        (utc(2026, 7, 1, 1, 0), None),  # 03:00 CEST: over
        (utc(2026, 1, 15, 1, 30), utc(2026, 1, 15, 1)),  # 02:30 CET
        (utc(2026, 1, 15, 0, 30), None),  # 01:30 CET: not yet
        (utc(2025, 12, 31, 1, 30), None),  # before the first occurrence
    ],
)
def test_a_recurring_window_is_active_inside_an_occurrence_only(moment, expected_start):
    found = active_at(berlin_daily(), moment)

    assert (found.start if found else None) == expected_start


def test_the_next_occurrence_of_a_daily_window_is_the_next_day_once_it_started():
    assert next_occurrence(berlin_daily(), utc(2026, 7, 1, 0, 30)) == Occurrence(
        utc(2026, 7, 2, 0), utc(2026, 7, 2, 1)
    )
    assert next_occurrence(berlin_daily(), utc(2025, 6, 1)) == Occurrence(
        utc(2026, 1, 1, 1), utc(2026, 1, 1, 2)
    )


def test_count_ends_the_series_after_so_many_occurrences():
    schedule = berlin_daily(rrule="FREQ=DAILY;COUNT=3")

    assert series_end(schedule) == utc(2026, 1, 3, 2)
    assert active_at(schedule, utc(2026, 1, 3, 1, 30)) is not None
    assert active_at(schedule, utc(2026, 1, 4, 1, 30)) is None
    assert next_occurrence(schedule, utc(2026, 1, 3, 1, 30)) is None


def test_until_ends_the_series_and_bounds_its_end():
    schedule = berlin_daily(rrule="FREQ=DAILY;UNTIL=20260110T000000Z")

    assert active_at(schedule, utc(2026, 1, 9, 1, 30)) is not None
    assert active_at(schedule, utc(2026, 1, 10, 1, 30)) is None
    assert series_end(schedule) == utc(2026, 1, 10, 1)  # UNTIL + duration: a bound past the last end


def test_a_recurring_series_without_end_has_no_end():
    assert series_end(berlin_daily()) is None


def test_an_occurrence_longer_than_the_gap_between_starts_overlaps_the_next():
    schedule = berlin_daily(duration=timedelta(hours=30))

    found = active_at(schedule, utc(2026, 2, 2, 3))

    # Started 1 and 2 February; the one that ends latest is answered.
    assert found == Occurrence(utc(2026, 2, 2, 1), utc(2026, 2, 3, 7))


def test_windows_ended_lists_occurrences_that_ended_in_the_range():
    ended = windows_ended(berlin_daily(), utc(2026, 1, 5, 1, 59), utc(2026, 1, 6, 2))

    assert [item.end for item in ended] == [utc(2026, 1, 5, 2), utc(2026, 1, 6, 2)]
    assert windows_ended(berlin_daily(), utc(2026, 1, 5, 2), utc(2026, 1, 5, 3)) == []


def test_occurrences_in_a_long_range_are_capped():
    schedule = schedule_from(starts_at=utc(2026, 1, 1), duration=timedelta(minutes=5), rrule="FREQ=HOURLY")

    found = occurrences(schedule, utc(2026, 1, 1), utc(2027, 1, 1))

    assert len(found) == MAX_OCCURRENCES
    assert found[0].start == utc(2026, 1, 1)


# --- re-anchoring yields what iterating from the first occurrence yields --------------------------

RULES = [
    "FREQ=HOURLY",
    "FREQ=HOURLY;INTERVAL=5",
    "FREQ=HOURLY;INTERVAL=7;BYMINUTE=15",
    "FREQ=HOURLY;BYDAY=SA,SU;BYHOUR=1,3,5",
    "FREQ=DAILY",
    "FREQ=DAILY;INTERVAL=3",
    "FREQ=DAILY;BYDAY=MO,WE,FR;BYHOUR=2,14",
    "FREQ=WEEKLY",
    "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SU",
    "FREQ=WEEKLY;INTERVAL=3;WKST=SU;BYDAY=SU,MO",
    "FREQ=MONTHLY",
    "FREQ=MONTHLY;INTERVAL=2;BYDAY=1SU",
    "FREQ=MONTHLY;BYDAY=-1SA;BYHOUR=23;BYMINUTE=30",
    "FREQ=MONTHLY;BYMONTHDAY=31",
    "FREQ=MONTHLY;BYMONTHDAY=-1",
    "FREQ=YEARLY",
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
    "FREQ=YEARLY;INTERVAL=2;BYMONTH=3,10;BYDAY=-1SU",
    "FREQ=DAILY;COUNT=700",
    "FREQ=WEEKLY;UNTIL=20290101T000000Z",
]
FIRST = datetime(2019, 1, 31, 2, 30, tzinfo=BERLIN)
MOMENTS = [
    utc(2019, 1, 31, 1),
    utc(2020, 2, 29, 12),
    utc(2021, 3, 28, 0),
    utc(2024, 10, 27, 0, 30),
    utc(2026, 12, 1),
]


@pytest.mark.parametrize("rule", RULES)
def test_a_lookup_finds_the_occurrences_iterating_from_the_start_would(rule):
    schedule = schedule_from(
        starts_at=FIRST, duration=timedelta(hours=2), rrule=rule, timezone="Europe/Berlin"
    )
    every = rrulestr(rule, dtstart=FIRST)
    for moment in MOMENTS:
        start, end = moment - timedelta(days=20), moment
        expected = [
            local.astimezone(UTC)
            for local in every.between(start - timedelta(days=1), end + timedelta(days=1), inc=True)
            if start - timedelta(hours=2) < local.astimezone(UTC) < end
        ]

        assert [item.start for item in occurrences(schedule, start, end)] == expected, moment


@pytest.mark.parametrize("rule", RULES)
def test_the_next_occurrence_is_the_one_iterating_from_the_start_would_find(rule):
    schedule = schedule_from(
        starts_at=FIRST, duration=timedelta(hours=2), rrule=rule, timezone="Europe/Berlin"
    )
    every = rrulestr(rule, dtstart=FIRST)
    for moment in MOMENTS:
        expected = every.after(moment.astimezone(BERLIN))
        found = next_occurrence(schedule, moment)

        assert (found.start if found else None) == (expected.astimezone(UTC) if expected else None), moment


def test_a_lookup_decades_after_the_first_occurrence_starts_near_the_moment():
    from monitors.maintenance import _compile  # the bound itself: no lookup walks the years before it

    schedule = schedule_from(starts_at=utc(1990, 1, 1), duration=HOUR, rrule="FREQ=HOURLY;INTERVAL=7")
    moment = utc(2026, 12, 1, 12)

    anchor = _compile(schedule).anchor_before(moment)

    assert moment - timedelta(hours=11) <= anchor <= moment


# --- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("FREQ=MINUTELY", "too frequent"),
        ("FREQ=SECONDLY;INTERVAL=3600", "too frequent"),
        ("FREQ=HOURLY;BYMINUTE=0,30", "at most 24"),
        (
            "FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;BYMINUTE=0,30",
            "at most 24",
        ),
        ("FREQ=DAILY;COUNT=1001", "COUNT must be"),
        ("FREQ=DAILY;COUNT=5;UNTIL=20270101T000000Z", "COUNT or UNTIL"),
        ("FREQ=DAILY;INTERVAL=0", "INTERVAL must be"),
        ("FREQ=DAILY;BYMONTH=2", "BYMONTH needs FREQ=MONTHLY"),
        ("FREQ=HOURLY;BYMONTHDAY=1", "BYMONTHDAY needs FREQ=MONTHLY"),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "never matches"),
        ("FREQ=MONTHLY;BYMONTH=4,6;BYMONTHDAY=31,-31", "never matches"),
        ("FREQ=MONTHLY;BYDAY=5MO", "from 1 to 4"),
        ("FREQ=YEARLY;BYDAY=53MO", "from 1 to 52"),
        ("FREQ=WEEKLY;BYDAY=1MO", "needs FREQ=MONTHLY"),
        ("FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=1", "not both"),
        ("FREQ=WEEKLY;BYSETPOS=1;BYDAY=MO", "BYSETPOS is not supported"),
        ("FREQ=YEARLY;BYYEARDAY=100", "BYYEARDAY is not supported"),
        ("FREQ=YEARLY;BYWEEKNO=20", "BYWEEKNO is not supported"),
        ("FREQ=DAILY;BYSECOND=5", "BYSECOND is not supported"),
        ("BYDAY=MO", "FREQ is required"),
        ("FREQ=DAILY;FREQ=WEEKLY", "given twice"),
        ("FREQ=DAILY;COLOR=RED", "unknown part"),
        ("FREQ=FORTNIGHTLY", "unknown FREQ"),
        ("FREQ=DAILY;BYHOUR=24", "BYHOUR takes numbers from 0 to 23"),
        ("FREQ=DAILY;WKST=XX", "Not a valid RRULE"),
        ("FREQ=DAILY;UNTIL=20270101", "UNTIL"),  # RFC 5545: UTC with a zoned start
        ("FREQ=DAILY;UNTIL=20200101T000000Z", "no occurrence at or after starts_at"),
        ("FREQ=DAILY;UNTIL=99991231T000000Z", "UNTIL must be before the year 9001"),
        # The periods the INTERVAL reaches from starts_at (Thursday 1 January 2026, 02:00) never match:
        # refused at once, where dateutil would search until the year 9999.
        ("FREQ=HOURLY;INTERVAL=24;BYHOUR=3", "never meets"),
        ("FREQ=HOURLY;INTERVAL=168;BYDAY=MO", "never meets"),
        ("FREQ=DAILY;INTERVAL=7;BYDAY=TU", "never falls on a day in BYDAY"),
        ("FREQ=MONTHLY;INTERVAL=2;BYMONTH=2,4", "never falls in a month in BYMONTH"),
        ("FREQ=MONTHLY;INTERVAL=12;BYMONTH=2", "never falls in a month in BYMONTH"),
        ("FREQ=DAILY\nEXDATE:20270101T000000Z", "One RRULE line"),
        ("FREQ=DAILY;" + "BYHOUR=1;" * 100, "At most 500"),
    ],
)
def test_a_rule_outside_the_bounds_is_refused_naming_why(rule, message):
    with pytest.raises(ScheduleError) as refused:
        schedule_from(starts_at=utc(2026, 1, 1, 2), duration=HOUR, rrule=rule)

    assert refused.value.field == "rrule"
    assert message in refused.value.message


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"starts_at": utc(2026, 1, 1), "ends_at": utc(2025, 12, 31)}, "ends_at", "after starts_at"),
        ({"starts_at": utc(2026, 1, 1), "ends_at": utc(2026, 1, 1)}, "ends_at", "after starts_at"),
        ({"starts_at": utc(2026, 1, 1), "ends_at": utc(2026, 1, 2), "duration": HOUR}, "ends_at", "disagree"),
        ({"starts_at": utc(2026, 1, 1)}, "duration", "Give the window's length"),
        ({"starts_at": utc(2026, 1, 1), "duration": timedelta(0)}, "duration", "positive"),
        ({"starts_at": utc(2026, 1, 1), "duration": timedelta(days=367)}, "duration", "366 days"),
        (
            {"starts_at": utc(2026, 1, 1), "duration": timedelta(days=8), "rrule": "FREQ=WEEKLY"},
            "duration",
            "7 days",
        ),
        (
            {"starts_at": utc(2026, 1, 1), "ends_at": utc(2026, 1, 2), "rrule": "FREQ=WEEKLY"},
            "ends_at",
            "UNTIL or COUNT",
        ),
        ({"starts_at": datetime(2026, 1, 1), "duration": HOUR}, "starts_at", "time zone offset"),
        ({"starts_at": utc(2026, 1, 1), "duration": HOUR, "timezone": "Mars/Olympus"}, "timezone", "Unknown"),
        (
            {"starts_at": utc(2026, 1, 1), "duration": HOUR, "timezone": "../../etc/passwd"},
            "timezone",
            "Unknown",
        ),
        ({"starts_at": utc(2026, 1, 1), "duration": HOUR, "timezone": ""}, "timezone", "Unknown"),
    ],
)
def test_a_schedule_that_cannot_be_is_refused_naming_the_field(options, field, message):
    with pytest.raises(ScheduleError) as refused:
        schedule_from(**options)

    assert refused.value.field == field
    assert message in refused.value.message


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=HOURLY;INTERVAL=48;BYHOUR=2",  # every other day at 02:00, from a 02:00 start
        "FREQ=DAILY;INTERVAL=7;BYDAY=TH",
        "FREQ=DAILY;INTERVAL=3;BYDAY=TU",  # every third day reaches each weekday in turn
        "FREQ=MONTHLY;INTERVAL=2;BYMONTH=3,4",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
    ],
)
def test_a_rule_whose_interval_reaches_its_by_parts_from_the_start_is_accepted(rule):
    schedule = schedule_from(starts_at=utc(2026, 1, 1, 2), duration=HOUR, rrule=rule)

    assert next_occurrence(schedule, utc(2026, 1, 1)) is not None


def test_a_schedule_read_back_with_its_end_and_length_is_the_same_schedule():
    # An API answer carries both ends_at and duration; sent back (a PUT), it changes nothing.
    one_off = schedule_from(starts_at=utc(2026, 1, 1), ends_at=utc(2026, 1, 2), duration=timedelta(days=1))
    counted = berlin_daily(rrule="FREQ=DAILY;COUNT=3")

    assert one_off == schedule_from(starts_at=utc(2026, 1, 1), duration=timedelta(days=1))
    assert berlin_daily(rrule="FREQ=DAILY;COUNT=3", ends_at=series_end(counted)) == counted


def test_a_rule_is_stored_without_its_prefix_and_in_upper_case():
    schedule = schedule_from(starts_at=utc(2026, 1, 1), duration=HOUR, rrule=" RRULE:freq=weekly;byday=su ")

    assert schedule.rrule == "FREQ=WEEKLY;BYDAY=SU"
