"""Measure a month's report for many healthchecks: figures, CSV and PDF, on PostgreSQL.

``DATABASE_URL=postgres://… python tests/bench/report_pdf.py [--healthchecks 500] [--repeat 3] [--json]``

Builds, inside one transaction that is rolled back at the end (nothing stays in the database),
an organization with ``--healthchecks`` checks in three regions, created before the previous
month, and for last month (Europe/Paris) and the period before it: ``--outages`` outages a
month per check as status changes (4 minutes, then 90 s, …), the raw results of last month's
outages (a good run, a failing run and its two rechecks, the first good run: what downtime is
bounded by), a weekly two-hour maintenance window over every check, and the rollups a report
reads (daily ones for every day, hourly ones for the two days at the month's edges; the
hourly rollups of whole UTC days are not read). Then it builds the report (selectors), its JSON
data, its CSV and its PDF (WeasyPrint) ``--repeat`` times and prints the median of each step in
milliseconds (wall, and the process's CPU time: on a shared machine the wall time is
mostly waiting), the SQL queries, and the PDF's pages and size. No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from datetime import UTC, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

import django

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from monitors import latency  # noqa: E402
from monitors.models import Healthcheck, Plan, ProbeResult, Region, Rollup, StatusChange  # noqa: E402
from monitors.services import healthcheck_create, maintenance_window_create, organization_create  # noqa: E402
from probes.checks.mcp import MCP  # noqa: E402
from reports.pdf import report_pdf  # noqa: E402
from reports.render.period import Period, month_before, period_of  # noqa: E402
from reports.render.report import report_csv, report_data  # noqa: E402
from reports.selectors import report_build  # noqa: E402

ZONE = "Europe/Paris"


class Rollback(Exception):
    """End the benchmark's transaction so nothing it built stays."""


def build(count: int, outages: int, period: Period) -> tuple[object, int]:
    now = timezone.now()
    stamp = int(time.time())
    organization = organization_create(slug=f"bench-report-{stamp}", plan=Plan.objects.get(slug="paid"))
    regions = list(Region.objects.order_by("slug")[:3])
    previous = period.previous()
    created_at = previous.start - timedelta(days=30)
    checks = [
        healthcheck_create(
            organization=organization,
            name=f"check {index:04d}",
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=now,
            interval_seconds=60,
            region_slugs=[region.slug for region in regions],
        )
        for index in range(count)
    ]
    Healthcheck.objects.filter(organization=organization).update(created_at=created_at, status="up")
    changes, results, rollups = [], [], []
    for index, check in enumerate(checks):
        for span, with_results in ((previous, False), (period, True)):
            step = (span.end - span.start) / (outages + 1)
            for number in range(outages):
                first = span.start + step * (number + 1) + timedelta(minutes=(index * 7) % 300)
                length = timedelta(minutes=4) if number % 2 == 0 else timedelta(seconds=90)
                changes.append(
                    StatusChange(
                        healthcheck=check,
                        at=first + timedelta(seconds=11),
                        from_status="up",
                        to_status="down",
                    )
                )
                changes.append(
                    StatusChange(
                        healthcheck=check,
                        at=first + length + timedelta(seconds=1),
                        from_status="down",
                        to_status="up",
                    )
                )
                if not with_results:
                    continue  # the previous month's raw results are pruned: its bounds are the changes'
                for region in regions:
                    runs = [
                        (first - timedelta(minutes=1), 0, "up"),
                        (first, 0, "down"),
                        (first + timedelta(seconds=5), 1, "down"),
                        (first + timedelta(seconds=10), 2, "down"),
                        (first + length, 0, "up"),
                    ]
                    results += [
                        ProbeResult(
                            healthcheck=check,
                            region=region,
                            slot=at - timedelta(seconds=5 * attempt),
                            attempt=attempt,
                            checked_at=at,
                            recorded_at=at,
                            status=status,
                        )
                        for at, attempt, status in runs
                    ]
        histogram = latency.histogram_of([80.0 + (index % 40)] * 1300 + [400.0] * 120 + [2000.0] * 20)
        day = previous.start.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        while day < period.end:
            for region in regions:
                rollups.append(
                    Rollup(
                        healthcheck=check,
                        region=region,
                        period="day",
                        start=day,
                        runs=1440,
                        failures=3,
                        histogram=histogram,
                    )
                )
            day += timedelta(days=1)
        for edge in (period.start, period.end):
            first_hour = edge.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
            for hour in range(24):
                for region in regions:
                    rollups.append(
                        Rollup(
                            healthcheck=check,
                            region=region,
                            period="hour",
                            start=first_hour + timedelta(hours=hour),
                            runs=60,
                            failures=0,
                            histogram=latency.histogram_of([90.0] * 60),
                        )
                    )
    StatusChange.objects.bulk_create(changes, batch_size=5000)
    ProbeResult.objects.bulk_create(results, batch_size=5000)
    Rollup.objects.bulk_create(rollups, batch_size=5000, ignore_conflicts=True)
    maintenance_window_create(
        organization=organization,
        name="Weekly upgrade",
        starts_at=previous.start + timedelta(hours=2),
        duration=timedelta(hours=2),
        rrule="FREQ=WEEKLY",
        timezone=ZONE,
        healthchecks=[check.public_id for check in checks],
    )
    print(
        f"built: {count} healthchecks, {len(changes)} status changes, {len(results)} raw results,"
        f" {len(rollups)} rollups",
        file=sys.stderr,
    )
    return organization, len(changes)


CPU: dict[str, list[float]] = {}


def timed(step, *args):  # type: ignore[no-untyped-def]
    """Return the step's value and its wall time in ms; its CPU time goes to CPU (a shared machine's wall time is noisy)."""
    started, cpu = time.perf_counter(), time.process_time()
    value = step(*args)
    CPU.setdefault(step.__name__, []).append((time.process_time() - cpu) * 1000)
    return value, (time.perf_counter() - started) * 1000


def report_build_of(organization, period, now):  # type: ignore[no-untyped-def]
    return report_build(organization=organization, period=period, now=now)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--healthchecks", type=int, default=500)
    parser.add_argument("--outages", type=int, default=4, help="outages per check per month")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    now = timezone.now()
    period = period_of(month=month_before(now, ZONE), start=None, end=None, time_zone=ZONE, now=now)
    results: dict[str, object] = {
        "database": connection.vendor,
        "healthchecks": args.healthchecks,
        "month": period.label,
    }
    steps: dict[str, list[float]] = {"figures": [], "data": [], "csv": [], "pdf": [], "total": []}
    try:
        with transaction.atomic():
            organization, _ = build(args.healthchecks, args.outages, period)
            for _ in range(args.repeat):
                with CaptureQueriesContext(connection) as captured:
                    report, figures_ms = timed(report_build_of, organization, period, now)
                data, data_ms = timed(report_data, report)
                _, csv_ms = timed(report_csv, data)
                pdf, pdf_ms = timed(report_pdf, data)
                for name, value in (
                    ("figures", figures_ms),
                    ("data", data_ms),
                    ("csv", csv_ms),
                    ("pdf", pdf_ms),
                ):
                    steps[name].append(value)
                steps["total"].append(figures_ms + data_ms + pdf_ms)
            from pypdf import PdfReader

            results.update({f"{name}_ms": round(statistics.median(values)) for name, values in steps.items()})
            results.update(
                {f"{name}_cpu_ms": round(statistics.median(values)) for name, values in CPU.items()}
            )
            results["load_average"] = os.getloadavg()[0]
            results["queries"] = len(captured.captured_queries)
            results["pdf_pages"] = len(PdfReader(io.BytesIO(pdf)).pages)
            results["pdf_bytes"] = len(pdf)
            results["availability"] = data["summary"]["availability"]["percent"]
            raise Rollback
    except Rollback:
        pass
    print(json.dumps(results) if args.json else json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
