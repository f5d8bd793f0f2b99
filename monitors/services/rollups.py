"""Sum results up into hourly and daily rollups, and prune raw results past retention."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Exists, F, OuterRef

from monitors import latency
from monitors.models import Healthcheck, Plan, ProbeResult, Rollup, ToolList, ToolListVersion
from monitors.rules import answered, rollup_figures
from monitors.scorecard import AttemptTally
from probes.types import Status


def rollups_refresh(*, now: datetime, hours: int = 2) -> int:
    """Recompute the hourly rollups of the last ``hours`` hours and the days they fall in.

    Each slot counts once per region, by its last attempt: a failure that a recheck cleared is
    not downtime, and a slot whose last attempt ran in a maintenance window is left out. Recomputing is idempotent (upserts by the rollup's unique key).
    """
    hour = now.replace(minute=0, second=0, microsecond=0)
    starts = [hour - timedelta(hours=back) for back in range(hours - 1, -1, -1)]
    written = 0
    for start in starts:
        written += _hourly_rollups(start)
    for day in sorted({start.replace(hour=0) for start in starts}):
        written += _daily_rollups(day)
    return written


def _hourly_rollups(start: datetime) -> int:
    end = start + timedelta(hours=1)
    rows = (
        ProbeResult.objects.filter(slot__gte=start, slot__lt=end)
        .order_by("healthcheck_id", "region_id", "slot", "attempt")
        .values_list(
            "healthcheck_id",
            "region_id",
            "slot",
            "status",
            "total_ms",
            "in_maintenance",
            "kind",
            "http_status",
            "tool_count",
        )
    )
    finals: dict[tuple[int, int], dict[datetime, tuple[str, float | None]]] = defaultdict(dict)
    counts: dict[tuple[int, int], AttemptTally] = defaultdict(AttemptTally)
    for (
        hc_id,
        region_id,
        slot,
        status,
        total_ms,
        in_maintenance,
        kind,
        http_status,
        tool_count,
    ) in rows.iterator(chunk_size=5000):
        counts[(hc_id, region_id)].add(
            kind=kind,
            http_status=http_status,
            in_maintenance=in_maintenance,
            tools_listed=tool_count is not None,
            total_ms=total_ms,
        )
        runs = finals[(hc_id, region_id)]
        if in_maintenance:
            # A slot whose last attempt ran in maintenance counts neither way, whatever the earlier attempts said.
            runs.pop(slot, None)
            continue
        runs[slot] = (status, total_ms)  # later attempts overwrite earlier ones
    # A pair whose every slot ended in maintenance keeps no row, as before the scorecard's counts:
    # the rare attempt before such a window (a recheck ran inside it) is not counted.
    keys = [key for key in finals if finals[key]]
    thresholds = dict(
        Healthcheck.objects.filter(id__in={key[0] for key in keys}).values_list("id", "degraded_threshold_ms")
    )
    rollups = []
    for hc_id, region_id in keys:
        threshold = thresholds.get(hc_id)
        samples = [
            (_sample_status(status, total_ms, threshold), total_ms)
            for status, total_ms in finals[(hc_id, region_id)].values()
        ]
        figures = rollup_figures(samples)
        tally = counts[(hc_id, region_id)]
        rollups.append(
            Rollup(
                healthcheck_id=hc_id,
                region_id=region_id,
                period=Rollup.Period.HOUR,
                start=start,
                runs=figures.runs,
                failures=figures.failures,
                degraded=figures.degraded,
                p50_ms=figures.p50_ms,
                p95_ms=figures.p95_ms,
                # The same runs as the percentiles: the daily figures and reports read this.
                histogram=latency.histogram_of(
                    ms for status, ms in samples if ms is not None and answered(status)
                ),
                attempts=tally.attempts,
                successes=tally.successes,
                successes_1s=tally.within_1s,
                successes_3s=tally.within_3s,
            )
        )
    return _upsert_rollups(rollups)


def _daily_rollups(day: datetime) -> int:
    hours = Rollup.objects.filter(
        period=Rollup.Period.HOUR, start__gte=day, start__lt=day + timedelta(days=1)
    ).values_list(
        "healthcheck_id",
        "region_id",
        "runs",
        "failures",
        "degraded",
        "histogram",
        "attempts",
        "successes",
        "successes_1s",
        "successes_3s",
    )
    merged: dict[tuple[int, int], list[Any]] = {}
    tallies: dict[tuple[int, int], AttemptTally] = {}
    for hc_id, region_id, runs, failures, degraded, histogram, *counted in hours.iterator(chunk_size=5000):
        entry = merged.setdefault((hc_id, region_id), [0, 0, 0, []])
        entry[0] += runs
        entry[1] += failures
        entry[2] += degraded
        entry[3].append(histogram)
        if counted[0] is not None:
            tallies.setdefault((hc_id, region_id), AttemptTally()).merge(*counted)
    rollups = []
    for (hc_id, region_id), (runs, failures, degraded, histograms) in merged.items():
        histogram = latency.merge(histograms)
        # None when no hour of the day was counted (rolled up before the counts existed).
        tally = tallies.get((hc_id, region_id))
        rollups.append(
            Rollup(
                healthcheck_id=hc_id,
                region_id=region_id,
                period=Rollup.Period.DAY,
                start=day,
                runs=runs,
                failures=failures,
                degraded=degraded,
                p50_ms=latency.percentile(histogram, 0.5),
                p95_ms=latency.percentile(histogram, 0.95),
                histogram=histogram,
                attempts=tally.attempts if tally else None,
                successes=tally.successes if tally else None,
                successes_1s=tally.within_1s if tally else None,
                successes_3s=tally.within_3s if tally else None,
            )
        )
    return _upsert_rollups(rollups)


def _upsert_rollups(rollups: list[Rollup]) -> int:
    Rollup.objects.bulk_create(
        rollups,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["healthcheck", "region", "period", "start"],
        update_fields=[
            "runs",
            "failures",
            "degraded",
            "p50_ms",
            "p95_ms",
            "histogram",
            "attempts",
            "successes",
            "successes_1s",
            "successes_3s",
        ],
    )
    return len(rollups)


def _sample_status(status: str, total_ms: float | None, threshold: int | None) -> Status:
    if status == Status.UP and threshold is not None and total_ms is not None and total_ms > threshold:
        return Status.DEGRADED
    return Status(status)


def results_prune(*, now: datetime, batch_size: int = 10_000) -> int:
    """Delete raw results older than each plan's retention, then the tool lists no result refers to.

    Rollups are kept. Deletes go in batches of short transactions: pruning must never hold locks
    the recorder waits on. Returns the number of results deleted.
    """
    deleted = 0
    for plan in Plan.objects.all():
        cutoff = now - timedelta(days=plan.retention_days)
        while True:
            ids = list(
                ProbeResult.objects.filter(healthcheck__organization__plan=plan, slot__lt=cutoff).values_list(
                    "id", flat=True
                )[:batch_size]
            )
            if not ids:
                break
            deleted += ProbeResult.objects.filter(id__in=ids).delete()[0]
        _prune_tool_lists(plan, cutoff, batch_size=batch_size)
        _prune_tool_list_versions(plan, cutoff, batch_size=batch_size)
    return deleted


def _prune_tool_list_versions(plan: Plan, cutoff: datetime, *, batch_size: int) -> int:
    """Delete the plan's tool list versions replaced before the cutoff; the current one always stays."""
    pruned = 0
    while True:
        ids = list(
            ToolListVersion.objects.filter(
                healthcheck__organization__plan=plan, replaced_at__lt=cutoff
            ).values_list("id", flat=True)[:batch_size]
        )
        if not ids:
            return pruned
        pruned += ToolListVersion.objects.filter(id__in=ids).delete()[0]


def _prune_tool_lists(plan: Plan, cutoff: datetime, *, batch_size: int) -> int:
    """Delete the plan's tool lists that no result refers to any more; return how many.

    A list is stored with the first result that carries its digest, so only a list first seen
    before the cutoff can have lost its results. The healthcheck's current list stays whatever
    its results say: the next run's tool change is told against it.
    """
    referenced = ProbeResult.objects.filter(
        healthcheck_id=OuterRef("healthcheck_id"), tool_digest=OuterRef("digest")
    )
    pruned = 0
    while True:
        ids = list(
            ToolList.objects.filter(healthcheck__organization__plan=plan, first_seen_at__lt=cutoff)
            .exclude(digest=F("healthcheck__tool_digest"))
            .exclude(Exists(referenced))
            .values_list("id", flat=True)[:batch_size]
        )
        if not ids:
            return pruned
        pruned += ToolList.objects.filter(id__in=ids).delete()[0]
