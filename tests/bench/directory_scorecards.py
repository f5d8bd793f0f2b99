"""Measure the MCP directory: recomputing every stored scorecard, one server's page, and the ranked directory page.

``DATABASE_URL=postgres://… python tests/bench/directory_scorecards.py [--listings 10000] [--repeat 30] [--json]``

Builds, inside one transaction that is rolled back at the end (nothing stays in the database),
``--listings`` latest listings with the registry's publisher fields: reverse-DNS and
``io.github.<login>`` namespaces, a website, a GitHub repository (half of them with a stored
licence lookup), one in ten local-only (a package, no remote), one in twenty deprecated with a
message; beside them an older version of one in ten and a few hundred deleted listings, which the
directory hides. Then it times ``scorecards_recompute`` over all of them (``--recomputes`` times;
the first writes every row, the next ones update them), and asks through Django's test client
(the whole stack in process, no network, no sign-in) for one server's page, the directory's first
page, a search (``?q=``) and a later page, printing the median and 95th percentile of ``--repeat``
warm requests in milliseconds and each page's SQL query count. No figure is asserted anywhere.

Every remote listing also has directory probing's rows (``build_probe_evidence``): a latest
probe, a tool list and ``--days`` (30) days of hourly counts at one probe per 30 minutes, so the
recompute judges all 22 checks.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

import django

django.setup()

from directory_probes import store_probe_history  # noqa: E402  (the sibling bench's probe history)
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from directory.models import (  # noqa: E402
    Listing,
    ListingRemote,
    ListingScorecard,
    RepositoryLicence,
)
from directory.services import scorecards_recompute  # noqa: E402

WORDS = ("weather", "notes", "search", "files", "calendar", "tickets", "maps", "mail", "docs", "crm")


class Rollback(Exception):
    """End the benchmark's transaction so nothing it built stays."""


def _name(index: int) -> str:
    word = WORDS[index % len(WORDS)]
    if index % 2:
        return f"io.github.user{index}/{word}-mcp"
    return f"com.publisher{index}/{word}"


def build(listings: int, days: int) -> str:
    """Store the listings, remotes and licences; return the path of a remote server's page."""
    now = timezone.now()
    rows = []
    for index in range(listings):
        name = _name(index)
        owner = f"user{index}" if index % 2 else f"publisher{index}"
        rows.append(
            Listing(
                name=name,
                version="1.0.0",
                is_latest=True,
                title=f"{WORDS[index % len(WORDS)].title()} {index}",
                description=f"An MCP server for {WORDS[index % len(WORDS)]}, number {index}, with tools for it.",
                website_url="" if index % 2 else f"https://www.publisher{index}.com/",
                repository_url=f"https://github.com/{owner}/{WORDS[index % len(WORDS)]}-mcp",
                repository_source="github",
                status=Listing.Status.DEPRECATED if index % 20 == 7 else Listing.Status.ACTIVE,
                status_message="Moved to a new name" if index % 20 == 7 else "",
                published_at=now - timedelta(days=200),
                updated_at=now - timedelta(days=index % 365),
                synced_at=now,
            )
        )
        if index % 10 == 3:  # an older version
            rows.append(Listing(name=name, version="0.9.0", is_latest=False, updated_at=now, synced_at=now))
    rows += [
        Listing(
            name=f"com.gone{index}/server",
            version="1.0.0",
            is_latest=True,
            status=Listing.Status.DELETED,
            updated_at=now,
            synced_at=now,
        )
        for index in range(listings // 40)
    ]
    Listing.objects.bulk_create(rows, batch_size=2000)
    remotes = [
        ListingRemote(
            listing_id=listing_id,
            position=0,
            transport="streamable-http",
            url=f"https://mcp.{name.replace('/', '.')}/mcp",
        )
        for listing_id, name in Listing.objects.filter(is_latest=True).values_list("pk", "name")
        if listing_id % 10  # one in ten is a local-only package
    ]
    ListingRemote.objects.bulk_create(remotes, batch_size=5000)
    RepositoryLicence.objects.bulk_create(
        [
            RepositoryLicence(
                owner=f"user{index}" if index % 2 else f"publisher{index}",
                repo=f"{WORDS[index % len(WORDS)]}-mcp",
                status="done",
                spdx_id=("MIT", "Apache-2.0", "NOASSERTION", "")[index % 4],
                osi_approved=index % 4 < 2 or None,
                list_version="3.25",
                looked_up_at=now,
            )
            for index in range(0, listings, 2)
        ],
        batch_size=5000,
    )
    build_probe_evidence(now, days)
    listing = Listing.objects.filter(is_latest=True, remotes__isnull=False).order_by("pk").first()
    assert listing is not None
    return f"/directory/{listing.name}/"


def build_probe_evidence(now: datetime, days: int) -> None:
    """Store what directory probing keeps of every remote listing, as tests/bench/directory_probes.py does.

    Latencies spread over 180–1,080 ms, so the listings rank apart.
    """
    ids = list(
        Listing.objects.filter(is_latest=True, remotes__isnull=False).distinct().values_list("pk", flat=True)
    )
    store_probe_history(ids, now=now, days=days, total_ms=lambda lid: 180.0 + lid % 900)


def _later_page() -> int:
    """Return page 50 of the remote servers, or their last page when there are fewer."""
    remote = ListingScorecard.objects.filter(remote=True).count()
    return max(1, min(50, -(-remote // 50)))


def measure(browser: Client, path: str, repeat: int) -> dict[str, float | int]:
    browser.get(path)  # warm
    times = []
    counted: list[str] = []

    def count(execute, sql, params, many, context):
        counted.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        answer = browser.get(path)
    assert answer.status_code == 200, (path, answer.status_code)
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
    parser.add_argument("--listings", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=30, help="days of hourly probe counts per remote listing")
    parser.add_argument("--recomputes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, object] = {}
    try:
        with transaction.atomic():
            started = time.perf_counter()
            server_path = build(args.listings, args.days)
            built = time.perf_counter() - started
            recomputes = []
            for _ in range(args.recomputes):
                started = time.perf_counter()
                written = scorecards_recompute(now=timezone.now())
                recomputes.append(round(time.perf_counter() - started, 2))
            with connection.cursor() as cursor:
                # As autovacuum would after such a write: the planner needs the new rows' statistics.
                if connection.vendor == "postgresql":
                    cursor.execute(
                        "ANALYZE directory_listing, directory_listingscorecard, directory_listingremote"
                    )
            browser = Client(SERVER_NAME="localhost")
            figures = {
                "database": connection.vendor,
                "listings": args.listings,
                "scorecards": written,
                "build_s": round(built, 1),
                "recompute_s": recomputes,
                "server_page": measure(browser, server_path, args.repeat),
                "directory_page": measure(browser, "/directory/", args.repeat),
                "directory_search": measure(browser, "/directory/?q=weather", args.repeat),
                "directory_page_50": measure(browser, f"/directory/?page={_later_page()}", args.repeat),
                "api_list": measure(browser, "/api/v1/directory/servers/", args.repeat),
                "badge": measure(browser, server_path + "badge.svg", args.repeat),
            }
            raise Rollback
    except Rollback:
        pass
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{figures['database']}, {args.listings} listings, {figures['scorecards']} scorecards "
        f"(built in {figures['build_s']} s); recompute all: {figures['recompute_s']} s"
    )
    for name in (
        "server_page",
        "directory_page",
        "directory_search",
        "directory_page_50",
        "api_list",
        "badge",
    ):
        f = figures[name]
        assert isinstance(f, dict)
        print(f"{name:18} median {f['median_ms']:7.1f} ms  p95 {f['p95_ms']:7.1f} ms  {f['queries']} queries")


if __name__ == "__main__":
    main()
