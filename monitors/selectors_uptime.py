"""Read uptime: the rolled-up figures and the history monitors.uptime's maths takes."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypedDict, cast

from django.db import connection
from django.db.models import OuterRef, Subquery, Sum

from monitors import latency
from monitors.columns import column_of
from monitors.models import Healthcheck, ProbeResult, Rollup, StatusChange
from monitors.selectors_maintenance import maintenance_covering
from monitors.signals import acknowledgements_asked
from monitors.timestamps import EpochSeconds, epoch_sql, from_epoch
from monitors.uptime import Acknowledged, Availability, Interval, Run, availability, down_since, down_until
from probes.types import Status


class UptimeFigures(TypedDict):
    """Runs, failures and response times summed over a window, for a region or overall."""

    runs: int
    failures: int
    degraded: int
    uptime: float | None
    p50_ms: float | None
    p95_ms: float | None


# The functional form, since ``from`` is a keyword: keys as the API answers them.
Uptime = TypedDict(
    "Uptime",
    {"from": datetime, "to": datetime, "overall": UptimeFigures, "regions": dict[str, UptimeFigures]},
)


def uptime_of(*, healthcheck: Healthcheck, start: datetime, end: datetime) -> Uptime:
    """Sum the hourly rollups of hours that overlap [start, end), per region and overall."""
    # Truncate in UTC: rollup hours are UTC hours, and a window given at +05:30 truncated in
    # its own zone would start half an hour late and miss the hour it starts in.
    first_hour = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    rollups = Rollup.objects.filter(
        healthcheck=healthcheck, period=Rollup.Period.HOUR, start__gte=first_hour, start__lt=end
    ).values_list("region__slug", "runs", "failures", "degraded", "histogram")
    per_region: dict[str, list[tuple[int, int, int, list[list[int]]]]] = {}
    for slug, runs, failures, degraded, histogram in rollups:
        per_region.setdefault(slug, []).append((runs, failures, degraded, histogram))
    # Each region's rows summed once; the overall figures sum those sums (a few rows, not every hour again).
    summed = {slug: _summed(rows) for slug, rows in sorted(per_region.items())}
    return {
        "from": start,
        "to": end,
        "overall": _figures(_summed(list(summed.values()))),
        "regions": {slug: _figures(row) for slug, row in summed.items()},
    }


def _summed(rows: list[tuple[int, int, int, list[list[int]]]]) -> tuple[int, int, int, list[list[int]]]:
    """Return rollup rows as one: runs, failures and degraded added, histograms merged."""
    return (
        sum(row[0] for row in rows),
        sum(row[1] for row in rows),
        sum(row[2] for row in rows),
        latency.merge(row[3] for row in rows),
    )


def uptimes_of(*, healthcheck_ids: Iterable[int], start: datetime, end: datetime) -> dict[int, float | None]:
    """Return each healthcheck's overall uptime over [start, end) as ``uptime_of`` computes it, in one query.

    A list page's figure for many checks at once: the hourly rollups summed per check (not per
    region), so no check costs a query of its own. A check without runs in the window maps to None.
    """
    first_hour = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    sums = (
        Rollup.objects.filter(
            healthcheck_id__in=list(healthcheck_ids),
            period=Rollup.Period.HOUR,
            start__gte=first_hour,
            start__lt=end,
        )
        .values("healthcheck_id")
        .annotate(runs=Sum("runs"), failures=Sum("failures"))
        .values_list("healthcheck_id", "runs", "failures")
    )
    return {hc_id: (runs - failures) / runs if runs else None for hc_id, runs, failures in sums}


def _figures(row: tuple[int, int, int, list[list[int]]]) -> UptimeFigures:
    runs, failures, degraded, histogram = row
    return {
        "runs": runs,
        "failures": failures,
        "degraded": degraded,
        "uptime": (runs - failures) / runs if runs else None,
        "p50_ms": latency.percentile(histogram, 0.5),
        "p95_ms": latency.percentile(histogram, 0.95),
    }


# --- uptime history (monitors.uptime's inputs) -----------------------------------------------------

# The measured statuses: pending and paused time is unmonitored and leaves the denominator.
MEASURED_STATUSES = frozenset({Status.UP.value, Status.DEGRADED.value, Status.DOWN.value})
# Read once: an enum member's value is a descriptor call, and _timeline asks per status change.
_DOWN = Status.DOWN.value
# The raw-result windows read per query when refining downtime bounds (they travel as arrays).
BOUND_WINDOWS_PER_QUERY = 20_000
# Slack past the rechecks when looking back for the results that led to a change: the verdict
# waits for the slowest region (its timeout, the settle window).
BOUND_SLACK = timedelta(minutes=2)


def acknowledgements_of(
    *, healthcheck_ids: Sequence[int], start: datetime, end: datetime, until: datetime
) -> dict[int, list[Acknowledged]] | None:
    """Return each healthcheck's incidents opened in ``[start, end)`` and acknowledged by ``until``, in order.

    Monitors keeps no acknowledgements: it asks the app that does (``signals.acknowledgements_asked``,
    answered by alerts). None when no app answers, so a report says MTTA is unknown, not zero.
    """
    answers = acknowledgements_asked.send(
        sender=None, healthcheck_ids=list(healthcheck_ids), start=start, end=end, until=until
    )
    if not answers:
        return None
    result: dict[int, list[Acknowledged]] = {hc_id: [] for hc_id in healthcheck_ids}
    for _, incidents in answers:
        # django-stubs types a receiver's answer as str | None; acknowledgements_asked's are these.
        for incident in cast("Iterable[Acknowledged]", incidents):
            result.setdefault(incident.healthcheck_id, []).append(incident)
    for found in result.values():
        found.sort(key=lambda incident: (incident.opened_at, incident.acknowledged_at))
    return result


@dataclass(frozen=True)
class UptimeHistory:
    """Hold one healthcheck's downtime and measured intervals over a period, and how downtime was bounded."""

    downtime: list[Interval]
    measured: list[Interval]
    # Downtime bounds taken at the status change's time because the raw results were gone.
    bounds_from_changes: int = 0


def uptime_history(
    *, healthchecks: Sequence[Healthcheck], start: datetime, end: datetime
) -> dict[int, UptimeHistory]:
    """Return each healthcheck's downtime and measured intervals over ``[start, end)``, from its status changes.

    The status at ``start`` is the first later change's ``from_status`` (or the current status
    when nothing changed since); nothing before the check's creation counts as measured, nor
    does pending or paused time.

    Downtime runs from the first failing result that led to ``down`` to the first good result
    of the recovery (``monitors.uptime.down_since`` / ``down_until``). The recorder stores that
    moment on the change as it writes it (``StatusChange.effective_at``, :func:`downtime_bounds`),
    so it outlives the raw results. For a change without one (written before that, or by a
    pause) it is read from the raw results just before the change; where those are pruned (or
    never came, as for a stale region) the bound falls back to the status change's own time,
    which is later by the rechecks (``bounds_from_changes`` counts those).

    The healthchecks need ``id``, ``created_at``, ``status``, ``quorum``, ``interval_seconds``,
    ``recheck_count`` and ``recheck_delay_seconds`` loaded. Queries: one for the changes and,
    when some went to or from down, one for each check's oldest kept result and, if some of
    those changes are newer, one per BOUND_WINDOWS_PER_QUERY of them for the results.
    """
    changes: dict[int, list[tuple[datetime, str, str]]] = defaultdict(list)
    stored: dict[tuple[int, datetime, bool], datetime] = {}
    rows = (
        StatusChange.objects.filter(
            healthcheck_id__in=[hc.id for hc in healthchecks], at__gte=start, at__lte=end
        )
        .order_by("healthcheck_id", "at", "id")
        # As epoch seconds: a flapping page reads tens of thousands (monitors.timestamps).
        .values_list("healthcheck_id", EpochSeconds("at"), "from_status", "to_status", "effective_at")
    )
    for hc_id, epoch, from_status, to_status, effective_at in rows:
        at = from_epoch(epoch)
        changes[hc_id].append((at, from_status, to_status))
        if effective_at is not None and Status.DOWN.value in (from_status, to_status):
            stored[(hc_id, at, to_status == Status.DOWN.value)] = effective_at
    timelines = {hc.id: _timeline(hc, changes.get(hc.id, []), start, end) for hc in healthchecks}
    bounds = _down_bounds(healthchecks, timelines, stored)
    result: dict[int, UptimeHistory] = {}
    for hc in healthchecks:
        measured, episodes = timelines[hc.id]
        downtime: list[Interval] = []
        fallbacks = 0
        for episode in episodes:
            begin, finish = episode.start, episode.end
            if episode.into is not None:
                found = bounds.get((hc.id, episode.into, True))
                fallbacks += found is None
                begin = max(found or begin, start)
            if episode.out_of is not None:
                found = bounds.get((hc.id, episode.out_of, False))
                fallbacks += found is None
                finish = min(max(found or finish, begin), end)
            downtime.append(Interval(begin, finish))
        result[hc.id] = UptimeHistory(downtime, measured, fallbacks)
    return result


def availability_over(
    *, healthchecks: Sequence[Healthcheck], spans: Mapping[str, timedelta], now: datetime
) -> dict[int, dict[str, Availability]]:
    """Return each healthcheck's uptime figures over each span ending at ``now`` (``{"24h": timedelta(hours=24)}``).

    The status pages' and reports' definition (``monitors.uptime.availability``): downtime from
    ``uptime_history``, maintenance out of the denominator. The healthchecks need what
    ``uptime_history`` reads plus ``organization_id``. Queries: ``uptime_history``'s over the
    longest span, and one or two for maintenance (none when no window is live).
    """
    if not healthchecks or not spans:
        return {}
    start = now - max(spans.values())
    history = uptime_history(healthchecks=healthchecks, start=start, end=now)
    held = maintenance_covering(
        organizations={hc.id: hc.organization_id for hc in healthchecks}, start=start, end=now
    )
    figures: dict[int, dict[str, Availability]] = {}
    for hc in healthchecks:
        own = history[hc.id]
        maintenance = [Interval(o.start, o.end) for o in held.get(hc.id, ())]
        figures[hc.id] = {
            name: availability(
                start=now - length, end=now, downtime=own.downtime, maintenance=maintenance, data=own.measured
            )
            for name, length in spans.items()
        }
    return figures


@dataclass(frozen=True, slots=True)
class _Episode:
    """Hold one down stretch as the changes say, and the changes that open and close it (None: a period bound)."""

    start: datetime
    end: datetime
    into: datetime | None  # the change to down, when inside the period
    out_of: datetime | None  # the change out of down, when inside the period
    look_back_from: datetime  # the change before ``into``, or the check's creation


def _timeline(
    hc: Healthcheck, own: list[tuple[datetime, str, str]], start: datetime, end: datetime
) -> tuple[list[Interval], list[_Episode]]:
    begin = max(start, hc.created_at)
    status = own[0][1] if own else hc.status
    measured: list[list[datetime]] = []  # [start, end] pairs, made Intervals once joined
    episodes: list[_Episode] = []
    cursor = begin
    previous_change = hc.created_at
    opened: datetime | None = None  # the change to down that opened the current status, if in the period
    opened_after = hc.created_at  # the change before it: its look-back goes no further
    for at, _, to_status in [*own, (end, "", "")]:
        change_at = at
        at = max(at, begin)
        if at > cursor:
            if status in MEASURED_STATUSES:
                # Measured stretches join across up/down/degraded changes: one interval, not hundreds.
                if measured and measured[-1][1] == cursor:
                    measured[-1][1] = at
                else:
                    measured.append([cursor, at])
            if status == _DOWN:
                closed = change_at if to_status else None
                episodes.append(_Episode(cursor, at, opened, closed, opened_after))
            cursor = at
        if to_status:
            opened = change_at if to_status == _DOWN and change_at >= begin else None
            opened_after = previous_change
            previous_change = change_at
            status = to_status
    return [Interval(first, last) for first, last in measured], episodes


class _Timing(Protocol):
    """What the bounds read of a healthcheck (a model instance, or the recorder's plain values)."""

    interval_seconds: int
    recheck_count: int
    recheck_delay_seconds: int
    quorum: int | None


def _look_back(hc: _Timing) -> timedelta:
    """Return how far before a change its deciding results can lie: a slot, its rechecks and slack."""
    return timedelta(seconds=hc.interval_seconds + hc.recheck_count * hc.recheck_delay_seconds) + BOUND_SLACK


@dataclass(frozen=True)
class BoundWindow:
    """Hold where the results that moved a check into (``into``) or out of down lie: checked in ``(after, until]``."""

    healthcheck_id: int
    into: bool
    after: datetime
    until: datetime
    quorum: int | None
    slot_lag: timedelta  # how far a run's checked_at trails its slot


def bound_window(
    hc: _Timing, *, healthcheck_id: int, into: bool, at: datetime, since: datetime | None
) -> BoundWindow:
    """Return the window of a change at ``at`` into or out of down; ``since`` is the change before it, if known."""
    back = _look_back(hc)
    after = at - back if since is None else max(at - back, since)
    return BoundWindow(healthcheck_id, into, after, at, hc.quorum, _slot_lag(hc))


def downtime_bounds(windows: Sequence[BoundWindow]) -> list[datetime | None]:
    """Return each window's bound from the raw results: the first failing result that led to down, or the first good result of the recovery.

    None where the results don't say (pruned, or never came). One query per
    BOUND_WINDOWS_PER_QUERY windows, none for none.
    """
    found: list[datetime | None] = []
    for first in range(0, len(windows), BOUND_WINDOWS_PER_QUERY):
        chunk = windows[first : first + BOUND_WINDOWS_PER_QUERY]
        runs: dict[int, list[Run]] = defaultdict(list)
        for index, region_id, checked_at, failing in _window_results(
            [(w.healthcheck_id, w.after - w.slot_lag, w.until) for w in chunk]
        ):
            runs[index].append(Run(checked_at, region_id, failing))
        for index, window in enumerate(chunk):
            inside = [run for run in runs.get(index, ()) if window.after < run.at <= window.until]
            bound = down_since if window.into else down_until
            found.append(bound(inside, quorum=window.quorum))
    return found


def _down_bounds(
    healthchecks: Sequence[Healthcheck],
    timelines: Mapping[int, tuple[list[Interval], list[_Episode]]],
    stored: Mapping[tuple[int, datetime, bool], datetime],
) -> dict[tuple[int, datetime, bool], datetime]:
    """Return the bound of each change into (True) or out of (False) down: stored, or where kept results say it.

    Keyed by (healthcheck id, change time, into down).
    """
    by_id = {hc.id: hc for hc in healthchecks}
    windows: list[BoundWindow] = []
    for hc_id, (_, episodes) in timelines.items():
        hc = by_id[hc_id]
        for episode in episodes:
            if episode.into is not None and (hc_id, episode.into, True) not in stored:
                windows.append(
                    bound_window(
                        hc, healthcheck_id=hc_id, into=True, at=episode.into, since=episode.look_back_from
                    )
                )
            if episode.out_of is not None and (hc_id, episode.out_of, False) not in stored:
                windows.append(
                    bound_window(hc, healthcheck_id=hc_id, into=False, at=episode.out_of, since=episode.into)
                )
    windows = _retained(windows)
    found = dict(stored)
    for window, bound in zip(windows, downtime_bounds(windows), strict=True):
        if bound is not None:
            found[(window.healthcheck_id, window.until, window.into)] = bound
    return found


def _retained(windows: list[BoundWindow]) -> list[BoundWindow]:
    """Return the windows whose raw results are still kept: none older than each check's oldest result.

    Pruning deletes a check's results oldest first (monitors.services.results_prune), so a change
    older than its check's oldest result has lost the results that would bound it: it is not
    looked up. One index probe per check (the newest-first slot index read from its end).
    """
    if not windows:
        return windows
    oldest = dict(
        Healthcheck.objects.filter(id__in={window.healthcheck_id for window in windows})
        .annotate(
            oldest=Subquery(
                ProbeResult.objects.filter(healthcheck_id=OuterRef("pk")).order_by("slot").values("slot")[:1]
            )
        )
        .values_list("id", "oldest")
    )
    return [
        window
        for window in windows
        if (first := oldest.get(window.healthcheck_id)) is not None and window.until >= first
    ]


def _window_results(
    windows: Sequence[tuple[int, datetime, datetime]],
) -> list[tuple[int, int, datetime, bool]]:
    """Return (window index, region id, checked_at, failing) of the results of ``(healthcheck, slot > lo, slot <= hi)`` windows.

    One statement for all the windows, which travel as one JSON document (jsonb_to_recordset on
    PostgreSQL, json_each on SQLite): a flapping check's thousands of episodes cost an index probe
    each, where an OR of thousands of terms, a VALUES list of thousands of parameters or arrays
    quoted by the driver cost the page hundreds of milliseconds just to be sent and planned.
    """
    quote = connection.ops.quote_name
    table = quote(ProbeResult._meta.db_table)
    hc, region, slot, checked, status = (
        quote(column_of(ProbeResult, name))
        for name in ("healthcheck", "region", "slot", "checked_at", "status")
    )
    if connection.vendor == "postgresql":
        source = "jsonb_to_recordset(%s::jsonb) AS w (k integer, hc bigint, lo timestamptz, hi timestamptz)"
        rows = [
            {"k": index, "hc": hc_id, "lo": low.isoformat(), "hi": high.isoformat()}
            for index, (hc_id, low, high) in enumerate(windows)
        ]
    else:
        adapt = connection.ops.adapt_datetimefield_value
        source = (
            "(SELECT json_extract(value, '$.k') AS k, json_extract(value, '$.hc') AS hc,"
            " json_extract(value, '$.lo') AS lo, json_extract(value, '$.hi') AS hi FROM json_each(%s)) AS w"
        )
        rows = [
            {"k": index, "hc": hc_id, "lo": adapt(low), "hi": adapt(high)}
            for index, (hc_id, low, high) in enumerate(windows)
        ]
    params = [json.dumps(rows)]
    sql = (
        f"SELECT w.k, r.{region}, {epoch_sql(f'r.{checked}', connection.vendor)}, r.{status} FROM {source} "  # noqa: S608 - quoted names, values are parameters
        f"JOIN {table} r ON r.{hc} = w.hc AND r.{slot} > w.lo AND r.{slot} <= w.hi"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    return [
        (int(k), int(region_id), from_epoch(at), state == Status.DOWN.value)
        for k, region_id, at, state in found
    ]


def _aware(value: datetime | str) -> datetime:
    """Return a raw query's datetime as an aware UTC datetime (SQLite hands back text or naive values)."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _slot_lag(hc: _Timing) -> timedelta:
    """Return how far a run's ``checked_at`` can trail its slot: its rechecks and a timeout's slack."""
    return timedelta(seconds=hc.recheck_count * hc.recheck_delay_seconds) + BOUND_SLACK
