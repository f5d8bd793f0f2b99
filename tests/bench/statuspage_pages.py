"""Measure a status page served by Django: the HTML page and summary.json of a page with many components.

``DATABASE_URL=postgres://… python tests/bench/statuspage_pages.py [--components 50] [--repeat 30] [--json]``

Builds, inside one transaction that is rolled back at the end (nothing stays in the database),
an organization with ``--components`` healthchecks on one page (Europe/Berlin, half of them in
a group, MCP details shown), each with 90 days of history: ``--outages-per-day`` outages a day
as status changes (3 minutes, then 40 seconds; a check flapping twice a day is the worst case), hourly rollups in three regions for the 90 days, and two published
incidents a week with two updates each. Then it asks for the page and ``summary.json``
through Django's test client (the whole stack in process, no network): the page drawn afresh
(its kept HTML made stale before each request) and as kept (statuspages/cache.py), then
``scheduled-maintenances.json``, the RSS feed and one component's badges (status, uptime 24 h and
30 d, response time, one shields.io JSON; drawn afresh, then as kept). Prints the median
and 95th percentile of ``--repeat`` warm requests in milliseconds (wall, and the process's CPU
time: on a shared machine the wall time is partly waiting for a core) and each one's SQL query count.
No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

import django

django.setup()

import gc  # noqa: E402

import uptimy.wsgi  # noqa: E402,F401 - loaded as a web worker loads it

# As each web worker does once it has loaded the app (uptimy.gunicorn_conf.post_worker_init).
gc.freeze()

from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from monitors.models import Healthcheck, Plan, Region, RegionState, Rollup, StatusChange  # noqa: E402
from monitors.services import healthcheck_create, organization_create  # noqa: E402
from probes.checks.mcp import MCP  # noqa: E402
from statuspages import services  # noqa: E402
from statuspages.cache import page_changed  # noqa: E402
from statuspages.models import Component, IncidentUpdate  # noqa: E402

DAYS = 90


class Rollback(Exception):
    """End the benchmark's transaction so nothing it built stays."""


def build(components: int, outages_per_day: int = 2) -> tuple[int, str]:
    now = timezone.now()
    organization = organization_create(slug=f"bench-{int(time.time())}", plan=Plan.objects.get(slug="paid"))
    page = services.status_page_create(
        organization=organization,
        changes={"slug": f"bench-{int(time.time())}", "title": "Bench", "time_zone": "Europe/Berlin"},
    )
    group = services.group_create(page=page, name="Core")
    regions = list(Region.objects.order_by("slug")[:3])
    start = now - timedelta(days=DAYS)
    changes, rollups, states = [], [], []
    created = []
    for index in range(components):
        check = healthcheck_create(
            organization=organization,
            name=f"check {index}",
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=now,
            interval_seconds=3600,
        )
        created.append(check)
        for day in range(DAYS):
            base = start + timedelta(days=day, minutes=(index * 37) % 600)
            outages = ((timedelta(0), timedelta(minutes=3)), (timedelta(hours=9), timedelta(seconds=40)))
            for offset, length in outages[:outages_per_day]:
                changes.append(
                    StatusChange(healthcheck=check, at=base + offset, from_status="up", to_status="down")
                )
                changes.append(
                    StatusChange(
                        healthcheck=check, at=base + offset + length, from_status="down", to_status="up"
                    )
                )
        for hour in range(DAYS * 24):
            moment = (start + timedelta(hours=hour)).replace(minute=0, second=0, microsecond=0)
            for region in regions:
                rollups.append(
                    Rollup(
                        healthcheck=check,
                        region=region,
                        period="hour",
                        start=moment,
                        runs=60,
                        failures=1,
                        p50_ms=80 + hour % 40,
                        p95_ms=200,
                    )
                )
        states.extend(RegionState(healthcheck=check, region=region, status="up") for region in regions)
        services.component_create(
            page=page,
            changes={
                "healthcheck": check.public_id,
                "position": index,
                "show_mcp_details": True,
                "group": group.public_id if index % 2 else None,
            },
        )
    Healthcheck.objects.filter(pk__in=[c.pk for c in created]).update(created_at=start, status="up")
    StatusChange.objects.bulk_create(changes, batch_size=5000)
    Rollup.objects.bulk_create(rollups, batch_size=5000)
    RegionState.objects.bulk_create(states)
    component_ids = list(page.components.values_list("public_id", flat=True))
    for week in range(DAYS // 7):
        for day in (1, 4):
            moment = start + timedelta(days=week * 7 + day)
            incident = services.incident_create(
                page=page,
                changes={"title": f"Incident {week}-{day}", "components": component_ids[day : day + 3]},
                body="Investigating.",
                now=moment,
            )
            services.incident_update_add(
                incident=incident, status="resolved", body="Fixed.", now=moment + timedelta(minutes=30)
            )
    print(
        f"built: {components} components, {len(changes)} status changes, {len(rollups)} rollups,"
        f" {IncidentUpdate.objects.filter(incident__page=page).count()} incident updates",
        file=sys.stderr,
    )
    return page.pk, page.slug


def measure(
    client: Client, url: str, repeat: int, before: Callable[[], None] = lambda: None
) -> dict[str, float]:
    for _ in range(3):
        before()
        assert client.get(url).status_code == 200
    times, cpu = [], []
    for _ in range(repeat):
        before()
        started, cpu_started = time.perf_counter(), time.process_time()
        answer = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        assert answer.status_code == 200
    before()
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    return {
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(statistics.quantiles(times, n=20)[18], 1),
        "cpu_p50_ms": round(statistics.median(cpu), 1),
        "cpu_p95_ms": round(statistics.quantiles(cpu, n=20)[18], 1),
        "queries": len(captured.captured_queries),
        "bytes": len(answer.content),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--components", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--outages-per-day", type=int, choices=(0, 1, 2), default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, object] = {"database": connection.vendor, "components": args.components}
    try:
        with transaction.atomic():
            page_id, slug = build(args.components, args.outages_per_day)
            client = Client(SERVER_NAME="localhost")
            # Drawn afresh each time (the kept HTML made stale first), then as kept for 30 s.
            results["html drawn"] = measure(client, f"/s/{slug}/", args.repeat, lambda: page_changed(page_id))
            results["html kept"] = measure(client, f"/s/{slug}/", args.repeat)
            results["summary.json"] = measure(client, f"/s/{slug}/api/v2/summary.json", args.repeat)
            results["scheduled-maintenances.json"] = measure(
                client, f"/s/{slug}/api/v2/scheduled-maintenances.json", args.repeat
            )
            results["history.rss"] = measure(client, f"/s/{slug}/history.rss", args.repeat)
            # One component's badges: a busy check (two outages a day for 90 days).
            key = (
                Component.objects.filter(page_id=page_id)
                .order_by("position")
                .values_list("public_id", flat=True)[0]
            )
            for badge in (
                "status.svg",
                "uptime-24h.svg",
                "uptime-30d.svg",
                "response-time.svg",
                "uptime-30d.json",
            ):
                url = f"/s/{slug}/badges/{key}/{badge}"
                # Drawn afresh (the kept badges made stale first), then as kept for 30 s.
                results[f"badge {badge} drawn"] = measure(
                    client, url, args.repeat, lambda: page_changed(page_id)
                )
                results[f"badge {badge} kept"] = measure(client, url, args.repeat)
            raise Rollback
    except Rollback:
        pass
    results["load_average"] = [round(load, 1) for load in os.getloadavg()]
    print(json.dumps(results) if args.json else json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
