"""Measure the schedule, the recorder and the whole pipeline on this machine.

``python tests/bench/pipeline.py {claim,record,e2e,hang} [--checks N] [--regions 3] [--json]`` with
``--pg postgres://postgres@127.0.0.1:5432/postgres``: the command creates its own database
``uptimy_bench_<pid>`` on that server, migrates it, and drops it at the end. Without ``--pg`` it
uses DATABASE_URL as it finds it (its rows live under an organization of its own, deleted at
the end), or, with neither, a temporary SQLite file. Claim and record figures are about
PostgreSQL, so on SQLite those two refuse unless ``--allow-sqlite``.

- ``claim``: N healthchecks × R regions, all due at once (one minute's worth of a 60 s
  schedule, worst case: everything in one tick). Times the steps of one dispatcher tick
  (``monitors.worker.dispatch.dispatch_due``): publishing what the outbox holds unsent,
  ``claim_and_stage`` (one transaction: the SKIP LOCKED UPDATE … RETURNING, the regions read,
  the grouping into batches and the outbox rows), and publishing every batch through
  ``enqueue_celery`` to the Redis broker at ``--redis``/REDIS_URL, then deleting its rows. The
  queues are the bench's own regions' (``probes.bench<pid>-<i>``), which no worker consumes,
  and are deleted after. Without Redis publishing only deletes the rows, and it says so.
- ``record``: N × R results (``--results``) through ``services.outcomes_record`` in groups of
  ``--batch`` (250: a whole batch, the most the worker records at once; it records smaller groups
  when its checks end apart), regions interleaved; round 1 is the first result of every
  healthcheck (region states and tool lists are created), later rounds are the steady state.
  ``--windows W`` adds W recurring maintenance windows that hold every healthcheck (by a tag),
  so every result is recorded in maintenance: the recorder's worst case for that lookup.
- ``e2e``: N MCP healthchecks at ``--interval`` in R regions against the fast loopback MCP
  server (tests/peers/servers/fast_mcp.py, started here unless ``--url``), run by the embedded
  worker (monitors.worker.embedded) for ``--seconds``; reports the lag from scheduled slot to
  recorded result (``recorded_at - slot``) of attempt-0 results and checks per second.
- ``hang``: ``e2e`` where ``--hang-percent`` (5) of the healthchecks point at a loopback server
  that accepts and never answers, so their checks hang until their ``--timeout`` (10 s). Reports
  the lag of the healthy checks' results and of the hanging ones' apart: one hanging target per
  batch must not hold back the others' results. A batch occupies its worker thread until its
  slowest check ends, so ``--threads`` (64) must cover the batches started within one timeout:
  per region and tick, the new batch and the two rechecks of its hanging checks, each holding a
  thread for the timeout (15 per region at a 2 s tick and 10 s timeout); with fewer, batches queue
  for a thread and every lag grows, before and after streaming alike.

No figure is asserted anywhere: docs/benchmarks.md quotes what this prints on a named machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import resource
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
FAST_MCP = ROOT / "tests" / "peers" / "servers" / "fast_mcp.py"
DB_PREFIX = "uptimy_bench_"
START_TIMEOUT = 30.0
# e2e: slots this close to the end may not have been claimed yet when the worker stops.
SETTLE_SECONDS = 5.0


class Refused(Exception):
    """The bench can't give a meaningful figure with what it was given."""


# --- Database -----------------------------------------------------------------------------------


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@contextlib.contextmanager
def bench_database(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """Point Django at the bench's database, set Django up, migrate; undo what was created after."""
    info: dict[str, Any] = {}
    created_pg: tuple[str, str] | None = None
    tmpdir: str | None = None
    if args.pg:
        import psycopg

        if not urlsplit(args.pg).scheme.startswith("postgres"):
            raise Refused("--pg takes a postgres:// URL of a server where the bench may create a database")
        name = f"{DB_PREFIX}{os.getpid()}"
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # the name is ours: a fixed prefix and the pid
        created_pg = (args.pg, name)
        os.environ["DATABASE_URL"] = _with_database(args.pg, name)
        info["database"] = f"postgresql ({name}, created for this run)"
    elif os.environ.get("DATABASE_URL"):
        info["database"] = f"{urlsplit(os.environ['DATABASE_URL']).scheme} (DATABASE_URL)"
        info["shared_database"] = True
    else:
        tmpdir = tempfile.mkdtemp(prefix="uptimy-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{tmpdir}/bench.sqlite3"
        os.environ.setdefault("UPTIMY_VAR_DIR", tmpdir)
        info["database"] = "sqlite (a temporary file)"
    try:
        vendor_is_sqlite = os.environ["DATABASE_URL"].startswith("sqlite")
        if vendor_is_sqlite and args.command in ("claim", "record") and not args.allow_sqlite:
            raise Refused(
                f"{args.command} measures PostgreSQL, the production database; SQLite has one writer "
                "and no SKIP LOCKED, so its figure would mean something else. Pass "
                "--pg postgres://USER@HOST:5432/postgres (the bench creates and drops its own "
                "database there), set DATABASE_URL, or add --allow-sqlite to run it anyway."
            )
        _django_setup(args)
        from django.core.management import call_command

        if info.get("shared_database") and args.command in ("claim", "e2e", "hang"):
            _refuse_a_database_in_use(args.command)
        started = time.perf_counter()
        call_command("migrate", verbosity=0, interactive=False)
        info["migrate_s"] = round(time.perf_counter() - started, 2)
        yield info
    finally:
        with contextlib.suppress(Exception):
            from django.db import connections

            connections.close_all()
        if created_pg is not None:
            import psycopg

            url, name = created_pg
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _refuse_a_database_in_use(command: str) -> None:
    """Refuse to claim in a database that holds healthchecks the bench didn't create.

    claim_due claims every due healthcheck, not only the bench's: it would drop real slots
    (claim) or probe real targets (e2e, hang).
    """
    from django.db import connection

    from monitors.models import Healthcheck

    if Healthcheck._meta.db_table in connection.introspection.table_names() and Healthcheck.objects.exists():
        raise Refused(
            f"{command} claims every due healthcheck, and DATABASE_URL's database already holds some; "
            "point it at an empty database, or pass --pg to let the bench create its own."
        )


def _django_setup(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")
    # A bench needs no real keys: nothing it stores outlives the run.
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    os.environ.setdefault("UPTIMY_SECRETS_KEY", "bench-only-secrets-key")
    if args.command in ("e2e", "hang"):
        os.environ["UPTIMY_ALLOW_PRIVATE_TARGETS"] = "1"  # the MCP servers are on loopback
    if getattr(args, "redis", None):
        os.environ["REDIS_URL"] = args.redis
    import django

    django.setup()
    from django.conf import settings

    # DEBUG keeps every query in memory and costs time on each: never measure with it.
    settings.DEBUG = False


# --- Rows -------------------------------------------------------------------------------------


class Fixture:
    """Hold the organization, regions and healthchecks one run creates."""

    def __init__(self, *, regions: int) -> None:
        from monitors.models import Organization, Plan, Region

        pid = os.getpid()
        self.organization = Organization.objects.create(
            slug=f"bench-{pid}", name="Bench", plan=Plan.objects.get(slug="paid")
        )
        # Regions of its own: their queues (probes.bench<pid>-<i>) are consumed by no real worker.
        self.regions = [
            Region.objects.create(slug=f"bench{pid}-{index}", name=f"Bench {index}")
            for index in range(1, regions + 1)
        ]
        self.healthcheck_ids: list[int] = []
        self.next_check_at: dict[int, datetime] = {}

    @property
    def region_slugs(self) -> list[str]:
        return [region.slug for region in self.regions]

    def create_checks(
        self,
        *,
        count: int,
        interval: int,
        url: str,
        now: datetime,
        all_due: bool,
        timeout: float | None = None,
    ) -> float:
        """Bulk-create MCP healthchecks in every region, as healthcheck_create would schedule them.

        With ``all_due`` each one's next_check_at is its latest slot at or before ``now``;
        otherwise its first slot at or after ``now``. Each call adds to the fixture's healthchecks.
        Return the seconds it took.
        """
        from monitors.models import Healthcheck
        from monitors.slots import first_slot_at_or_after, slot_offset_for
        from probes.checks.mcp import MCP
        from probes.types import Status

        started = time.perf_counter()
        raw: dict[str, Any] = {"uri": url} if timeout is None else {"uri": url, "timeout": timeout}
        config = MCP.to_api(MCP.parse(raw))  # no headers: nothing to encrypt
        since = now - timedelta(seconds=interval - 1) if all_due else now
        rows = []
        for index in range(count):
            public_id = uuid.uuid4()
            offset = slot_offset_for(public_id, interval)
            rows.append(
                Healthcheck(
                    organization=self.organization,
                    public_id=public_id,
                    name=f"bench {index}",
                    type=MCP.number,
                    config=config,
                    interval_seconds=interval,
                    status=Status.PENDING,
                    status_changed_at=now,
                    slot_offset=offset,
                    next_check_at=first_slot_at_or_after(since, interval_seconds=interval, offset=offset),
                )
            )
        Healthcheck.objects.bulk_create(rows, batch_size=2000)
        through = Healthcheck.regions.through
        through.objects.bulk_create(
            [through(healthcheck_id=hc.id, region_id=region.id) for hc in rows for region in self.regions],
            batch_size=5000,
        )
        self.healthcheck_ids += [hc.id for hc in rows]
        self.next_check_at |= {hc.id: hc.next_check_at for hc in rows}
        analyze()
        return time.perf_counter() - started

    def create_windows(self, *, count: int, now: datetime) -> float:
        """Tag every healthcheck and create ``count`` daily windows (Europe/Berlin) holding that tag all day.

        So every result recorded falls in a window: the recorder's worst case. Return the seconds it took.
        """
        from monitors.models import HealthcheckTag, MaintenanceWindow, MaintenanceWindowTag

        started = time.perf_counter()
        HealthcheckTag.objects.bulk_create(
            [HealthcheckTag(healthcheck_id=hc_id, name="bench") for hc_id in self.healthcheck_ids],
            batch_size=5000,
        )
        for index in range(count):
            window = MaintenanceWindow.objects.create(
                organization=self.organization,
                name=f"bench {index}",
                starts_at=now - timedelta(days=30, minutes=index),
                duration=timedelta(days=1),
                rrule="FREQ=DAILY",
                timezone="Europe/Berlin",
            )
            MaintenanceWindowTag.objects.create(window=window, name="bench")
        analyze()
        return time.perf_counter() - started

    def delete(self) -> None:
        """Delete everything the run created (on a database the bench didn't create)."""
        from monitors.models import ProbeResult, ToolChange

        # Results and tool changes point at the regions with PROTECT: they go first.
        ProbeResult.objects.filter(healthcheck__organization=self.organization).delete()
        ToolChange.objects.filter(healthcheck__organization=self.organization).delete()
        self.organization.delete()
        for region in self.regions:
            region.delete()


def analyze() -> None:
    """Give PostgreSQL's planner statistics of the rows just written, as autovacuum would in time.

    Tables filled a moment ago have none, and the planner then picks sequential scans that
    a database in service never runs (4 ms instead of 0.3 for a batch's region states).
    """
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def sample_outcome() -> Any:
    """Return an UP outcome shaped like a real MCP check's: server, 8 tools with their details, digests, timings."""
    from probes.mcp import tool_details_digest
    from probes.types import Access, ProbeOutcome, ServerInfo, Status, Timings, ToolInfo, Transport

    schema = (
        '{"type":"object","properties":{"q":{"type":"string","description":"What to look for — words or a phrase"},'
        '"limit":{"type":"integer","description":"How many results","default":10}},"required":["q"]}'
    )
    tools = tuple(
        ToolInfo(
            name=f"tool_{index}",
            required_inputs=("q",),
            description=f"Search the documentation’s section {index} by keyword and return the best pages.",
            input_schema=schema,
            read_only_hint=True,
        )
        for index in range(8)
    )
    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(dns_ms=0.1, tcp_ms=0.2, ttfb_ms=1.5, total_ms=4.2),
        http_status=200,
        server=ServerInfo(name="uptimy-fast-mcp", version="1.0"),
        protocol="2025-06-18",
        access=Access.OPEN,
        tools=tools,
        tool_count=len(tools),
        tool_digest="d" * 64,
        tool_details_digest=tool_details_digest(tools),
        transport=Transport.STREAMABLE_HTTP,
    )


# --- claim ------------------------------------------------------------------------------------


def bench_claim(args: argparse.Namespace, info: dict[str, Any]) -> dict[str, Any]:
    from django.utils import timezone

    from monitors.worker.outbox import outbox_publish, outbox_take_due
    from monitors.worker.scheduling import claim_and_stage

    fixture = Fixture(regions=args.regions)
    now = timezone.now().replace(microsecond=0)
    interval = args.interval
    rounds = []
    enqueue = None
    try:
        setup_s = fixture.create_checks(
            count=args.checks, interval=interval, url="https://mcp.example.com/mcp", now=now, all_due=True
        )
        enqueue = _celery_enqueue(fixture.region_slugs) if args.redis else None
        for index in range(args.rounds):
            # Each round claims one interval later: every healthcheck is due again, one slot on.
            moment = now + timedelta(seconds=interval * index)
            # The steps of monitors.worker.dispatch.dispatch_due, timed one by one.
            cpu0, db0 = _cpu_seconds(), _database_cpu_seconds()
            t0 = time.perf_counter()
            outbox_publish(outbox_take_due(now=moment), enqueue=enqueue or _nowhere)
            t1 = time.perf_counter()
            staged = claim_and_stage(now=moment)
            t2 = time.perf_counter()
            outbox_publish(staged.batches, enqueue=enqueue or _nowhere)
            t3 = time.perf_counter()
            cpu1, db1 = _cpu_seconds(), _database_cpu_seconds()
            rounds.append(
                {
                    "claimed": staged.claimed,
                    "runs": sum(len(batch.items) for batch in staged.batches),
                    "batches": len(staged.batches),
                    "leftovers_ms": _ms(t1 - t0),
                    "claim_ms": _ms(t2 - t1),
                    "publish_ms": _ms(t3 - t2),
                    "total_ms": _ms(t3 - t0),
                    "cpu_ms": _ms(cpu1 - cpu0),
                    "db_cpu_ms": _ms(db1 - db0) if db0 is not None and db1 is not None else None,
                }
            )
    finally:
        if enqueue is not None:
            _redis_cleanup(args.redis)
        if info.get("shared_database"):
            fixture.delete()
    totals = [entry["total_ms"] for entry in rounds]
    cpus = [entry["cpu_ms"] + (entry["db_cpu_ms"] or 0) for entry in rounds]
    return {
        **info,
        "command": "claim",
        "checks": args.checks,
        "regions": args.regions,
        "setup_s": round(setup_s, 2),
        "enqueue": "celery apply_async to Redis" if enqueue is not None else None,
        "rounds": rounds,
        "median_total_ms": round(statistics.median(totals), 1),
        "max_total_ms": max(totals),
        "median_cpu_ms": round(statistics.median(cpus), 1),
    }


def _database_cpu_seconds() -> float | None:
    """Return the CPU seconds of this connection's PostgreSQL backend, if it runs on this machine.

    Wall time on a shared machine swings with the other work; CPU time swings far less, so
    the bench reports both. None where /proc does not show the backend (another host, SQLite).
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # utime and stime, the 14th and 15th fields, in clock ticks.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _nowhere(region: str, items: list[Any], delay: float = 0) -> None:
    """Stand in for a broker when none is given: publishing then costs only the outbox delete."""


def _celery_enqueue(regions: list[str]) -> Any:
    """Return monitors.worker.tasks.enqueue_celery, warmed up as in a long-running beat process.

    One empty batch per region first: the producer's connection is made and each queue
    declared once, as they are by the first tick after a deploy, not by every tick.
    """
    import uptimy  # binds the shared tasks to the configured Celery app
    from monitors.worker.tasks import enqueue_celery

    with uptimy.celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=3)
    for region in regions:
        enqueue_celery(region, [])
    return enqueue_celery


def _redis_cleanup(url: str) -> None:
    """Delete the bench's queues (its regions' probes.bench<pid>-* lists and their bindings)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"*probes.bench{os.getpid()}-*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


# --- record -----------------------------------------------------------------------------------


def bench_record(args: argparse.Namespace, info: dict[str, Any]) -> dict[str, Any]:
    from django.utils import timezone

    fixture = Fixture(regions=args.regions)
    now = timezone.now().replace(microsecond=0)
    interval = args.interval
    outcome = sample_outcome()
    per_round = args.results or args.checks * args.regions
    rounds = []
    try:
        setup_s = fixture.create_checks(
            count=args.checks, interval=interval, url="https://mcp.example.com/mcp", now=now, all_due=False
        )
        if args.windows:
            setup_s += fixture.create_windows(count=args.windows, now=now)
        for index in range(args.rounds):
            batches = list(_record_batches(fixture, per_round, args.batch, interval * index, outcome))
            cpu0 = _cpu_seconds(children=True)
            timings, wall = _record_round(batches, args.workers, len(fixture.regions))
            cpu = _cpu_seconds(children=True) - cpu0
            count = sum(len(results) for _, results in batches)
            if len(timings) != len(batches):
                raise RuntimeError("a recording batch failed; see the traceback above")
            analyze()  # between rounds, untimed: round 1 filled the region states
            rounds.append(
                {
                    "round": index + 1,
                    "kind": "first results (states and tool lists created)" if index == 0 else "steady state",
                    "results": count,
                    "batches": len(batches),
                    "wall_s": round(wall, 3),
                    "results_per_second": round(count / wall) if wall else None,
                    "batch_ms_p50": _ms(_percentile(timings, 0.50)),
                    "batch_ms_p99": _ms(_percentile(timings, 0.99)),
                    "cpu_ms_per_result": round(cpu * 1000 / count, 3),
                }
            )
        held = _results_in_maintenance(fixture)
    finally:
        if info.get("shared_database"):
            fixture.delete()
    steady = [entry["results_per_second"] for entry in rounds[1:]] or [rounds[0]["results_per_second"]]
    return {
        **info,
        "command": "record",
        "checks": args.checks,
        "regions": args.regions,
        "batch": args.batch,
        "workers": args.workers,
        "maintenance_windows": args.windows,
        "results_in_maintenance": held,
        "setup_s": round(setup_s, 2),
        "rounds": rounds,
        "steady_results_per_second": round(statistics.median(steady)),
    }


def _results_in_maintenance(fixture: Fixture) -> int:
    from monitors.models import ProbeResult

    return ProbeResult.objects.filter(
        healthcheck__organization=fixture.organization, in_maintenance=True
    ).count()


def _record_round(
    batches: list[tuple[str, list[Any]]], workers: int, regions: int
) -> tuple[list[float], float]:
    """Record every batch, in this process or in ``workers`` forked processes; return the timings.

    With several workers each serves its own regions, in the order the batches come, as region
    worker pools do: the regions' batches of the same healthchecks meet on their row locks.
    Processes, not threads: recording is mostly Python, which threads would run on one core.
    """
    import multiprocessing

    from django.db import connections

    if workers == 1:
        started = time.perf_counter()
        timings = _record_some(batches, range(len(batches)))
        return timings, time.perf_counter() - started
    shares: list[list[int]] = [[] for _ in range(workers)]
    for index in range(len(batches)):
        shares[_worker_of(index, workers, regions)].append(index)
    connections.close_all()  # a forked child must not share the parent's socket
    context = multiprocessing.get_context("fork")
    done = context.SimpleQueue()
    children = [
        context.Process(target=_record_child, args=(batches, share, done), daemon=True) for share in shares
    ]
    started = time.perf_counter()
    for child in children:
        child.start()
    timings: list[float] = []
    for _ in children:
        timings.extend(done.get())
    wall = time.perf_counter() - started
    for child in children:
        child.join()
    return timings, wall


def _worker_of(index: int, workers: int, regions: int) -> int:
    """Return the worker that records batch ``index`` (batches go chunk by chunk, regions interleaved)."""
    region, chunk = index % regions, index // regions
    if workers <= regions:
        return region % workers
    # More workers than regions: region r's workers are r, r + regions, …; they take turns.
    pool = range(region, workers, regions)
    return pool[chunk % len(pool)]


def _record_child(batches: list[tuple[str, list[Any]]], indexes: list[int], done: Any) -> None:
    from django.db import connections

    timings: list[float] = []
    try:
        timings = _record_some(batches, indexes)
    finally:
        done.put(timings)
        connections.close_all()


def _record_some(batches: list[tuple[str, list[Any]]], indexes: Iterable[int]) -> list[float]:
    from django.utils import timezone

    from monitors import services

    timings = []
    for index in indexes:
        region, results = batches[index]
        t0 = time.perf_counter()
        services.outcomes_record(region_slug=region, results=results, now=timezone.now())
        timings.append(time.perf_counter() - t0)
    return timings


def _record_batches(
    fixture: Fixture, count: int, size: int, shift_seconds: int, outcome: Any
) -> Iterator[tuple[str, list[Any]]]:
    """Yield (region, results) batches of ``size``, the regions interleaved as their workers would send."""
    from monitors.services import RunResult

    per_region = fixture.healthcheck_ids[: -(-count // len(fixture.regions))]
    shift = timedelta(seconds=shift_seconds)
    for start in range(0, len(per_region), size):
        part = per_region[start : start + size]
        for region in fixture.region_slugs:
            results = []
            for hc_id in part:
                slot = fixture.next_check_at[hc_id] + shift
                results.append(
                    RunResult(
                        healthcheck_id=hc_id,
                        slot=slot,
                        attempt=0,
                        outcome=outcome,
                        checked_at=slot + timedelta(milliseconds=5),
                    )
                )
            yield region, results


# --- e2e --------------------------------------------------------------------------------------


@contextlib.contextmanager
def fast_mcp_server(url: str | None) -> Iterator[str]:
    """Yield the MCP URL to check: ``url`` as given, or a fast_mcp.py started (and stopped) here."""
    if url:
        yield url
        return
    if not FAST_MCP.exists():
        raise Refused(f"{FAST_MCP} is missing; pass --url of a fast MCP server on loopback")
    process = subprocess.Popen(
        [sys.executable, str(FAST_MCP), "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT)
        line = process.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("http"):
            raise Refused("fast_mcp.py did not start (it printed no URL)")
        yield line
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def run_embedded(args: argparse.Namespace) -> tuple[datetime, datetime, float]:
    """Run the embedded worker for ``--seconds``; return when it started and stopped, and its CPU seconds."""
    from django.utils import timezone

    from monitors.worker.embedded import EmbeddedWorker

    worker = EmbeddedWorker(tick_seconds=args.tick, threads=args.threads)
    thread = threading.Thread(target=worker.run_forever, name="bench-embedded")
    cpu0 = _cpu_seconds()
    start = timezone.now()
    thread.start()
    try:
        time.sleep(args.seconds)
    finally:
        # Stop claiming; batches already running finish and are recorded (run_forever
        # waits for its pool), queued rechecks are dropped.
        worker.stop.set()
        stop = timezone.now()
        thread.join()
    return start, stop, _cpu_seconds() - cpu0


def bench_e2e(args: argparse.Namespace, info: dict[str, Any]) -> dict[str, Any]:
    from django.utils import timezone

    from monitors.models import ProbeResult

    interval = args.interval
    with fast_mcp_server(args.url) as url:
        fixture = Fixture(regions=args.regions)
        try:
            setup_now = timezone.now()
            setup_s = fixture.create_checks(
                count=args.checks, interval=interval, url=url, now=setup_now, all_due=False
            )
            start, stop, cpu = run_embedded(args)
            window_end = stop - timedelta(seconds=SETTLE_SECONDS)
            expected = _slots_between(fixture, start, window_end, interval) * len(fixture.regions)
            rows = list(
                ProbeResult.objects.filter(
                    healthcheck__organization=fixture.organization,
                    slot__gte=start,
                    slot__lt=window_end,
                    attempt=0,
                ).values_list("slot", "recorded_at", "status", "kind")
            )
            every_result = ProbeResult.objects.filter(
                healthcheck__organization=fixture.organization, recorded_at__gte=start
            ).count()
        finally:
            if info.get("shared_database"):
                fixture.delete()
    lags = sorted((recorded - slot).total_seconds() for slot, recorded, _, _ in rows)
    outcomes = Counter(f"{status} ({kind})" if kind else status for _, _, status, kind in rows)
    elapsed = (stop - start).total_seconds()
    return {
        **info,
        "command": "e2e",
        "url": url,
        "checks": args.checks,
        "regions": args.regions,
        "interval_s": interval,
        "tick_s": args.tick,
        "threads": args.threads,
        "setup_s": round(setup_s, 2),
        "ran_s": round(elapsed, 1),
        "window": "attempt-0 results of slots from the start to 5 s before the stop",
        "expected_runs": expected,
        "recorded_runs": len(rows),
        "missing_runs": max(0, expected - len(rows)),
        "outcomes": dict(outcomes.most_common()),
        "lag_s_p50": _round(_percentile(lags, 0.50)),
        "lag_s_p95": _round(_percentile(lags, 0.95)),
        "lag_s_p99": _round(_percentile(lags, 0.99)),
        "lag_s_max": _round(lags[-1] if lags else None),
        "checks_per_second": round(every_result / elapsed, 1) if elapsed else None,
        "cpu_ms_per_check": round(cpu * 1000 / every_result, 2) if every_result else None,
        "note": "bench process CPU (scheduler, probes, recording; not PostgreSQL or the MCP server)",
    }


# --- hang -------------------------------------------------------------------------------------

# The hanging server's host: one of its own (all of 127.0.0.0/8 is loopback on Linux), so the
# runner's per-host cap counts its checks apart from the fast server's, as for distinct targets.
HANG_HOST = "127.0.0.2"


@contextlib.contextmanager
def hanging_server() -> Iterator[str]:
    """Yield the MCP URL of a loopback server that reads every request and never answers it.

    A check of it hangs until its own timeout, when the client closes the connection. It runs
    on an event loop in a thread of this process: it only accepts and reads, a few times a second.
    """
    loop = asyncio.new_event_loop()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass  # read until the client gives up and closes
        writer.close()

    server = loop.run_until_complete(asyncio.start_server(hold, HANG_HOST, 0))
    port = server.sockets[0].getsockname()[1]
    thread = threading.Thread(target=loop.run_forever, name="bench-hang", daemon=True)
    thread.start()
    try:
        yield f"http://{HANG_HOST}:{port}/mcp"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        server.close()
        loop.close()


def bench_hang(args: argparse.Namespace, info: dict[str, Any]) -> dict[str, Any]:
    from django.utils import timezone

    from monitors.models import ProbeResult

    interval = args.interval
    hanging_count = round(args.checks * args.hang_percent / 100)
    with fast_mcp_server(args.url) as url, hanging_server() as hang_url:
        fixture = Fixture(regions=args.regions)
        try:
            setup_now = timezone.now()
            setup_s = fixture.create_checks(
                count=args.checks - hanging_count,
                interval=interval,
                url=url,
                now=setup_now,
                all_due=False,
                timeout=args.timeout,
            )
            healthy_ids = list(fixture.healthcheck_ids)
            setup_s += fixture.create_checks(
                count=hanging_count,
                interval=interval,
                url=hang_url,
                now=setup_now,
                all_due=False,
                timeout=args.timeout,
            )
            hanging_ids = fixture.healthcheck_ids[len(healthy_ids) :]
            start, stop, cpu = run_embedded(args)
            # A hanging check's slot is recorded a timeout after it is claimed: the window ends
            # early enough for every slot in it to have been claimed before the stop.
            window_end = stop - timedelta(seconds=SETTLE_SECONDS)
            rows = list(
                ProbeResult.objects.filter(
                    healthcheck__organization=fixture.organization,
                    slot__gte=start,
                    slot__lt=window_end,
                    attempt=0,
                ).values_list(
                    "healthcheck_id", "slot", "checked_at", "recorded_at", "status", "kind", "total_ms"
                )
            )
            every_result = ProbeResult.objects.filter(
                healthcheck__organization=fixture.organization, recorded_at__gte=start
            ).count()
        finally:
            if info.get("shared_database"):
                fixture.delete()
    hanging = set(hanging_ids)
    elapsed = (stop - start).total_seconds()
    regions = len(fixture.regions)

    def group(ids: list[int], mine: list[tuple[Any, ...]]) -> dict[str, Any]:
        expected = _slots_between(fixture, start, window_end, interval, ids=ids) * regions
        lags = sorted((recorded - slot).total_seconds() for _, slot, _, recorded, *_ in mine)
        after_end = sorted((recorded - ended).total_seconds() for _, _, ended, recorded, *_ in mine)
        # Where the rest of the lag went: before the check started (the tick, a free worker
        # thread, the per-host cap), or in the check itself (total_ms).
        waits = sorted(
            (ended - slot).total_seconds() - (total_ms or 0) / 1000 for _, slot, ended, *_, total_ms in mine
        )
        runs = sorted((total_ms or 0) / 1000 for *_, total_ms in mine)
        outcomes = Counter(f"{status} ({kind})" if kind else status for *_, status, kind, _ in mine)
        by_half_minute: dict[int, list[float]] = {}
        for _, slot, _, recorded, *_ in mine:
            bucket = int((slot - start).total_seconds() // 30)
            by_half_minute.setdefault(bucket, []).append((recorded - slot).total_seconds())
        return {
            "healthchecks": len(ids),
            "expected_runs": expected,
            "recorded_runs": len(mine),
            "missing_runs": max(0, expected - len(mine)),
            "outcomes": dict(outcomes.most_common()),
            "lag_s_p50": _round(_percentile(lags, 0.50)),
            "lag_s_p95": _round(_percentile(lags, 0.95)),
            "lag_s_p99": _round(_percentile(lags, 0.99)),
            "lag_s_max": _round(lags[-1] if lags else None),
            "lag_s_p99_by_30s_of_slots": [
                _round(_percentile(values, 0.99)) for _, values in sorted(by_half_minute.items())
            ],
            "slot_to_start_s_p50": _round(_percentile(waits, 0.50)),
            "slot_to_start_s_p99": _round(_percentile(waits, 0.99)),
            "check_s_p50": _round(_percentile(runs, 0.50)),
            "check_s_p99": _round(_percentile(runs, 0.99)),
            "ended_to_recorded_s_p50": _round(_percentile(after_end, 0.50)),
            "ended_to_recorded_s_p99": _round(_percentile(after_end, 0.99)),
            "ended_to_recorded_s_max": _round(after_end[-1] if after_end else None),
        }

    return {
        **info,
        "command": "hang",
        "url": url,
        "hanging_url": hang_url,
        "checks": args.checks,
        "hang_percent": args.hang_percent,
        "timeout_s": args.timeout,
        "regions": args.regions,
        "interval_s": interval,
        "tick_s": args.tick,
        "threads": args.threads,
        "setup_s": round(setup_s, 2),
        "ran_s": round(elapsed, 1),
        "window": "attempt-0 results of slots from the start to 5 s before the stop",
        "lag": "slot → recorded (recorded_at - slot); ended → recorded is recorded_at - checked_at",
        "healthy": group(healthy_ids, [row for row in rows if row[0] not in hanging]),
        "hanging": group(hanging_ids, [row for row in rows if row[0] in hanging]),
        "targets": {
            "healthy_lag_s_p99_below": 5.0,
            "hanging_recorded_within_s": args.timeout + 2,
        },
        "checks_per_second": round(every_result / elapsed, 1) if elapsed else None,
        "cpu_ms_per_check": round(cpu * 1000 / every_result, 2) if every_result else None,
    }


def _slots_between(
    fixture: Fixture, start: datetime, end: datetime, interval: int, *, ids: Iterable[int] | None = None
) -> int:
    """Count the healthchecks' slots in [start, end) (of the healthchecks ``ids``, or all)."""
    from monitors.slots import first_slot_at_or_after

    count = 0
    firsts = fixture.next_check_at.values() if ids is None else [fixture.next_check_at[id_] for id_ in ids]
    for slot in firsts:
        offset = int(slot.timestamp()) % interval
        moment = first_slot_at_or_after(start, interval_seconds=interval, offset=offset)
        while moment < end:
            count += 1
            moment += timedelta(seconds=interval)
    return count


# --- Output -----------------------------------------------------------------------------------


def _cpu_seconds(*, children: bool = False) -> float:
    """Return this process's CPU seconds (user + system), with its reaped children's if asked."""
    who = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) if children else (resource.RUSAGE_SELF,)
    return sum(usage.ru_utime + usage.ru_stime for usage in map(resource.getrusage, who))


def _percentile(values: list[float], q: float) -> float | None:
    """Return the nearest-rank ``q`` quantile of ``values``, or None for none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def human(report: dict[str, Any]) -> str:
    lines = [f"database: {report['database']}; machine: {report['machine']}"]
    command = report["command"]
    if command == "claim":
        lines.append(
            f"claim: {report['checks']} healthchecks × {report['regions']} regions, all due; "
            f"setup {report['setup_s']} s"
        )
        publish = "publish" if report["enqueue"] else "publish (no Redis: outbox delete only)"
        for entry in report["rounds"]:
            lines.append(
                f"  {entry['claimed']} claimed, {entry['runs']} runs in {entry['batches']} batches: "
                f"leftovers {entry['leftovers_ms']} ms, claim + group + outbox {entry['claim_ms']} ms "
                f"(one transaction), {publish} {entry['publish_ms']} ms; total {entry['total_ms']} ms; "
                f"CPU: bench {entry['cpu_ms']} ms, PostgreSQL {entry['db_cpu_ms']} ms"
            )
        what = "one tick" if report["enqueue"] else "one tick without enqueue (pass --redis to enqueue)"
        lines.append(
            f"{what}: median {report['median_total_ms']} ms, max {report['max_total_ms']} ms; "
            f"CPU (bench + PostgreSQL) median {report['median_cpu_ms']} ms"
        )
    elif command == "record":
        lines.append(
            f"record: {report['checks']} healthchecks × {report['regions']} regions, batches of "
            f"{report['batch']}, {report['workers']} recording worker(s); setup {report['setup_s']} s"
        )
        for entry in report["rounds"]:
            lines.append(
                f"  round {entry['round']} ({entry['kind']}): {entry['results']} results in "
                f"{entry['wall_s']} s = {entry['results_per_second']} results/s; per batch "
                f"p50 {entry['batch_ms_p50']} ms, p99 {entry['batch_ms_p99']} ms; "
                f"{entry['cpu_ms_per_result']} ms of recorder CPU per result"
            )
        lines.append(f"steady state: {report['steady_results_per_second']} results/s")
    elif command == "hang":
        lines.append(
            f"hang: {report['checks']} MCP healthchecks at {report['interval_s']} s in {report['regions']} "
            f"regions, {report['hang_percent']} % of them hanging until their {report['timeout_s']} s "
            f"timeout; embedded worker (tick {report['tick_s']} s, {report['threads']} threads) for "
            f"{report['ran_s']} s"
        )
        for name in ("healthy", "hanging"):
            part = report[name]
            lines.append(
                f"  {name} ({part['healthchecks']} healthchecks): {part['recorded_runs']} attempt-0 runs "
                f"recorded of {part['expected_runs']} due ({part['missing_runs']} missing); "
                f"outcomes {part['outcomes']}"
            )
            lines.append(
                f"    lag slot→recorded: p50 {part['lag_s_p50']} s, p95 {part['lag_s_p95']} s, "
                f"p99 {part['lag_s_p99']} s, max {part['lag_s_max']} s"
            )
            lines.append(
                f"    slot→check start p50 {part['slot_to_start_s_p50']} s, p99 {part['slot_to_start_s_p99']} s; "
                f"check p50 {part['check_s_p50']} s, p99 {part['check_s_p99']} s; check ended→recorded "
                f"p50 {part['ended_to_recorded_s_p50']} s, p99 {part['ended_to_recorded_s_p99']} s, "
                f"max {part['ended_to_recorded_s_max']} s"
            )
        targets = report["targets"]
        lines.append(
            f"  targets: healthy p99 < {targets['healthy_lag_s_p99_below']} s; hanging recorded within "
            f"{targets['hanging_recorded_within_s']} s; {report['checks_per_second']} checks/s, "
            f"{report['cpu_ms_per_check']} ms of bench CPU per check"
        )
    else:
        lines.append(
            f"e2e: {report['checks']} MCP healthchecks at {report['interval_s']} s in {report['regions']} "
            f"regions against {report['url']}, embedded worker (tick {report['tick_s']} s, "
            f"{report['threads']} threads) for {report['ran_s']} s"
        )
        lines.append(
            f"  attempt-0 runs: {report['recorded_runs']} recorded of {report['expected_runs']} due "
            f"({report['missing_runs']} missing); outcomes {report['outcomes']}"
        )
        lines.append(
            f"  lag slot→recorded: p50 {report['lag_s_p50']} s, p95 {report['lag_s_p95']} s, "
            f"p99 {report['lag_s_p99']} s, max {report['lag_s_max']} s"
        )
        lines.append(
            f"  {report['checks_per_second']} checks/s, {report['cpu_ms_per_check']} ms of bench CPU per check"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python tests/bench/pipeline.py", description=__doc__.splitlines()[0]
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--checks", type=int, metavar="N", help="healthchecks to create")
    common.add_argument("--regions", type=int, default=3, metavar="R", help="regions each one runs in (3)")
    common.add_argument("--interval", type=int, default=60, metavar="S", help="check interval, seconds (60)")
    common.add_argument("--json", action="store_true", help="print one JSON object")
    common.add_argument(
        "--pg",
        metavar="URL",
        help="a PostgreSQL server URL (…/postgres): create, migrate and drop uptimy_bench_<pid> there",
    )
    common.add_argument(
        "--allow-sqlite", action="store_true", help="run claim/record on SQLite anyway (not a real figure)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    claim = commands.add_parser("claim", parents=[common], help="one dispatcher tick: claim, stage, publish")
    claim.add_argument("--rounds", type=int, default=3, help="ticks to time, one interval apart (3)")
    claim.add_argument(
        "--redis",
        metavar="URL",
        default=os.environ.get("REDIS_URL") or None,
        help="Redis broker to enqueue to (default REDIS_URL); without it enqueue isn't measured",
    )
    record = commands.add_parser("record", parents=[common], help="outcomes_record throughput")
    record.add_argument("--results", type=int, default=0, metavar="N", help="per round (checks × regions)")
    record.add_argument(
        "--batch", type=int, default=250, help="results per outcomes_record call (250, a whole batch)"
    )
    record.add_argument("--rounds", type=int, default=3, help="rounds; the first creates states (3)")
    record.add_argument(
        "--workers", type=int, default=1, help="recording processes, each serving its own regions (1)"
    )
    record.add_argument(
        "--windows",
        type=int,
        default=0,
        help="recurring maintenance windows holding every healthcheck (by a tag) while recording (0)",
    )
    e2e = commands.add_parser("e2e", parents=[common], help="slot-to-recorded lag with the embedded worker")
    e2e.add_argument("--seconds", type=float, default=150.0, help="how long to run (150)")
    e2e.add_argument("--tick", type=float, default=2.0, help="scheduler tick, seconds (2)")
    e2e.add_argument("--threads", type=int, default=4, help="embedded worker threads (4)")
    e2e.add_argument("--url", help="an MCP URL on loopback instead of starting fast_mcp.py")
    hang = commands.add_parser(
        "hang", parents=[common], help="e2e where some targets hang until their timeout: each one's lag"
    )
    hang.add_argument("--hang-percent", type=float, default=5.0, help="healthchecks whose target hangs (5)")
    hang.add_argument("--timeout", type=float, default=10.0, help="every check's timeout, seconds (10)")
    hang.add_argument("--seconds", type=float, default=150.0, help="how long to run (150)")
    hang.add_argument("--tick", type=float, default=2.0, help="scheduler tick, seconds (2)")
    hang.add_argument(
        "--threads",
        type=int,
        default=64,
        help="embedded worker threads (64: a batch holds one until its slowest check ends)",
    )
    hang.add_argument("--url", help="an MCP URL on loopback instead of starting fast_mcp.py")
    args = parser.parse_args(argv)
    if args.checks is None:
        args.checks = 2000 if args.command in ("e2e", "hang") else 10_000
    if min(args.checks, args.regions, args.interval) < 1 or getattr(args, "rounds", 1) < 1:
        parser.error("--checks, --regions, --interval and --rounds must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runners = {"claim": bench_claim, "record": bench_record, "e2e": bench_e2e, "hang": bench_hang}
    try:
        with bench_database(args) as info:
            info["machine"] = (
                f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
            )
            report = runners[args.command](args, info)
    except Refused as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, default=str) if args.json else human(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
