"""Measure heartbeats on this machine: pings taken over real HTTP, and how soon a late heartbeat is declared down.

``python tests/bench/heartbeats.py ingest [--pg URL] [--heartbeats 5000] [--seconds 10]
[--connections 64] [--json]`` creates the heartbeats, serves the web app as ``make run`` does
(``manage.py serve``'s own gunicorn command: uvicorn workers, 2 of them, access log on) and drives
``wrk`` (Debian's ``wrk``: ``apt-get install wrk``) at it for ``--seconds``, each request a ping
of the next heartbeat in turn (``GET /ping/<id>``), every connection kept alive. It prints the
pings answered per second, how many were 200 (accepted; counted again as Ping rows after), 429 or
other, the latency percentiles wrk measured, and the CPU the web workers and wrk used. wrk sends
as fast as answers come (a closed loop): the rate printed is the most this machine took, with
the load generator on the same 2 cores. The heartbeats must be enough that none passes its 60
pings a minute: ``--heartbeats`` at least rate × seconds / 60.

``python tests/bench/heartbeats.py late [--pg URL] [--heartbeats 100000] [--samples 5]
[--pinged-per-second 0] [--json]`` creates the heartbeats (each with its last ping, up, due in an
hour), times one sweep of the judge over ``--sweep`` heartbeats pinged at once, then runs the
embedded worker (``manage.py runprobes``, as ``make run`` does, its beat schedule included) and
lets ``--samples`` heartbeats go late one after another; for each it prints the time from its
grace's end to its StatusChange (the row's ``at``, the judge's clock, and when the bench first
saw the row committed). ``--pinged-per-second`` K adds K pings a second to other heartbeats
(Ping rows and counts, written as ping_record does) so each sweep also has K heartbeats to judge.

Without ``--pg`` both use a temporary SQLite file, the embedded default (WAL). With ``--pg`` the
bench creates its own database ``uptimy_bench_hb_<pid>`` there and drops it after. No figure is
asserted anywhere: docs/benchmarks.md quotes what this prints on a named machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
DB_PREFIX = "uptimy_bench_hb_"
START_TIMEOUT = 60.0
WRK_SCRIPT = """
local paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
local i = math.random(#paths)
request = function()
    i = i %% #paths + 1
    return wrk.format("GET", paths[i])
end
"""


class Refused(Exception):
    """The bench can't give a meaningful figure with what it was given."""


@contextlib.contextmanager
def bench_database(args: argparse.Namespace) -> Iterator[dict[str, str]]:
    """Give the bench a database of its own (a PostgreSQL one it creates, or a SQLite file), migrated."""
    tmpdir = tempfile.mkdtemp(prefix="uptimy-bench-hb-")
    env = {
        "UPTIMY_VAR_DIR": tmpdir,
        "SECRET_KEY": "bench-only-not-secret",
        "UPTIMY_SECRETS_KEY": "bench-only-secrets-key",
        "DJANGO_SETTINGS_MODULE": "uptimy.settings",
        "PROMETHEUS_MULTIPROC_DIR": f"{tmpdir}/metrics",
    }
    Path(env["PROMETHEUS_MULTIPROC_DIR"]).mkdir()
    created: str | None = None
    if args.pg:
        import psycopg

        name = f"{DB_PREFIX}{os.getpid()}"
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # the name is ours: a fixed prefix and the pid
        created = name
        parts = urlsplit(args.pg)
        env["DATABASE_URL"] = urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmpdir}/bench.sqlite3"
    os.environ.update(env)
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        settings.DEBUG = False
        call_command("migrate", verbosity=0, interactive=False)
        yield env
    finally:
        with contextlib.suppress(Exception):
            from django.db import connections

            connections.close_all()
        if created is not None:
            import psycopg

            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{created}" WITH (FORCE)')
        shutil.rmtree(tmpdir, ignore_errors=True)


def create_heartbeats(
    count: int, *, now: datetime, late_at: list[datetime] = ()
) -> tuple[list[int], list[str]]:
    """Bulk-create ``count`` hourly heartbeats, each up with its last ping at ``now``; return ids and ping paths.

    The first ``len(late_at)`` are every-60 s heartbeats with a 60 s grace whose last ping makes
    them late at the given instants.
    """
    from monitors.models import Healthcheck, Heartbeat, Organization, Ping, Plan

    org = Organization.objects.create(
        slug=f"bench-{os.getpid()}", name="Bench", plan=Plan.objects.get(slug="paid")
    )
    hourly = {"schedule": {"period": 3600}, "grace": 300}
    minutely = {"schedule": {"period": 60}, "grace": 60}
    ids: list[int] = []
    paths: list[str] = []
    for start in range(0, count, 5000):
        rows = Healthcheck.objects.bulk_create(
            [
                Healthcheck(
                    organization=org,
                    name=f"job {i}",
                    type=7,
                    config=minutely if i < len(late_at) else hourly,
                    status="up",
                    status_changed_at=now,
                )
                for i in range(start, min(count, start + 5000))
            ]
        )
        beats = []
        pings = []
        for offset, row in enumerate(rows):
            i = start + offset
            last = late_at[i] - timedelta(seconds=120) if i < len(late_at) else now
            due = late_at[i] if i < len(late_at) else now + timedelta(seconds=3600 + 300)
            beats.append(
                Heartbeat(healthcheck=row, ping_id=uuid.uuid4(), ping_count=1, judged_count=1, due_at=due)
            )
            pings.append(Ping(healthcheck=row, at=last, kind="success"))
        Heartbeat.objects.bulk_create(beats)
        Ping.objects.bulk_create(pings)
        ids += [row.pk for row in rows]
        paths += [f"/ping/{beat.ping_id}" for beat in beats]
    return ids, paths


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url_host: str, port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Refused(f"the server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((url_host, port), timeout=1) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            if sock.recv(12).startswith(b"HTTP/1.1 200"):
                return
        time.sleep(0.2)
    raise Refused("the server did not answer /healthz in time")


def cpu_seconds(pids: list[int]) -> float:
    """Return the user + system CPU seconds the processes used so far (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()  # type: ignore[union-attr]
    return round(float(number) * _UNITS[unit], 2)


def parse_wrk(out: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for pct in ("50", "75", "90", "99"):
        match = re.search(rf"^\s+{pct}%\s+(\S+)", out, re.M)
        if match:
            found[f"p{pct}_ms"] = _ms(match.group(1))
    match = re.search(r"(\d+) requests in ([\d.]+)(\w+)", out)
    if match:
        found["requests"] = int(match.group(1))
    match = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    found["non_2xx"] = int(match.group(1)) if match else 0
    match = re.search(r"Socket errors: (.*)", out)
    found["socket_errors"] = match.group(1).strip() if match else ""
    match = re.search(r"Requests/sec:\s+([\d.]+)", out)
    found["per_second"] = float(match.group(1)) if match else 0.0
    return found


def ingest(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("wrk") is None:
        raise Refused("wrk is not installed: apt-get install wrk")
    with bench_database(args) as env:
        from django.utils import timezone

        from monitors.management.commands.serve import parts
        from monitors.models import Ping

        now = timezone.now()
        _, paths = create_heartbeats(args.heartbeats, now=now)
        before = Ping.objects.count()
        port = free_port()
        command = parts(host="127.0.0.1", port=port, broker=False, region_queues=[])["web"]
        server = subprocess.Popen(
            command.split(),
            cwd=ROOT,
            env={**os.environ, **env, "PYTHONUNBUFFERED": "1", "SECURE_COOKIES": "false"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for("127.0.0.1", port, server)
            script = Path(env["UPTIMY_VAR_DIR"]) / "pings.lua"
            path_file = Path(env["UPTIMY_VAR_DIR"]) / "paths.txt"
            path_file.write_text("\n".join(paths) + "\n")
            script.write_text(WRK_SCRIPT % path_file)
            workers = children(server.pid)
            # Warm each worker (imports, the first connection, the URL resolver) outside the figure.
            subprocess.run(
                ["wrk", "-t1", "-c4", "-d1s", "-s", str(script), f"http://127.0.0.1:{port}"],
                check=True,
                capture_output=True,
            )
            warm = Ping.objects.count()
            cpu_before = cpu_seconds(workers)
            client_before = _children_cpu()
            started = time.monotonic()
            done = subprocess.run(
                [
                    "wrk",
                    f"-t{args.threads}",
                    f"-c{args.connections}",
                    f"-d{args.seconds}s",
                    "--latency",
                    "--timeout",
                    "10s",
                    "-s",
                    str(script),
                    f"http://127.0.0.1:{port}",
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            wall = time.monotonic() - started
            server_cpu = cpu_seconds(workers) - cpu_before
            client_cpu = _children_cpu() - client_before
        finally:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)
        figures = parse_wrk(done.stdout)
        accepted = Ping.objects.count() - warm
        return {
            "database": "postgresql" if args.pg else "sqlite (WAL)",
            "heartbeats": args.heartbeats,
            "connections": args.connections,
            "seconds": round(wall, 1),
            **figures,
            "accepted": accepted,
            "accepted_per_second": round(accepted / wall),
            "server_cpu_ms_per_ping": round(server_cpu * 1000 / max(1, figures.get("requests", 1)), 3),
            "server_cpu_s": round(server_cpu, 1),
            "wrk_cpu_s": round(client_cpu, 1),
            "warm_up_pings": warm - before,
            "load_average": os.getloadavg(),
        }


def late(args: argparse.Namespace) -> dict[str, Any]:
    with bench_database(args) as env:
        from django.db.models import F
        from django.utils import timezone

        from monitors.models import Heartbeat, Ping, StatusChange
        from monitors.services.heartbeats import heartbeats_judge

        now = timezone.now()
        # Placeholders: the late instants are set once everything else is ready (below).
        placeholder = [now + timedelta(days=1)] * args.samples
        started = time.perf_counter()
        ids, _ = create_heartbeats(args.heartbeats, now=now, late_at=placeholder)
        created_s = time.perf_counter() - started
        # One sweep over --sweep heartbeats pinged at once (in process, what a tick would take).
        swept = ids[args.samples : args.samples + args.sweep]
        Ping.objects.bulk_create([Ping(healthcheck_id=pk, at=now, kind="success") for pk in swept])
        Heartbeat.objects.filter(pk__in=swept).update(ping_count=F("ping_count") + 1)
        started = time.perf_counter()
        judged = heartbeats_judge(now=now)
        sweep_s = time.perf_counter() - started
        started = time.perf_counter()
        heartbeats_judge(now=now)
        idle_ms = (time.perf_counter() - started) * 1000
        # Late ones from --first-late seconds on (the worker's start), 2.3 s apart so each meets
        # the 1 s sweep at another phase.
        base = timezone.now()
        late_at = [base + timedelta(seconds=args.first_late + 2.3 * i) for i in range(args.samples)]
        for pk, due in zip(ids[: args.samples], late_at, strict=True):
            Ping.objects.filter(healthcheck_id=pk).update(at=due - timedelta(seconds=120))
            Heartbeat.objects.filter(pk=pk).update(due_at=due)
        from django.db import connections

        connections.close_all()
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "runprobes"],
            cwd=ROOT,
            env={**os.environ, **env, "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        stop = threading.Event()
        pinger = threading.Thread(target=_ping_load, args=(ids[args.samples :], args.pinged_per_second, stop))
        if args.pinged_per_second:
            pinger.start()
        seen: dict[int, float] = {}
        try:
            deadline = time.monotonic() + (late_at[-1] - timezone.now()).total_seconds() + 30
            while len(seen) < args.samples and time.monotonic() < deadline:
                for pk in StatusChange.objects.filter(
                    healthcheck_id__in=ids[: args.samples], to_status="down"
                ).values_list("healthcheck_id", flat=True):
                    seen.setdefault(pk, time.time())
                time.sleep(0.05)
        finally:
            stop.set()
            if pinger.is_alive():
                pinger.join()
            os.killpg(worker.pid, 15)
            worker.wait(timeout=30)
        rows = dict(
            StatusChange.objects.filter(healthcheck_id__in=ids[: args.samples], to_status="down").values_list(
                "healthcheck_id", "at"
            )
        )
        delays = []
        for i, pk in enumerate(ids[: args.samples]):
            due = late_at[i]
            delays.append(
                {
                    "row_at_minus_due_s": round((rows[pk] - due).total_seconds(), 3) if pk in rows else None,
                    "seen_minus_due_s": round(seen[pk] - due.timestamp(), 3) if pk in seen else None,
                }
            )
        return {
            "database": "postgresql" if args.pg else "sqlite (WAL)",
            "heartbeats": args.heartbeats,
            "create_s": round(created_s, 1),
            "sweep_heartbeats": judged,
            "sweep_s": round(sweep_s, 3),
            "idle_sweep_ms": round(idle_ms, 2),
            "pinged_per_second": args.pinged_per_second,
            "late": delays,
            "load_average": os.getloadavg(),
        }


def _ping_load(ids: list[int], per_second: int, stop: threading.Event) -> None:
    """Write ``per_second`` pings a second to heartbeats in turn, as ping_record does (a row and a count)."""
    from django.db import connection, transaction
    from django.db.models import F

    from monitors.models import Heartbeat, Ping

    at = 0
    try:
        while not stop.is_set():
            began = time.monotonic()
            batch = [ids[(at + i) % len(ids)] for i in range(per_second)]
            at += per_second
            now = datetime.now(UTC)
            with transaction.atomic():
                Ping.objects.bulk_create([Ping(healthcheck_id=pk, at=now, kind="success") for pk in batch])
                Heartbeat.objects.filter(pk__in=batch).update(ping_count=F("ping_count") + 1)
            stop.wait(max(0.0, 1.0 - (time.monotonic() - began)))
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("ingest", "late"):
        command = sub.add_parser(name)
        command.add_argument("--pg", help="postgres:// URL of a server where the bench may create a database")
        command.add_argument("--json", action="store_true")
    sub.choices["ingest"].add_argument(
        "--redis", help="redis:// URL: the rate limit counts there, as in production"
    )
    sub.choices["ingest"].add_argument("--heartbeats", type=int, default=5000)
    sub.choices["ingest"].add_argument("--seconds", type=int, default=10)
    sub.choices["ingest"].add_argument("--connections", type=int, default=64)
    sub.choices["ingest"].add_argument("--threads", type=int, default=1)
    sub.choices["late"].add_argument("--heartbeats", type=int, default=100_000)
    sub.choices["late"].add_argument("--samples", type=int, default=5)
    sub.choices["late"].add_argument("--sweep", type=int, default=10_000)
    sub.choices["late"].add_argument("--first-late", type=float, default=8.0)
    sub.choices["late"].add_argument("--pinged-per-second", type=int, default=0)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    try:
        result = ingest(args) if args.command == "ingest" else late(args)
    except Refused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, default=str))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
