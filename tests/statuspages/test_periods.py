"""A badge's rolling uptime: the page's maths (floored, maintenance and unmeasured time out) over the last 24 h, 7 d, 30 d."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statuspages.render.bars import Interval
from statuspages.render.periods import rolling_uptime

NOW = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)
ALWAYS = [Interval(NOW - timedelta(days=100), NOW)]


def down(minutes_ago: float, minutes: float) -> Interval:
    start = NOW - timedelta(minutes=minutes_ago)
    return Interval(start, start + timedelta(minutes=minutes))


@pytest.mark.parametrize(
    ("period", "downtime", "expected"),
    [
        ("24h", [], "100.00"),
        ("24h", [down(200, 144)], "90.00"),
        ("24h", [down(60, 144)], "95.83"),  # 60 of the 1440 minutes: the rest lies ahead
        ("24h", [down(120, 14.4)], "99.00"),
        ("24h", [down(120, 1 / 60)], "99.99"),  # one second floors the figure, never 100.00
        ("24h", [down(25 * 60, 60)], "100.00"),  # before the period
        ("24h", [down(24 * 60 + 30, 60)], "97.91"),  # half inside: 30 min of 1440, floored
        ("7d", [down(200, 100.8)], "99.00"),
        ("30d", [down(500, 432)], "99.00"),
    ],
)
def test_rolling_uptime_counts_only_the_period(period, downtime, expected):
    assert rolling_uptime(now=NOW, period=period, downtime=downtime, data=ALWAYS) == expected


def test_downtime_inside_maintenance_is_left_out():
    outage = down(120, 60)
    assert (
        rolling_uptime(now=NOW, period="24h", downtime=[outage], maintenance=[outage], data=ALWAYS)
        == "100.00"
    )


def test_nothing_measured_is_no_data_never_100():
    assert rolling_uptime(now=NOW, period="7d", downtime=[], data=[]) is None


def test_a_check_measured_for_an_hour_is_judged_on_that_hour():
    hour = [Interval(NOW - timedelta(hours=1), NOW)]
    assert rolling_uptime(now=NOW, period="30d", downtime=[down(30, 6)], data=hour) == "90.00"


def test_an_unknown_period_is_refused():
    with pytest.raises(ValueError, match="period"):
        rolling_uptime(now=NOW, period="1y", downtime=[], data=ALWAYS)
