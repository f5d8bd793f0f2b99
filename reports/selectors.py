"""Read what a report needs from monitors: history, maintenance, rollups, and the report's own targets.

A report costs a fixed number of queries whatever the number of healthchecks: the status
changes, the raw results around down changes (one per 200 episodes), the maintenance windows,
the acknowledged alert incidents (asked of alerts through monitors' signal), the rollups (daily
ones for whole UTC days, hourly ones for the edges) and the targets.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.db import connection
from django.db.models import Q, QuerySet, Sum

from monitors import latency
from monitors.models import Healthcheck, Membership, Organization, Region, Rollup
from monitors.selectors import acknowledgements_of, maintenance_covering, uptime_history
from monitors.uptime import Interval, acknowledgements, availability
from reports.models import DEFAULT_SLA_TARGET, HealthcheckTarget, MonthlyReportOptIn, ReportSettings
from reports.render.period import Period
from reports.render.report import CheckReport, RegionLatency, Report

# What uptime_history reads of each healthcheck, and what the report names.
HEALTHCHECK_FIELDS = (
    "id",
    "public_id",
    "name",
    "organization_id",
    "created_at",
    "status",
    "quorum",
    "interval_seconds",
    "recheck_count",
    "recheck_delay_seconds",
)


def report_settings_of(*, organization: Organization) -> ReportSettings:
    """Return the organization's report settings, or the defaults (unsaved) when it has none."""
    found = ReportSettings.objects.filter(organization=organization).first()
    return found or ReportSettings(organization=organization)


def report_healthchecks(*, organization: Organization) -> QuerySet[Healthcheck]:
    """Return the organization's healthchecks as a report lists them: by name, then by creation."""
    return (
        Healthcheck.objects.filter(organization=organization).only(*HEALTHCHECK_FIELDS).order_by("name", "id")
    )


def report_build(
    *, organization: Organization, period: Period, now: datetime, healthcheck: Healthcheck | None = None
) -> Report:
    """Return the report of ``period`` for the organization, or for one of its healthchecks.

    Time after ``now`` is unmonitored; a period wholly past gives the same report every time
    (as long as its raw results are kept or already pruned: monitors.selectors.uptime_history).
    """
    checks = (
        [healthcheck] if healthcheck is not None else list(report_healthchecks(organization=organization))
    )
    previous = period.previous()
    end = min(period.end, now)
    history = uptime_history(healthchecks=checks, start=previous.start, end=end)
    maintenance = maintenance_covering(
        organizations={hc.id: organization.id for hc in checks}, start=previous.start, end=end
    )
    acknowledged = acknowledgements_of(
        healthcheck_ids=[hc.id for hc in checks], start=previous.start, end=end, until=now
    )
    latencies = _latencies([hc.id for hc in checks], period.start, end)
    default = report_settings_of(organization=organization).sla_target
    targets = dict(
        HealthcheckTarget.objects.filter(healthcheck_id__in=[hc.id for hc in checks]).values_list(
            "healthcheck_id", "sla_target"
        )
    )
    reports = []
    for hc in checks:
        own = history[hc.id]
        held = [Interval(o.start, o.end) for o in maintenance.get(hc.id, ())]
        figures = {
            name: availability(
                start=span.start,
                end=min(span.end, end),
                downtime=own.downtime,
                maintenance=held,
                data=own.measured,
            )
            for name, span in (("current", period), ("previous", previous))
        }
        acks = {
            name: acknowledgements(
                start=span.start, end=min(span.end, end), incidents=(acknowledged or {}).get(hc.id, ())
            )
            for name, span in (("current", period), ("previous", previous))
        }
        regions, overall = latencies.get(hc.id, ((), _no_latency("all")))
        reports.append(
            CheckReport(
                id=str(hc.public_id),
                name=hc.name,
                current=figures["current"],
                previous=figures["previous"],
                target=Decimal(targets.get(hc.id, default)),
                latency=regions,
                overall_latency=overall,
                bounds_from_changes=own.bounds_from_changes,
                acknowledged=acks["current"],
                previous_acknowledged=acks["previous"],
            )
        )
    return Report(
        organization=organization.slug,
        organization_name=organization.name,
        scope="healthcheck" if healthcheck is not None else "organization",
        period=period,
        checks=tuple(reports),
        target=Decimal(default or DEFAULT_SLA_TARGET),
        acknowledgements_kept=acknowledged is not None,
    )


def _no_latency(region: str) -> RegionLatency:
    return RegionLatency(region, 0, 0, None, None, None)


def _rollup_filter(start: datetime, end: datetime) -> Q:
    """Return the rollups that cover ``[start, end)``: whole UTC days from the daily ones, the edges by hour.

    Rollup hours are UTC hours: a zone with a half-hour offset starts its period within an hour
    whose runs count whole. Days from daily rollups keep a month of 500 checks to ~80,000 rows.
    """
    first_hour = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    first_day = first_hour.replace(hour=0)
    if first_day < first_hour:
        first_day += timedelta(days=1)
    last_day = end.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if last_day <= first_day:
        return Q(period=Rollup.Period.HOUR, start__gte=first_hour, start__lt=end)
    return (
        Q(period=Rollup.Period.DAY, start__gte=first_day, start__lt=last_day)
        | Q(period=Rollup.Period.HOUR, start__gte=first_hour, start__lt=first_day)
        | Q(period=Rollup.Period.HOUR, start__gte=last_day, start__lt=end)
    )


def _latencies(
    healthcheck_ids: Sequence[int], start: datetime, end: datetime
) -> dict[int, tuple[tuple[RegionLatency, ...], RegionLatency]]:
    """Return each healthcheck's runs and percentiles per region and over all regions, from the histograms."""
    if not healthcheck_ids:
        return {}
    slugs = dict(Region.objects.values_list("id", "slug"))
    rollups = Rollup.objects.filter(_rollup_filter(start, end), healthcheck_id__in=list(healthcheck_ids))
    if connection.vendor == "postgresql":
        counts, merged = _merged_in_postgresql(rollups)
    else:
        counts, merged = _merged_here(rollups)
    per_check: dict[int, list[tuple[str, int, int, list[list[int]]]]] = defaultdict(list)
    for (hc_id, region_id), (runs, failures) in counts.items():
        per_check[hc_id].append(
            (slugs.get(region_id, str(region_id)), runs, failures, merged.get((hc_id, region_id), []))
        )
    result: dict[int, tuple[tuple[RegionLatency, ...], RegionLatency]] = {}
    for hc_id, regions in per_check.items():
        regions.sort()
        overall = latency.merge(histogram for *_, histogram in regions)
        result[hc_id] = (
            tuple(
                _region_latency(slug, runs, failures, histogram)
                for slug, runs, failures, histogram in regions
            ),
            _region_latency("all", sum(r[1] for r in regions), sum(r[2] for r in regions), overall),
        )
    return result


# Per (healthcheck, region): the runs and failures, and the merged histogram.
_Counts = dict[tuple[int, int], tuple[int, int]]
_Merged = dict[tuple[int, int], latency.Histogram]


def _merged_here(rollups: QuerySet[Rollup]) -> tuple[_Counts, _Merged]:
    """Return the rollups' runs, failures and merged histograms per (healthcheck, region), merged in Python."""
    histograms: dict[tuple[int, int], list[latency.Histogram]] = defaultdict(list)
    counts: dict[tuple[int, int], tuple[int, int]] = {}
    rows = rollups.values_list("healthcheck_id", "region_id", "runs", "failures", "histogram").iterator(
        chunk_size=5000
    )
    for hc_id, region_id, runs, failures, histogram in rows:
        key = (hc_id, region_id)
        histograms[key].append(histogram)
        before = counts.get(key, (0, 0))
        counts[key] = (before[0] + runs, before[1] + failures)
    return counts, {key: latency.merge(found) for key, found in histograms.items()}


def _merged_in_postgresql(rollups: QuerySet[Rollup]) -> tuple[_Counts, _Merged]:
    """Return what _merged_here does, the histograms summed by PostgreSQL bucket by bucket.

    A month of 500 checks in three regions is ~80,000 rollups: decoding their JSON one by one
    took most of the report's figures; summed in the database, a few thousand rows come back.
    """
    counts = {
        (hc_id, region_id): (runs, failures)
        for hc_id, region_id, runs, failures in rollups.values("healthcheck_id", "region_id")
        .annotate(all_runs=Sum("runs"), all_failures=Sum("failures"))
        .values_list("healthcheck_id", "region_id", "all_runs", "all_failures")
    }
    chosen, params = rollups.values_list("healthcheck_id", "region_id", "histogram").query.sql_with_params()
    sql = (
        "SELECT r.hc, r.region, (b.value->>0)::integer AS bucket, SUM((b.value->>1)::bigint)"  # noqa: S608 - the ORM's own SQL, values are parameters
        f" FROM ({chosen}) AS r (hc, region, histogram) CROSS JOIN LATERAL jsonb_array_elements(r.histogram) AS b"
        " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    )
    merged: _Merged = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for hc_id, region_id, bucket, count in cursor.fetchall():
            merged[(hc_id, region_id)].append([bucket, int(count)])
    return counts, merged


def _region_latency(region: str, runs: int, failures: int, histogram: list[list[int]]) -> RegionLatency:
    return RegionLatency(
        region,
        runs,
        failures,
        latency.percentile(histogram, 0.5),
        latency.percentile(histogram, 0.95),
        latency.percentile(histogram, 0.99),
    )


def monthly_recipients(*, organization: Organization) -> list[str]:
    """Return the email addresses of the organization's owners who opted in to the monthly report, sorted."""
    rows = MonthlyReportOptIn.objects.filter(
        membership__organization=organization, membership__role=Membership.Role.OWNER
    ).values_list("membership__user__email", flat=True)
    return sorted({email for email in rows if email})


def monthly_report_opted_in(*, membership: Membership) -> bool:
    """Say whether this member asked for the monthly report."""
    return MonthlyReportOptIn.objects.filter(membership=membership).exists()


def organizations_with_recipients() -> QuerySet[Organization]:
    """Return the organizations with at least one opted-in owner."""
    return Organization.objects.filter(
        memberships__role=Membership.Role.OWNER, memberships__monthly_report__isnull=False
    ).distinct()
