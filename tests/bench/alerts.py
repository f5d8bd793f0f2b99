"""Measure alerting: N healthchecks go down in the same minute; how soon does a webhook receiver hold every message?

``python tests/bench/alerts.py --pg postgres://postgres@127.0.0.1:5432/postgres [--checks 1000] [--storm] [--json]``

The bench creates its own database (as tests/bench/pipeline.py does), an organization with one
webhook channel to a receiver on loopback (a process of its own, recording when each message
arrived), and ``--checks`` healthchecks. At T0 it writes one ``down`` StatusChange per check, as
the recorder does when they all fail together, and runs what the default worker runs, each on a
thread of its own as Celery's pool would: the outbox consumer (``alerts.consume_outbox``) and the
sender (``alerts.send_deliveries``), until the receiver holds every message. It reports:

- the lag from a status change to its message at the receiver (p50, p99, max);
- deliveries per second while sending (first send to last arrival), and sender CPU per delivery.

Without ``--storm`` the storm guard is off (threshold above N), so every incident is a message of
its own; with it, the default threshold applies, and the receiver gets the first incidents one by
one and the rest as one digest: the bench reports when the digest arrived.

No figure is asserted anywhere: docs/benchmarks.md quotes what this prints on a named machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipeline import Refused, bench_database

RECEIVER = """
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
out = open(sys.argv[1], "a", buffering=1)
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        payload = json.loads(body)
        notices = payload.get("data", {}).get("incidents") or [payload.get("data", {})]
        out.write(json.dumps({"at": time.time(), "type": payload["type"], "count": len(notices)}) + "\\n")
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", help="postgres:// URL of a server where the bench may create its database")
    parser.add_argument("--checks", type=int, default=1000, help="healthchecks that go down together (1000)")
    parser.add_argument("--storm", action="store_true", help="keep the storm guard on (default threshold)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    args.command, args.allow_sqlite, args.redis = "alerts", True, None
    os.environ["UPTIMY_ALLOW_PRIVATE_TARGETS"] = "1"  # the receiver is on loopback
    if not args.storm:
        os.environ["UPTIMY_ALERT_STORM_THRESHOLD"] = str(args.checks + 1)
    try:
        with bench_database(args) as info:
            result = {**info, **run(args)}
    except Refused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=None if not args.json else 2) if args.json else _report(result))
    return 0


def run(args: argparse.Namespace) -> dict[str, object]:
    log = Path(tempfile.mkdtemp(prefix="uptimy-alerts-bench-")) / "received.jsonl"
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(log)], stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout is not None
        port = int(receiver.stdout.readline())
        return _measure(args, f"http://127.0.0.1:{port}/hook", log)
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)


def _measure(args: argparse.Namespace, url: str, log: Path) -> dict[str, object]:
    from django.db import connections
    from django.utils import timezone

    from alerts.models import Delivery
    from alerts.services import alert_policy_set, channel_add, deliveries_send, outbox_consume
    from monitors.models import Healthcheck, Organization, Plan, StatusChange

    organization = Organization.objects.create(
        slug=f"bench-{os.getpid()}", name="Bench", plan=Plan.objects.get(slug="paid")
    )
    hook = channel_add(organization=organization, name="hook", kind="webhook", config={"url": url}).channel
    alert_policy_set(organization=organization, channels=[hook])
    checks = Healthcheck.objects.bulk_create(
        Healthcheck(
            organization=organization,
            name=f"bench {index}",
            type=13,
            config={"uri": "https://mcp.example.com/mcp"},
        )
        for index in range(args.checks)
    )
    t0 = timezone.now()
    StatusChange.objects.bulk_create(
        StatusChange(
            healthcheck=check,
            at=t0,
            from_status="up",
            to_status="down",
            reason="Down in eu-west (connect)",
            failed_regions={"eu-west": "connect"},
        )
        for check in checks
    )
    Healthcheck.objects.filter(organization=organization).update(status="down", status_changed_at=t0)
    stop = threading.Event()
    first_send: list[float] = []
    consumed: list[float] = []
    cpu = {"send": 0.0, "consume": 0.0}

    def consume() -> None:
        try:
            while not stop.is_set():
                started = time.thread_time()
                read = outbox_consume(now=timezone.now())
                cpu["consume"] += time.thread_time() - started
                if read:
                    consumed.append(time.time())
                else:
                    stop.wait(0.05)
        finally:
            connections.close_all()

    def send() -> None:
        try:
            while not stop.is_set():
                started = time.thread_time()
                sent = deliveries_send(now=timezone.now())
                cpu["send"] += time.thread_time() - started
                if sent and not first_send:
                    first_send.append(time.time())
                if not sent:
                    stop.wait(0.05)
        finally:
            connections.close_all()

    expected = args.checks
    threads = [threading.Thread(target=consume), threading.Thread(target=send)]
    wall = time.perf_counter()
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 600
    arrivals: list[dict[str, object]] = []
    while time.monotonic() < deadline:
        arrivals = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        if sum(int(row["count"]) for row in arrivals) >= expected:
            break
        time.sleep(0.05)
    stop.set()
    for thread in threads:
        thread.join()
    delivered = Delivery.objects.filter(state=Delivery.State.DELIVERED).count()
    base = t0.timestamp()
    lags = sorted(float(row["at"]) - base for row in arrivals for _ in range(int(row["count"])))
    last = max(float(row["at"]) for row in arrivals) if arrivals else base
    messages = len(arrivals)
    result: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "checks": args.checks,
        "storm_guard": "on (default threshold)" if args.storm else "off",
        "messages_received": messages,
        "incidents_covered": len(lags),
        "deliveries_delivered": delivered,
        "wall_s": round(time.perf_counter() - wall, 2),
        "lag_s_p50": round(statistics.median(lags), 3) if lags else None,
        "lag_s_p99": round(lags[max(0, int(len(lags) * 0.99) - 1)], 3) if lags else None,
        "lag_s_max": round(lags[-1], 3) if lags else None,
        "first_delivery_sent_s": round(first_send[0] - base, 3) if first_send else None,
        "outbox_read_s": round(consumed[-1] - base, 3) if consumed else None,
        "consumer_cpu_ms_per_incident": round(cpu["consume"] * 1000 / args.checks, 2),
        "deliveries_per_second": round(messages / (last - first_send[0]), 1)
        if first_send and last > first_send[0]
        else None,
        "sender_cpu_ms_per_delivery": round(cpu["send"] * 1000 / messages, 2) if messages else None,
        "process_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    digests = [row for row in arrivals if row["type"] == "incidents.digest"]
    if digests:
        result["digest_arrived_s"] = round(float(digests[0]["at"]) - base, 3)
        result["digest_incidents"] = int(digests[0]["count"])
    return result


def _report(result: dict[str, object]) -> str:
    return "\n".join(f"{key}: {value}" for key, value in result.items())


if __name__ == "__main__":
    raise SystemExit(main())
