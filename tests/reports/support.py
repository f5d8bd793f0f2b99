"""Factories for the uptime-history and report tests: checks with a past, status changes, raw results, rollups."""

from __future__ import annotations

from datetime import datetime, timedelta

from monitors import latency
from monitors.models import Healthcheck, Organization, ProbeResult, Region, Rollup, StatusChange
from monitors.services import healthcheck_create
from probes.checks.mcp import MCP


def make_check(
    organization: Organization,
    *,
    created: datetime,
    name: str = "api",
    status: str = "up",
    regions: list[str] | None = None,
    interval: int = 60,
    **rules: object,
) -> Healthcheck:
    """Create a check ``created`` at that moment, with ``status`` now, checked every ``interval`` seconds."""
    check = healthcheck_create(
        organization=organization,
        name=name,
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=created,
        interval_seconds=interval,
        region_slugs=regions or ["eu-west"],
        rules={"recheck_count": 2, "recheck_delay_seconds": 5, **rules},
    )
    Healthcheck.objects.filter(pk=check.pk).update(created_at=created, status=status)
    check.refresh_from_db()
    return check


def change(check: Healthcheck, at: datetime, from_status: str, to_status: str) -> StatusChange:
    return StatusChange.objects.create(healthcheck=check, at=at, from_status=from_status, to_status=to_status)


def result(
    check: Healthcheck, at: datetime, status: str, *, region: str = "eu-west", attempt: int = 0
) -> None:
    """Record a raw result that ended at ``at``; its slot is ``at`` less the rechecks before it."""
    ProbeResult.objects.create(
        healthcheck=check,
        region=Region.objects.get(slug=region),
        slot=at - timedelta(seconds=5 * attempt),
        attempt=attempt,
        checked_at=at,
        recorded_at=at,
        status=status,
    )


def outage_results(
    check: Healthcheck, first_failure: datetime, first_good: datetime, region: str = "eu-west"
) -> None:
    """Record what a real outage leaves: a good run, a failing run with two failing rechecks, then the good run."""
    result(check, first_failure - timedelta(seconds=60), "up", region=region)
    for attempt in range(3):
        result(check, first_failure + timedelta(seconds=5 * attempt), "down", region=region, attempt=attempt)
    result(check, first_good, "up", region=region)


def rollup(
    check: Healthcheck,
    start: datetime,
    times: list[float],
    *,
    region: str = "eu-west",
    period: str = "hour",
    failures: int = 0,
) -> Rollup:
    return Rollup.objects.create(
        healthcheck=check,
        region=Region.objects.get(slug=region),
        period=period,
        start=start,
        runs=len(times),
        failures=failures,
        histogram=latency.histogram_of(times),
    )
