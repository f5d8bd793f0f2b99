"""Define uptime once: downtime, counted time and the floored percentage, for status pages and reports.

Pure: plain values in, plain values out, no Django. Both the status pages' day bars
(``statuspages.render.bars``) and the reports (``reports``) compute their figures here, so a
page and a report of the same days never disagree.

The definition (docs/checks/index.md's "How uptime is computed" and the status page's note say the same):

- Uptime is duration-based, on the healthcheck's overall (quorum) status.
- *Downtime* runs from the first failing result that led to ``down`` to the first good result
  of the recovery (:func:`down_since`, :func:`down_until`); ``degraded`` is not downtime.
- *Counted* time is the measured time (after the check's creation, not paused, results
  arriving) outside maintenance; downtime counts as measured. Maintenance and unmonitored
  time leave the denominator.
- Uptime is ``(counted - downtime) / counted`` computed from whole seconds and floored to two
  decimals: 99.998 % reads 99.99, "100.00" only with zero downtime, and "no data" (None) when
  nothing was counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from monitors.rules import default_quorum

# A target's precision: thousandths of a percent (99.999 %), so budgets are integer maths too.
TARGET_SCALE = 100_000


@dataclass(frozen=True, order=True, slots=True)
class Interval:
    """Hold a half-open span of time ``[start, end)`` between two aware datetimes."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("interval bounds must be aware datetimes")
        if self.end < self.start:
            raise ValueError(
                f"interval ends ({self.end.isoformat()}) before it starts ({self.start.isoformat()})"
            )

    @property
    def seconds(self) -> int:
        """Return the whole seconds the interval lasts."""
        return int((self.end - self.start).total_seconds())


def uptime_percent(*, downtime_seconds: int, counted_seconds: int) -> str | None:
    """Return uptime as text with two decimals, floored, from integers; None when nothing was counted.

    Floored, never rounded: 99.998 % is "99.99", and "100.00" only when downtime is zero.
    """
    if downtime_seconds < 0 or counted_seconds < 0:
        raise ValueError("seconds must not be negative")
    if counted_seconds == 0:
        return None
    downtime_seconds = min(downtime_seconds, counted_seconds)
    hundredths = (counted_seconds - downtime_seconds) * 10_000 // counted_seconds
    return f"{hundredths // 100}.{hundredths % 100:02d}"


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Return the intervals sorted, with overlapping and touching ones joined and empty ones dropped."""
    merged: list[Interval] = []
    for interval in sorted(intervals):
        if interval.end <= interval.start:
            continue
        if merged and interval.start <= merged[-1].end:
            if interval.end > merged[-1].end:
                merged[-1] = Interval(merged[-1].start, interval.end)
        else:
            merged.append(interval)
    return merged


# --- whole epoch seconds ---------------------------------------------------------------------------
# Inside, an interval is a pair of whole epoch seconds: the figures are integers, so the parts of a
# period (its days) add up exactly to the whole, and integer arithmetic keeps 500 checks cheap.
Span = tuple[int, int]


def epoch(moment: datetime) -> int:
    """Return ``moment`` as whole seconds since the epoch (floored)."""
    return math.floor(moment.timestamp())


def merged_spans(intervals: Iterable[Interval]) -> list[Span]:
    """Return the intervals as sorted, disjoint spans of whole seconds (touching ones joined)."""
    merged: list[Span] = []
    for start, end in sorted((epoch(i.start), epoch(i.end)) for i in intervals):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def join(first: Sequence[Span], second: Sequence[Span]) -> list[Span]:
    """Return the union of two lists of merged spans, merged."""
    merged: list[Span] = []
    for start, end in sorted([*first, *second]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def subtract(spans: Sequence[Span], holes: Sequence[Span]) -> list[Span]:
    """Return the parts of merged ``spans`` outside merged ``holes``."""
    result: list[Span] = []
    h = 0
    for span_start, span_end in spans:
        start = span_start
        while h < len(holes) and holes[h][1] <= start:
            h += 1
        k = h
        while k < len(holes) and holes[k][0] < span_end:
            if holes[k][0] > start:
                result.append((start, holes[k][0]))
            start = max(start, holes[k][1])
            k += 1
        if start < span_end:
            result.append((start, span_end))
    return result


def clip(spans: Sequence[Span], start: int, end: int) -> list[Span]:
    """Return the parts of merged ``spans`` inside ``[start, end)``."""
    return [(max(a, start), min(b, end)) for a, b in spans if b > start and a < end]


def seconds_within(spans: Sequence[Span], start: int, end: int, cursor: int = 0) -> tuple[int, int]:
    """Return the seconds of merged ``spans`` inside ``[start, end)`` and where a later window should look."""
    total = 0
    while cursor < len(spans) and spans[cursor][1] <= start:
        cursor += 1
    k = cursor
    while k < len(spans) and spans[k][0] < end:
        overlap = min(spans[k][1], end) - max(spans[k][0], start)
        if overlap > 0:
            total += overlap
        k += 1
    return total, cursor


# --- where downtime starts and ends ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Run:
    """Hold one raw result as the downtime bounds read it: when it ended, where, and whether it failed."""

    at: datetime
    region: int
    failing: bool


def down_since(runs: Iterable[Run], *, quorum: int | None) -> datetime | None:
    """Return when the regions last began failing together in enough number to be down; None if they did not.

    ``runs`` are the raw results before a status change to ``down`` (a bounded look-back): each
    region counts as failing from a failing result to its next good one; the check is down
    while ``quorum`` regions fail (None: more than half of the regions seen; never more than
    the regions seen). The answer is the first failing result that led to down: the scheduled
    run whose rechecks confirmed it, not the moment the rechecks ended.
    """
    return _last_crossing(runs, quorum=quorum, failing_at_first=False, want_down=True)


def down_until(runs: Iterable[Run], *, quorum: int | None) -> datetime | None:
    """Return the first good result of the recovery: when fewer than the quorum last stayed failing; None if never.

    ``runs`` are the raw results before a status change out of ``down``; every region seen
    counts as failing until its first good result.
    """
    return _last_crossing(runs, quorum=quorum, failing_at_first=True, want_down=False)


def _last_crossing(
    runs: Iterable[Run], *, quorum: int | None, failing_at_first: bool, want_down: bool
) -> datetime | None:
    ordered = sorted(runs, key=lambda run: (run.at, run.region, run.failing))
    regions = {run.region for run in ordered}
    if not regions:
        return None
    needed = max(1, min(quorum or default_quorum(len(regions)), len(regions)))
    failing = dict.fromkeys(regions, failing_at_first)
    down = sum(failing.values()) >= needed
    since: datetime | None = None
    for run in ordered:
        failing[run.region] = run.failing
        now_down = sum(failing.values()) >= needed
        if now_down != down:
            down = now_down
            since = run.at
    if down != want_down:
        return None
    return since


# --- a period's figures ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Availability:
    """Hold one check's (or a sum of checks') uptime figures over a period, in whole seconds."""

    counted_seconds: int
    downtime_seconds: int
    maintenance_seconds: int
    # Each downtime episode's seconds outside maintenance, in the order they began.
    episodes: tuple[int, ...] = ()

    @property
    def percent(self) -> str | None:
        """Return the floored uptime percentage as text, None when nothing was counted."""
        return uptime_percent(downtime_seconds=self.downtime_seconds, counted_seconds=self.counted_seconds)

    @property
    def downtime_minutes(self) -> int:
        """Return the downtime in minutes, rounded up: any downtime is at least a minute."""
        return math.ceil(self.downtime_seconds / 60)

    @property
    def incidents(self) -> int:
        """Return the number of downtime episodes."""
        return len(self.episodes)

    @property
    def mttr_seconds(self) -> int | None:
        """Return the mean time to recovery (the mean episode's downtime, floored); None without episodes."""
        return sum(self.episodes) // len(self.episodes) if self.episodes else None

    @property
    def longest_seconds(self) -> int | None:
        """Return the longest episode's downtime; None without episodes."""
        return max(self.episodes) if self.episodes else None

    def __add__(self, other: Availability) -> Availability:
        return Availability(
            self.counted_seconds + other.counted_seconds,
            self.downtime_seconds + other.downtime_seconds,
            self.maintenance_seconds + other.maintenance_seconds,
            self.episodes + other.episodes,
        )


NO_AVAILABILITY = Availability(0, 0, 0)


def availability(
    *,
    start: datetime,
    end: datetime,
    downtime: Iterable[Interval],
    maintenance: Iterable[Interval] = (),
    data: Iterable[Interval] = (),
) -> Availability:
    """Return the figures of ``[start, end)``: counted, down and maintenance seconds, and the episodes.

    An episode is one stretch of downtime (overlapping and touching ones joined) with some of it
    outside maintenance; its length is that part. Episodes are cut at the period's bounds, so
    one that spans two periods counts in both.
    """
    if end < start:
        raise ValueError("the period ends before it starts")
    first, last = epoch(start), epoch(end)
    holes = clip(merged_spans(maintenance), first, last)
    down = clip(merged_spans(downtime), first, last)
    counted = subtract(join(clip(merged_spans(data), first, last), down), holes)
    episodes = []
    for span in down:
        outside = sum(b - a for a, b in subtract([span], holes))
        if outside:
            episodes.append(outside)
    return Availability(
        counted_seconds=sum(b - a for a, b in counted),
        downtime_seconds=sum(episodes),
        maintenance_seconds=sum(b - a for a, b in holes),
        episodes=tuple(episodes),
    )


# --- acknowledgements ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Acknowledged:
    """Hold one acknowledged alert incident of a healthcheck: when it opened and when someone acknowledged it."""

    healthcheck_id: int
    opened_at: datetime
    acknowledged_at: datetime


@dataclass(frozen=True)
class Acknowledgements:
    """Hold how long each acknowledged incident of a period waited for its acknowledgement, in whole seconds."""

    waits: tuple[int, ...] = ()

    @property
    def count(self) -> int:
        """Return the number of acknowledged incidents."""
        return len(self.waits)

    @property
    def mtta_seconds(self) -> int | None:
        """Return the mean time to acknowledge (floored); None without an acknowledged incident, never 0."""
        return sum(self.waits) // len(self.waits) if self.waits else None

    def __add__(self, other: Acknowledgements) -> Acknowledgements:
        return Acknowledgements(self.waits + other.waits)


NO_ACKNOWLEDGEMENTS = Acknowledgements()


def acknowledgements(
    *, start: datetime, end: datetime, incidents: Iterable[Acknowledged]
) -> Acknowledgements:
    """Return the waits of the incidents opened in ``[start, end)``: acknowledged_at − opened_at, in the order they opened.

    An incident belongs to the period it opened in, wherever its acknowledgement fell.
    """
    first, last = epoch(start), epoch(end)
    opened = sorted(
        (epoch(i.opened_at), epoch(i.acknowledged_at))
        for i in incidents
        if first <= epoch(i.opened_at) < last
    )
    return Acknowledgements(tuple(max(0, acked - at) for at, acked in opened))


# --- service-level targets -------------------------------------------------------------------------


@dataclass(frozen=True)
class SlaOutcome:
    """Hold whether a period met its target, and how much of its error budget the downtime used."""

    target: Decimal
    met: bool | None  # None when nothing was counted
    budget_seconds: int  # the downtime the target allows over the counted time, floored
    budget_used_percent: str | None  # floored to two decimals; may pass 100; None without a budget


def sla_outcome(figures: Availability, *, target: Decimal) -> SlaOutcome:
    """Return ``figures`` judged against ``target`` (a percentage, to a thousandth), from integers.

    Met when the exact uptime (not the floored text) is at least the target. The error budget
    is the downtime the target allows over the counted time; "used" is downtime over budget.
    """
    if not Decimal(0) <= target <= Decimal(100):
        raise ValueError(f"target must be between 0 and 100, not {target}")
    scaled = int(target * (TARGET_SCALE // 100))
    if scaled != target * (TARGET_SCALE // 100):
        raise ValueError(f"target has more than three decimals: {target}")
    counted, down = figures.counted_seconds, min(figures.downtime_seconds, figures.counted_seconds)
    budget = counted * (TARGET_SCALE - scaled) // TARGET_SCALE
    if counted == 0:
        return SlaOutcome(target, None, 0, None)
    met = (counted - down) * TARGET_SCALE >= scaled * counted
    used: str | None = None
    if budget:
        hundredths = down * 10_000 // budget
        used = f"{hundredths // 100}.{hundredths % 100:02d}"
    elif down == 0:
        used = "0.00"
    return SlaOutcome(target, met, budget, used)
