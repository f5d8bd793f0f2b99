"""Measure the web app's two heaviest pages: the dashboard of many healthchecks and one healthcheck's page.

``DATABASE_URL=postgres://… python tests/bench/web_pages.py [--healthchecks 1000] [--days 30] [--repeat 30] [--json]``

Builds, inside one transaction that is rolled back at the end (nothing stays in the database),
an organization on the paid plan with ``--healthchecks`` MCP healthchecks, each with a region
state in three regions (the last response time) and a tag, and hourly rollups in three regions
for the last day and a half (the dashboard's sparkline reads them), created a month ago with an
hour down yesterday (the 24 h and 30 d uptime read the status changes); one more
healthcheck has ``--days`` days of hourly rollups in three regions, a latest result with its
tool list (and the current tool list version, with descriptions), 20 status changes, 20 tool list changes and 10 incidents. Then a signed-in owner asks
for the dashboard and for that healthcheck's page through Django's test client (the whole stack in process, no network).
Prints the median and 95th percentile of ``--repeat`` warm requests in milliseconds and each
page's SQL query count. No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from alerts.models import Incident  # noqa: E402
from monitors.models import (  # noqa: E402
    Healthcheck,
    HealthcheckTag,
    Membership,
    Plan,
    ProbeResult,
    Region,
    RegionState,
    Rollup,
    StatusChange,
    ToolChange,
    ToolList,
    ToolListVersion,
)
from monitors.services import healthcheck_create, membership_add, organization_create  # noqa: E402
from probes.checks.mcp import MCP  # noqa: E402


class Rollback(Exception):
    """End the benchmark's transaction so nothing it built stays."""


def _hourly(check, regions, hours: int, now) -> list[Rollup]:
    top = now.replace(minute=0, second=0, microsecond=0)
    return [
        Rollup(
            healthcheck=check,
            region=region,
            period=Rollup.Period.HOUR,
            start=top - timedelta(hours=hour),
            runs=60,
            failures=hour % 50 == 0,
            p50_ms=80 + hour % 7,
            p95_ms=150,
            # The scorecard's counts (one run a minute, all listing tools, all within 1 s).
            attempts=60,
            successes=60 - (hour % 50 == 0),
            successes_1s=60 - (hour % 50 == 0),
            successes_3s=60 - (hour % 50 == 0),
        )
        for hour in range(hours)
        for region in regions
    ]


def build(healthchecks: int, days: int) -> tuple[Client, str]:
    now = timezone.now()
    stamp = int(time.time())
    organization = organization_create(slug=f"bench-web-{stamp}", plan=Plan.objects.get(slug="paid"))
    Plan.objects.filter(pk=organization.plan_id).update(max_healthchecks=healthchecks + 10)
    organization.refresh_from_db()
    regions = list(Region.objects.order_by("slug")[:3])
    rollups, states, tags = [], [], []
    for index in range(healthchecks):
        check = healthcheck_create(
            organization=organization,
            name=f"check {index}",
            check_type=MCP,
            config={"uri": f"https://mcp{index}.example.com/mcp"},
            now=now,
            interval_seconds=3600,
        )
        states += [
            RegionState(healthcheck=check, region=region, status="up", last_result_at=now, response_ms=90.0)
            for region in regions
        ]
        tags.append(HealthcheckTag(healthcheck=check, name=f"team-{index % 10}"))
        rollups += _hourly(check, regions, 36, now)
    page_check = healthcheck_create(
        organization=organization,
        name="page",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=now,
        interval_seconds=3600,
    )
    rollups += _hourly(page_check, regions, days * 24, now)
    RegionState.objects.bulk_create(states, batch_size=2000)
    HealthcheckTag.objects.bulk_create(tags, batch_size=2000)
    Rollup.objects.bulk_create(rollups, batch_size=5000)
    tools = [{"name": f"tool_{n}", "required_inputs": ["q"]} for n in range(40)]
    ToolList.objects.create(healthcheck=page_check, digest="d", tools=tools, first_seen_at=now)
    ToolListVersion.objects.create(
        healthcheck=page_check,
        digest="v",
        tools=[
            {**tool, "description": f"Does thing {n} with the query it is given."}
            for n, tool in enumerate(tools)
        ],
        tool_count=len(tools),
        first_seen_at=now,
        current_since=now,
    )
    ProbeResult.objects.create(
        healthcheck=page_check,
        region=regions[0],
        slot=now,
        checked_at=now,
        recorded_at=now,
        status="up",
        server_name="bench",
        server_version="1",
        protocol="2025-06-18",
        access="open",
        tool_count=40,
        tool_digest="d",
        dns_ms=3,
        tcp_ms=5,
        tls_ms=12,
        ttfb_ms=60,
        total_ms=120,
    )
    StatusChange.objects.bulk_create(
        [
            StatusChange(
                healthcheck=page_check,
                at=now - timedelta(days=2, hours=n),
                from_status=("down", "up")[n % 2],
                to_status=("up", "down")[n % 2],
            )
            for n in range(20)
        ]
    )
    ToolChange.objects.bulk_create(
        ToolChange(
            healthcheck=page_check,
            at=now - timedelta(hours=n),
            region=regions[0],
            previous_digest=f"d{n}",
            digest=f"d{n + 1}",
            removed=[f"tool_{n}"],
            removed_count=1,
            new_required_inputs={f"tool_{n + 1}": ["q", "page"]},
            new_required_inputs_count=1,
        )
        for n in range(20)
    )
    Incident.objects.bulk_create(
        Incident(
            organization=organization,
            healthcheck=page_check,
            healthcheck_public_id=page_check.public_id,
            healthcheck_name=page_check.name,
            severity="critical",
            opened_at=now - timedelta(days=n + 1),
            resolved_at=now - timedelta(days=n + 1) + timedelta(minutes=10),
            resolution="recovered",
            cause_summary="Down in 2 of 3 regions",
        )
        for n in range(10)
    )
    # Monitored for a month, up, with an hour down yesterday each: the uptime figures have time to
    # count and a downtime to bound (monitors.selectors.uptime_history reads the changes and results).
    Healthcheck.objects.filter(organization=organization).update(
        created_at=now - timedelta(days=31), status="up"
    )
    StatusChange.objects.bulk_create(
        [
            StatusChange(
                healthcheck_id=hc_id, at=now - timedelta(hours=hours), from_status=before, to_status=after
            )
            for hc_id in Healthcheck.objects.filter(organization=organization).values_list("id", flat=True)
            for hours, before, after in ((26, "up", "down"), (25, "down", "up"))
        ],
        batch_size=5000,
    )
    user = get_user_model().objects.create_user(username=f"bench-{stamp}@example.com")
    membership_add(organization=organization, user=user, role=Membership.Role.OWNER)
    browser = Client(SERVER_NAME="localhost")  # a host ALLOWED_HOSTS serves by default
    browser.force_login(user)
    return browser, f"/app/healthchecks/{page_check.public_id}/"


def measure(browser: Client, path: str, repeat: int) -> dict[str, float | int]:
    browser.get(path)  # warm
    times = []
    counted: list[str] = []

    def count(execute, sql, params, many, context):
        counted.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        answer = browser.get(path)
    assert answer.status_code == 200, answer.status_code
    for _ in range(repeat):
        started = time.perf_counter()
        browser.get(path)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "median_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 1),
        "queries": len(counted),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--healthchecks", type=int, default=1000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {}
    try:
        with transaction.atomic():
            started = time.perf_counter()
            browser, page = build(args.healthchecks, args.days)
            built = time.perf_counter() - started
            figures = {
                "database": connection.vendor,
                "healthchecks": args.healthchecks,
                "build_s": round(built, 1),
                "dashboard": measure(browser, "/app/", args.repeat),
                "healthcheck_page": measure(browser, page, args.repeat),
            }
            raise Rollback
    except Rollback:
        pass
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{figures['database']}, {args.healthchecks} healthchecks (built in {figures['build_s']} s)")
    for name in ("dashboard", "healthcheck_page"):
        f = figures[name]
        print(f"{name:17} median {f['median_ms']:7.1f} ms  p95 {f['p95_ms']:7.1f} ms  {f['queries']} queries")


if __name__ == "__main__":
    main()
