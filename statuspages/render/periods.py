"""Compute a component's uptime over the last 24 hours, 7 days or 30 days, with the page's own uptime maths.

The page's figures are :mod:`.bars`' (maintenance and unmeasured time out of the denominator,
integer seconds, floored: never flattering, "no data" as None). A badge's period is a rolling
one ending now, not calendar days in the page's zone, so the intervals are cut to the period
first and then counted by :func:`.bars.day_bars` over whole UTC days that cover it: nothing
outside the period is left to count, and the floored figure is :func:`.bars.period_uptime`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from statuspages.render.bars import Interval, day_bars, period_uptime

PERIODS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}


def _within(intervals: Iterable[Interval], start: datetime, end: datetime) -> list[Interval]:
    return [
        Interval(max(i.start, start), min(i.end, end)) for i in intervals if i.end > start and i.start < end
    ]


def rolling_uptime(
    *,
    now: datetime,
    period: str,
    downtime: Iterable[Interval],
    maintenance: Iterable[Interval] = (),
    data: Iterable[Interval] = (),
) -> str | None:
    """Return the uptime over the ``period`` ("24h", "7d", "30d") ending at ``now``, as :func:`.bars.uptime_percent` gives it."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, not {period!r}")
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    length = PERIODS[period]
    start = now - length
    bars = day_bars(
        now=now,
        time_zone="UTC",
        downtime=_within(downtime, start, now),
        maintenance=list(maintenance),
        data=_within(data, start, now),
        # Every UTC day the period touches; the days before its start count nothing.
        days=length.days + 2,
    )
    return period_uptime(bars)
