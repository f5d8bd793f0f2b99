"""Cut a component's downtime, maintenance and measured time into day bars, each with its uptime.

The uptime maths itself (intervals, merging, the floored percentage) is ``monitors.uptime``,
shared with the reports; this module cuts it into the page's days. The inputs are plain half-open intervals ``[start, end)`` of aware datetimes, which the
selectors derive from a healthcheck's status changes:

- *downtime*: from the first failing result that led to ``down`` to the first good result of
  the recovery;
- *maintenance*: the maintenance windows that covered the component;
- *data*: the time the component was measured (after its creation, not paused, results
  arriving). Downtime counts as measured even where *data* leaves it out.

A day is a calendar day in the page's IANA time zone, so a day that changes to or from
summer time lasts 23 or 25 hours. For each day: the *counted* time is the measured time
outside maintenance, the *downtime* is the downtime outside maintenance, and uptime is
``(counted - downtime) / counted``, floored to two decimals: 99.998 % reads 99.99, 100 % only
with zero downtime, and "no data" (None) when nothing was counted. Seconds are integers
throughout, so sums over days equal the sum over the period.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

# The uptime maths is defined once, below the apps that show it (status pages, reports).
from monitors.uptime import (
    Interval,
    epoch,
    join,
    merge,
    merged_spans,
    seconds_within,
    subtract,
    uptime_percent,
)

__all__ = ["Interval", "merge", "uptime_percent"]  # re-exported: the page's callers name them here

DAYS = 90

# A day's colour by its downtime minutes (rounded up, so a 20-second outage is a minute).
MINOR_DOWNTIME_MINUTES = 1
MAJOR_DOWNTIME_MINUTES = 30
CRITICAL_DOWNTIME_MINUTES = 240

# A day's tooltip names at most this many incidents, then "and N more".
MAX_INCIDENTS_PER_DAY = 5


class BarLevel(StrEnum):
    """Name a day bar's colour class."""

    UP = "up"
    MINOR = "minor"
    MAJOR = "major"
    CRITICAL = "critical"
    MAINTENANCE = "maintenance"
    NO_DATA = "no-data"


@dataclass(frozen=True, slots=True)
class IncidentSpan:
    """Hold a published incident's title and the time it was open, for the days' tooltips."""

    title: str
    start: datetime
    end: datetime | None  # None while unresolved


@dataclass(frozen=True, slots=True)
class DayBar:
    """Hold one day of a component's strip: its seconds by kind and its colour class."""

    day: date
    start: datetime  # the day's first instant, in UTC
    end: datetime  # the next day's first instant, or now for today, in UTC
    counted_seconds: int
    downtime_seconds: int
    maintenance_seconds: int
    incidents: tuple[str, ...] = ()
    more_incidents: int = 0

    @property
    def downtime_minutes(self) -> int:
        """Return the downtime in minutes, rounded up: any downtime is at least a minute."""
        return math.ceil(self.downtime_seconds / 60)

    @property
    def maintenance_minutes(self) -> int:
        """Return the maintenance in minutes, rounded up."""
        return math.ceil(self.maintenance_seconds / 60)

    @property
    def no_data(self) -> bool:
        """Return whether nothing was counted that day (before creation, paused, no results, future)."""
        return self.counted_seconds == 0

    @property
    def level(self) -> BarLevel:
        """Return the day's colour class: downtime first, then maintenance, then no data."""
        return bar_level(
            downtime_minutes=self.downtime_minutes,
            maintenance_seconds=self.maintenance_seconds,
            counted_seconds=self.counted_seconds,
        )

    @property
    def uptime(self) -> str | None:
        """Return the day's uptime percentage as text ("99.99"), None when nothing was counted."""
        return uptime_percent(downtime_seconds=self.downtime_seconds, counted_seconds=self.counted_seconds)


def bar_level(*, downtime_minutes: int, maintenance_seconds: int, counted_seconds: int) -> BarLevel:
    """Return a day's colour class from its downtime minutes, its maintenance and its counted time."""
    if downtime_minutes >= CRITICAL_DOWNTIME_MINUTES:
        return BarLevel.CRITICAL
    if downtime_minutes >= MAJOR_DOWNTIME_MINUTES:
        return BarLevel.MAJOR
    if downtime_minutes >= MINOR_DOWNTIME_MINUTES:
        return BarLevel.MINOR
    if maintenance_seconds:
        return BarLevel.MAINTENANCE
    if not counted_seconds:
        return BarLevel.NO_DATA
    return BarLevel.UP


def period_uptime(bars: Iterable[DayBar]) -> str | None:
    """Return the uptime over several days: their counted and down seconds summed, then floored."""
    counted = down = 0
    for bar in bars:
        counted += bar.counted_seconds
        down += bar.downtime_seconds
    return uptime_percent(downtime_seconds=down, counted_seconds=counted)


def _to_second(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(microsecond=0)


def _titles_by_day(
    spans: Sequence[IncidentSpan], starts: Sequence[datetime], ends: Sequence[datetime]
) -> list[list[str]]:
    """Return, per day, the titles of the incidents open during it, in the order given."""
    titles: list[list[str]] = [[] for _ in starts]
    for span in spans:
        # An incident opened and resolved within the same second still belongs to its day.
        span_end = max(span.end or span.start, span.start + timedelta(seconds=1))
        first = max(0, bisect.bisect_right(starts, span.start) - 1)
        for index in range(first, bisect.bisect_left(starts, span_end)):
            if span.start < ends[index] and span_end > starts[index]:
                titles[index].append(span.title)
    return titles


def day_start(day: date, zone: ZoneInfo) -> datetime:
    """Return the first instant of ``day`` in ``zone``, in UTC.

    Where a zone skips midnight (a summer-time change at 00:00), the wall time 00:00 does not
    exist and zoneinfo reads it with the earlier offset, which lands on the day's first instant.
    """
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


@functools.lru_cache(maxsize=64)
def _days(today: date, days: int, time_zone: str) -> tuple[tuple[date, ...], tuple[datetime, ...]]:
    # Every component of a page has the same days: their boundaries are worked out once.
    zone = ZoneInfo(time_zone)
    first = today - timedelta(days=days - 1)
    days_list = tuple(first + timedelta(days=offset) for offset in range(days))
    return days_list, tuple(day_start(day, zone) for day in days_list)


def day_bars(
    *,
    now: datetime,
    time_zone: str,
    downtime: Iterable[Interval],
    maintenance: Iterable[Interval] = (),
    data: Iterable[Interval] = (),
    incidents: Iterable[IncidentSpan] = (),
    days: int = DAYS,
) -> list[DayBar]:
    """Return ``days`` bars, oldest first, ending with today (up to ``now``) in ``time_zone``.

    Time after ``now`` counts as nothing: today's bar covers the day so far.
    """
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    if days < 1:
        raise ValueError(f"days must be at least 1, not {days}")
    now = _to_second(now)
    holes = merged_spans(maintenance)
    down = merged_spans(downtime)
    counted = subtract(join(merged_spans(data), down), holes)
    down = subtract(down, holes)
    today = now.astimezone(ZoneInfo(time_zone)).date()
    spans = [
        IncidentSpan(span.title, _to_second(span.start), min(_to_second(span.end), now) if span.end else now)
        for span in incidents
    ]
    days_list, starts = _days(today, days, time_zone)
    # Today ends now: ``today`` is now's date in the zone, so now is before tomorrow's start.
    ends = [*starts[1:], now]
    titles = _titles_by_day(spans, starts, ends)
    bars: list[DayBar] = []
    cursors = [0, 0, 0]
    for index, day in enumerate(days_list):
        start, end = epoch(starts[index]), epoch(ends[index])
        counted_seconds, cursors[0] = seconds_within(counted, start, end, cursors[0])
        down_seconds, cursors[1] = seconds_within(down, start, end, cursors[1])
        maintenance_seconds, cursors[2] = seconds_within(holes, start, end, cursors[2])
        bars.append(
            DayBar(
                day=day,
                start=starts[index],
                end=ends[index],
                counted_seconds=counted_seconds,
                downtime_seconds=down_seconds,
                maintenance_seconds=maintenance_seconds,
                incidents=tuple(titles[index][:MAX_INCIDENTS_PER_DAY]),
                more_incidents=max(0, len(titles[index]) - MAX_INCIDENTS_PER_DAY),
            )
        )
    return bars
