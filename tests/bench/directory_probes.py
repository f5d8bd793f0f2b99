"""Measure the directory's probe evidence: every listing's checks 1–16 recomputed from what probing stores.

``DATABASE_URL=postgres://… python tests/bench/directory_probes.py [--listings 10000] [--days 30] [--chunk 1000] [--json]``

Builds, inside one transaction that is rolled back at the end (nothing stays in the database),
``--listings`` remote listings probed every 30 minutes for ``--days`` days as directory probing
stores them: a ListingProbeState each (the latest attempt), one ListingProbeHour per listing and
hour (two probes an hour; one listing in 50 had a failed probe that hour), a ListingToolList of
three tools each and a tool change for one listing in ten. Then it reads every listing's
evidence with ``directory.selectors.probe_evidence`` (``--chunk`` listings a call) and runs
``monitors.scorecard.scorecard`` over each, and records one round of 500 probes with
``listing_probes_record``. Prints seconds and query counts; no figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

import django

django.setup()

from django.db import connection, reset_queries, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from directory import latency  # noqa: E402
from directory.models import (  # noqa: E402
    Listing,
    ListingProbeHour,
    ListingProbeState,
    ListingRemote,
    ListingToolChange,
    ListingToolList,
)
from directory.probing import ProbeDone, ProbeTarget, stored_tools  # noqa: E402
from directory.selectors import probe_evidence  # noqa: E402
from directory.services import listing_probes_record  # noqa: E402
from monitors.scorecard import scorecard  # noqa: E402
from probes.mcp import tool_details_digest, tool_digest  # noqa: E402
from probes.types import ProbeOutcome, ServerInfo, Status, Timings, ToolInfo  # noqa: E402

TOOLS = tuple(
    ToolInfo(
        f"tool_{n}",
        ("q",),
        f"Tool number {n}, described at length.",
        '{"type":"object","properties":{"q":{"type":"string","description":"words"}}}',
        True,
        None,
    )
    for n in range(3)
)


class Rollback(Exception):
    """End the benchmark's transaction so nothing it built stays."""


def build(listings: int, days: int) -> list[int]:
    now = timezone.now()
    made = Listing.objects.bulk_create(
        [
            Listing(name=f"com.bench/s{n}", version="1.0.0", is_latest=True, updated_at=now, synced_at=now)
            for n in range(listings)
        ],
        batch_size=5000,
    )
    ids = [listing.id for listing in made]
    ListingRemote.objects.bulk_create(
        [
            ListingRemote(
                listing_id=lid,
                position=0,
                transport="streamable-http",
                url=f"https://s{lid}.bench.example/mcp",
            )
            for lid in ids
        ],
        batch_size=5000,
    )
    store_probe_history(ids, now=now, days=days, total_ms=lambda _lid: 180.0)
    return ids


def store_probe_history(
    ids: list[int], *, now: datetime, days: int, total_ms: Callable[[int], float]
) -> None:
    """Store what directory probing keeps of each listing in ``ids``: its latest attempt, tool list and hourly counts.

    A successful latest probe taking ``total_ms(listing id)``, a three-tool list, a tool removal
    for one in ten, and ``days`` of hourly counts at one probe per 30 minutes (two an hour, one in
    fifty hours with a failure). The hourly counts are one PostgreSQL statement (none elsewhere).
    """
    ListingProbeState.objects.bulk_create(
        [
            ListingProbeState(
                listing_id=lid,
                next_probe_at=now,
                url=f"https://s{lid}.bench.example/mcp",
                probed_at=now,
                tool_count=3,
                total_ms=total_ms(lid),
                protocol="2025-06-18",
                server_name="bench",
                listed_at=now,
                tool_digest=tool_digest(TOOLS),
                tool_details_digest=tool_details_digest(TOOLS),
            )
            for lid in ids
        ],
        batch_size=5000,
    )
    ListingToolList.objects.bulk_create(
        [
            ListingToolList(
                listing_id=lid,
                digest=tool_details_digest(TOOLS),
                tools=stored_tools(TOOLS),
                tool_count=3,
                current_since=now,
            )
            for lid in ids
        ],
        batch_size=2000,
    )
    ListingToolChange.objects.bulk_create(
        [
            ListingToolChange(listing_id=lid, at=now - timedelta(days=3), removed=["old"], removed_count=1)
            for lid in ids[::10]
        ],
        batch_size=5000,
    )
    if connection.vendor != "postgresql":
        return  # the hourly counts are one PostgreSQL statement
    top = now.replace(minute=0, second=0, microsecond=0)
    table = ListingProbeHour._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (listing_id, hour, attempts, successes, successes_1s, successes_3s, skipped, latency) "
            "SELECT l, %s - make_interval(hours => h), 2, 2 - (CASE WHEN (l + h) %% 50 = 0 THEN 1 ELSE 0 END), "
            "2 - (CASE WHEN (l + h) %% 50 = 0 THEN 1 ELSE 0 END), 2 - (CASE WHEN (l + h) %% 50 = 0 THEN 1 ELSE 0 END), 0, "
            "%s::jsonb FROM unnest(%s::bigint[]) AS l, generate_series(0, %s) AS h",
            [top, json.dumps(latency.histogram_of([150.0, 480.0])), ids, days * 24 - 1],
        )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {table}")


def measure(ids: list[int], chunk: int) -> dict[str, float]:
    now = timezone.now()
    reset_queries()
    started = time.perf_counter()
    passed = 0
    queries = 0
    for start in range(0, len(ids), chunk):
        before = len(connection.queries)
        evidence = probe_evidence(ids[start : start + chunk], now=now)
        queries += len(connection.queries) - before
        for one in evidence.values():
            passed += scorecard(one, now=now).passed
    evidence_s = time.perf_counter() - started
    outcome = ProbeOutcome(
        status=Status.UP,
        timings=Timings(total_ms=150.0),
        server=ServerInfo("bench", "1"),
        protocol="2025-06-18",
        tools=TOOLS,
        tool_count=3,
        tool_digest=tool_digest(TOOLS),
        tool_details_digest=tool_details_digest(TOOLS),
    )
    done = [
        ProbeDone(ProbeTarget(lid, f"https://s{lid}.bench.example/mcp"), now, outcome) for lid in ids[:500]
    ]
    started = time.perf_counter()
    listing_probes_record(done=done)
    record_s = time.perf_counter() - started
    return {
        "listings": len(ids),
        "evidence_and_scorecards_s": round(evidence_s, 2),
        "evidence_queries": queries,
        "passed_checks_total": passed,
        "record_500_probes_s": round(record_s, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listings", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--chunk", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Run it on PostgreSQL: DATABASE_URL=postgres://…")
    from django.conf import settings

    settings.DEBUG = True  # connection.queries counts the queries
    figures: dict[str, float] = {}
    try:
        with transaction.atomic():
            started = time.perf_counter()
            ids = build(args.listings, args.days)
            figures["build_s"] = round(time.perf_counter() - started, 1)
            figures["hour_rows"] = ListingProbeHour.objects.count()
            figures.update(measure(ids, args.chunk))
            raise Rollback
    except Rollback:
        pass
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name}: {value}")


if __name__ == "__main__":
    main()
