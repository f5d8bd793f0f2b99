"""A page like the demo's with everything it can show, for the tests that read it over HTTP (a client, a browser)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from monitors.models import Healthcheck, Organization, Region, Rollup, StatusChange
from monitors.services import healthcheck_create, maintenance_window_create
from probes.checks.mcp import MCP
from statuspages import services
from statuspages.models import StatusPage

OUTAGE_TITLE = "API errors"
OLD_TITLE = "Slow search"
ACTIVE_MAINTENANCE = "Failover drill"
UPCOMING_MAINTENANCE = "Database upgrade"


@dataclass(frozen=True)
class LivePage:
    page: StatusPage
    api: Healthcheck  # down now, with an open published incident; down 30 minutes three days ago
    docs: Healthcheck  # up, with a maintenance window in two hours
    search: Healthcheck  # in a maintenance window now
    outage_day: datetime  # the start of the 30 minutes three days ago


def _check(organization: Organization, name: str, status: str, now: datetime) -> Healthcheck:
    check = healthcheck_create(
        organization=organization,
        name=name,
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=now,
        interval_seconds=3600,
    )
    Healthcheck.objects.filter(pk=check.pk).update(created_at=now - timedelta(days=120), status=status)
    check.refresh_from_db()
    return check


def live_page(organization: Organization, *, now: datetime) -> LivePage:
    """Make a page with a group, three components, two published incidents, two maintenances and a day's chart."""
    page = services.status_page_create(
        organization=organization,
        changes={
            "slug": "acme",
            "title": "Acme status",
            "description": "Our MCP servers.",
            "time_zone": "UTC",
        },
    )
    api = _check(organization, "API", "down", now)
    docs = _check(organization, "Docs", "up", now)
    search = _check(organization, "Search", "up", now)
    core = services.group_create(page=page, name="Core", position=1)
    api_part = services.component_create(
        page=page, changes={"healthcheck": api.public_id, "group": core.public_id, "position": 1}
    )
    services.component_create(
        page=page, changes={"healthcheck": docs.public_id, "group": core.public_id, "position": 2}
    )
    services.component_create(page=page, changes={"healthcheck": search.public_id, "position": 3})

    outage_day = (now - timedelta(days=3)).replace(hour=10, minute=0, second=0, microsecond=0)
    for at, before, after in (
        (outage_day, "up", "down"),
        (outage_day + timedelta(minutes=30), "down", "up"),
        (now - timedelta(minutes=20), "up", "down"),
    ):
        StatusChange.objects.create(healthcheck=api, at=at, from_status=before, to_status=after)
    old = services.incident_create(
        page=page,
        changes={"title": OLD_TITLE, "impact": "minor", "components": [api_part.public_id]},
        body="Searches are slow.",
        now=outage_day,
    )
    services.incident_update_add(
        incident=old, status="resolved", body="Back to normal.", now=outage_day + timedelta(minutes=30)
    )
    open_one = services.incident_create(
        page=page,
        changes={"title": OUTAGE_TITLE, "impact": "major", "components": [api_part.public_id]},
        body="Investigating errors on the API.",
        now=now - timedelta(minutes=15),
    )
    services.incident_update_add(
        incident=open_one,
        status="identified",
        body="A bad deploy; rolling back.",
        now=now - timedelta(minutes=5),
    )

    maintenance_window_create(
        organization=organization,
        name=ACTIVE_MAINTENANCE,
        starts_at=now - timedelta(minutes=10),
        duration=timedelta(hours=1),
        healthchecks=[search.public_id],
    )
    maintenance_window_create(
        organization=organization,
        name=UPCOMING_MAINTENANCE,
        description="Writes pause for a minute.",
        starts_at=now + timedelta(hours=2),
        duration=timedelta(minutes=30),
        healthchecks=[docs.public_id],
    )

    region = Region.objects.get(slug="eu-west")
    hour = now.replace(minute=0, second=0, microsecond=0)
    Rollup.objects.bulk_create(
        Rollup(
            healthcheck=check,
            region=region,
            period=Rollup.Period.HOUR,
            start=hour - timedelta(hours=back),
            runs=60,
            p50_ms=100.0 + 10 * back,
            p95_ms=200.0 + 10 * back,
        )
        for check in (api, docs, search)
        for back in range(1, 13)
    )
    return LivePage(page, api, docs, search, outage_day)
