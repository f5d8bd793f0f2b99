"""Measure the status pages' pure renderers on this machine: the 90-day strips of a page, a day's chart, badges.

``python tests/bench/statuspage_render.py [--components 50] [--days 90] [--points 1440] [--repeat 30] [--json]``

- ``bars``: :func:`statuspages.render.bars.day_bars` for every component, from synthetic
  intervals: per component and day two short outages, one maintenance window a week, a pause
  of a few hours a fortnight, two incidents a week; the page's zone is Europe/Berlin, so the
  90 days cross a summer-time change when run in spring or autumn.
- ``strips``: :func:`statuspages.render.strip.uptime_strip_svg` for those bars.
- ``chart``: :func:`statuspages.render.chart.response_time_svg` for ``--points`` minute points
  (downsampled to 500).
- ``badge``: one status, one uptime and one response-time badge.
- ``summary``: ``summary.json`` for the page's components (shape and serialisation, no ETag).

Prints the median and the 95th percentile of ``--repeat`` runs of each and the least CPU time
of one run, in milliseconds, and the sizes of what was drawn (gzipped too, as a page is served). No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from statuspages.render.badges import badge_svg, response_time_badge, status_badge, uptime_badge
from statuspages.render.bars import DayBar, IncidentSpan, Interval, day_bars, period_uptime
from statuspages.render.chart import response_time_svg
from statuspages.render.etag import json_body
from statuspages.render.statuspage_api import Component, Page, PageContent, summary_json
from statuspages.render.strip import uptime_strip_svg
from statuspages.render.vocabulary import ComponentStatus, page_status

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
ZONE = "Europe/Berlin"


def synthetic(component: int, days: int) -> dict[str, list[Any]]:
    """Return one component's downtime, maintenance, data and incidents over ``days``."""
    start = NOW - timedelta(days=days)
    downtime, maintenance, incidents = [], [], []
    for day in range(days):
        base = start + timedelta(days=day, minutes=(component * 37) % 600)
        downtime.append(Interval(base, base + timedelta(minutes=3)))
        downtime.append(Interval(base + timedelta(hours=9), base + timedelta(hours=9, seconds=40)))
        if day % 7 == component % 7:
            maintenance.append(Interval(base + timedelta(hours=2), base + timedelta(hours=3)))
        if day % 7 in (1, 4):
            incidents.append(IncidentSpan(f"Incident {component}-{day}", base, base + timedelta(minutes=30)))
    paused = [
        Interval(start + timedelta(days=d), start + timedelta(days=d, hours=4)) for d in range(3, days, 14)
    ]
    data = []
    cursor = start
    for pause in paused:
        data.append(Interval(cursor, pause.start))
        cursor = pause.end
    data.append(Interval(cursor, NOW))
    return {"downtime": downtime, "maintenance": maintenance, "data": data, "incidents": incidents}


def timed(repeat: int, work: Callable[[], object]) -> dict[str, float]:
    runs, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        work()
        runs.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    runs.sort()
    # On a shared machine the wall times carry the neighbours' load; the least CPU time does not.
    return {
        "median_ms": round(statistics.median(runs), 2),
        "p95_ms": round(runs[min(len(runs) - 1, int(0.95 * len(runs)))], 2),
        "cpu_min_ms": round(min(cpu), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--components", type=int, default=50)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--points", type=int, default=1_440)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    inputs = [synthetic(n, args.days) for n in range(args.components)]

    def all_bars() -> list[list[DayBar]]:
        return [day_bars(now=NOW, time_zone=ZONE, days=args.days, **kwargs) for kwargs in inputs]

    bars = all_bars()
    strips = [uptime_strip_svg(f"Component {n}", b) for n, b in enumerate(bars)]
    points = [(NOW - timedelta(minutes=args.points - n), 120 + (n * 7919) % 300) for n in range(args.points)]
    chart = response_time_svg("Component 0", points, time_zone=ZONE)
    page = Page("pg0bench0001", "Bench", "https://status.example", ZONE, NOW)
    components = tuple(
        Component(f"cmp{n:09d}", f"Component {n}", ComponentStatus.OPERATIONAL, NOW, NOW, n)
        for n in range(args.components)
    )
    content = PageContent(page, page_status(c.status for c in components), components)

    results: dict[str, Any] = {
        "components": args.components,
        "days": args.days,
        "points": args.points,
        "repeat": args.repeat,
        "bars": timed(args.repeat, all_bars),
        "strips": timed(
            args.repeat, lambda: [uptime_strip_svg(f"Component {n}", b) for n, b in enumerate(bars)]
        ),
        "chart": timed(args.repeat, lambda: response_time_svg("Component 0", points, time_zone=ZONE)),
        "badge": timed(
            args.repeat,
            lambda: (
                badge_svg(status_badge(ComponentStatus.OPERATIONAL)),
                badge_svg(uptime_badge("30d", period_uptime(bars[0][-30:]))),
                badge_svg(response_time_badge(187.0)),
            ),
        ),
        "summary": timed(args.repeat, lambda: json_body(summary_json(content))),
        "strip_bytes_total": sum(len(s) for s in strips),
        "strip_bytes_gzipped": len(gzip.compress("".join(strips).encode())),
        "chart_bytes": len(chart),
    }
    if args.json:
        print(json.dumps(results))
        return
    for name in ("bars", "strips", "chart", "badge", "summary"):
        figures = results[name]
        print(
            f"{name:8} median {figures['median_ms']:8.2f} ms   p95 {figures['p95_ms']:8.2f} ms"
            f"   least CPU {figures['cpu_min_ms']:8.2f} ms"
        )
    print(
        f"strips: {results['strip_bytes_total']} bytes for {args.components} components"
        f" ({results['strip_bytes_gzipped']} gzipped); chart: {results['chart_bytes']} bytes"
    )


if __name__ == "__main__":
    main()
