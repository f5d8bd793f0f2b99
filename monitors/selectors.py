"""Read tenancy and healthchecks; every function here is scoped to one organization."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TypedDict

from django.db.models import QuerySet

from monitors import latency
from monitors.models import ApiKey, Healthcheck, Organization, ProbeResult, Region, Rollup
from monitors.secrets import SecretUnreadable, decrypt_headers
from probes.checks import CheckConfig, check_kind
from probes.config import ConfigError

logger = logging.getLogger(__name__)


def healthchecks_of(*, organization: Organization) -> QuerySet[Healthcheck]:
    """Return the organization's healthchecks with what the API shows prefetched."""
    return (
        Healthcheck.objects.filter(organization=organization)
        .select_related("organization")
        .prefetch_related("regions", "tag_rows")
    )


def regions_enabled() -> QuerySet[Region]:
    return Region.objects.filter(enabled=True)


def healthchecks_overdue_count(*, before: datetime) -> int:
    """Count the unpaused healthchecks whose next check was due before ``before`` (the hc_due index)."""
    return Healthcheck.objects.filter(paused=False, next_check_at__lt=before).count()


def regions_allowed(*, organization: Organization) -> QuerySet[Region]:
    """Return the enabled regions the organization's plan allows."""
    return organization.plan.allowed_regions.filter(enabled=True).order_by("slug")


def api_key_by_hash(*, key_hash: str) -> ApiKey | None:
    return (
        ApiKey.objects.select_related("organization", "organization__plan").filter(key_hash=key_hash).first()
    )


def check_configs(*, healthcheck_ids: list[int]) -> dict[int, CheckConfig]:
    """Return the runnable engine config of each unpaused healthcheck, header values decrypted.

    A healthcheck whose stored config no longer parses (a rule tightened since it was saved) or
    whose headers can't be decrypted is left out and logged, so one bad row never stops a batch.
    """
    configs: dict[int, CheckConfig] = {}
    rows = Healthcheck.objects.filter(id__in=healthcheck_ids, paused=False).values_list(
        "id", "type", "config", "secret_headers"
    )
    for hc_id, check_type, config, secret_headers in rows:
        try:
            data = {**config, "headers": decrypt_headers(secret_headers)}
            configs[hc_id] = check_kind(check_type).parse(data)
        except (ConfigError, SecretUnreadable, ValueError) as exc:
            logger.error("healthcheck %s can't run: %s", hc_id, type(exc).__name__)
    return configs


def results_of(
    *, healthcheck: Healthcheck, region: str | None, start: datetime | None, end: datetime | None
) -> QuerySet[ProbeResult]:
    queryset = ProbeResult.objects.filter(healthcheck=healthcheck).select_related("region")
    if region:
        queryset = queryset.filter(region__slug=region)
    if start:
        queryset = queryset.filter(slot__gte=start)
    if end:
        queryset = queryset.filter(slot__lt=end)
    return queryset


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
    everything = [row for rows in per_region.values() for row in rows]
    return {
        "from": start,
        "to": end,
        "overall": _figures(everything),
        "regions": {slug: _figures(rows) for slug, rows in sorted(per_region.items())},
    }


def _figures(rows: list[tuple[int, int, int, list[list[int]]]]) -> UptimeFigures:
    runs = sum(row[0] for row in rows)
    failures = sum(row[1] for row in rows)
    histogram = latency.merge(row[3] for row in rows)
    return {
        "runs": runs,
        "failures": failures,
        "degraded": sum(row[2] for row in rows),
        "uptime": (runs - failures) / runs if runs else None,
        "p50_ms": latency.percentile(histogram, 0.5),
        "p95_ms": latency.percentile(histogram, 0.95),
    }
