"""Measure the CPU each active check type costs, beside Prometheus' blackbox_exporter probing the same targets.

``python tests/bench/check_types.py [--probes N] [--rounds R] [--concurrency C] [--types http,tcp,...]
[--json] [--no-namespace] [--no-pin]`` starts loopback targets in a process of their own (an HTTP
server, a TCP server that accepts, a TLS server with a certificate made for the run, a DNS server
answering an A record: tests/dns_server.py; ICMP echoes go to 127.0.0.1, the kernel answers), then,
for each type and round, has the two probers run N probes of the same target one after the other:

- Uptimy: a prober process that imports only the engine (``probes``) and runs the N checks as one
  batch through ``probes.runner.run_batch`` (the worker's path: ``stream_batch`` → ``run_check``
  with its Connection, address guard, deadline, redaction and outcome cleaning; recording in the
  database is not part of it), at most C in flight on one host (the batch's per-host cap is 20).
- blackbox_exporter (``/usr/bin/prometheus-blackbox-exporter``, Debian's package), with a config
  written to a temporary directory: its http, tcp, tcp+TLS, dns and icmp modules, driven through
  its ``/probe?module=…&target=…`` endpoint by C client threads of this process on keep-alive
  connections, without ``Accept-Encoding: gzip`` (a Prometheus scrape asks for gzip and costs more).

The figure is the prober process's CPU time (user + system, all its threads, from
``/proc/<pid>/stat`` read by this process before and after the N probes), divided by N: not wall
time, so a busy machine slows the run without skewing the ratio much. Warm-up probes run first,
unmeasured. blackbox's figure includes what it costs to serve each ``/probe`` request (HTTP
parsing, a registry per probe and the metrics' text rendering); it also measures (unless ``--no-floor``) the
exporter's cheapest request (``/-/healthy``) so a reader sees that part's order, and the ratio
beside "blackbox less floor" subtracts it openly. Uptimy's includes its batch scheduling and the
event loop; neither includes the targets' work, which runs in the targets' process.

Unprivileged ICMP needs ``net.ipv4.ping_group_range`` to include the prober's group, and most
machines forbid it ("1 0"). By default the whole run re-executes itself in a user and network
namespace of its own (``unshare --user --map-root-user --net``, as the ping tests do), brings its
loopback up and writes ``0 0`` to that namespace's ping_group_range: the machine's setting is
never touched, and both probers use datagram ICMP sockets (blackbox tries the unprivileged socket
first). ``--no-namespace`` runs on the machine's network and leaves icmp out unless its setting
allows it.

With two cores and taskset, both probers run on core 0 (blackbox then runs with GOMAXPROCS=1, as
Go reads the affinity) and the targets and the client threads on core 1 (``--no-pin`` to not).
The figures are the median of the rounds. No figure is asserted anywhere: docs/benchmarks.md
quotes what this prints on a named machine.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime as dt
import gzip
import http.client
import json
import os
import platform
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[2]
BLACKBOX = "/usr/bin/prometheus-blackbox-exporter"
UNSHARE = ("unshare", "--user", "--map-root-user", "--net")
TYPES = ("http", "tcp", "tls", "dns", "icmp")
TLS_NAME = "bench.test"
DNS_NAME = "bench.test"
# The blackbox module each type is compared with.
MODULES = {"http": "http_2xx", "tcp": "tcp_connect", "tls": "tcp_tls", "dns": "dns_a", "icmp": "icmp"}
START_TIMEOUT = 30.0
# What Prometheus 2.x sends with a scrape (scrape_timeout 10 s, blackbox's default timeout
# then being the module's, 5 s here).
PROMETHEUS_HEADERS = {
    "Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding": "gzip",
    "User-Agent": "Prometheus/2.45.0",
    "X-Prometheus-Scrape-Timeout-Seconds": "10",
}


# --- pure parts (tests/probes/test_bench_check_types.py) -------------------------------------


def proc_cpu_seconds(stat: str, ticks_per_second: int) -> float:
    """Return user + system CPU seconds from the text of ``/proc/<pid>/stat``.

    The command name (field 2) is in parentheses and may hold spaces and parentheses itself:
    the fields are counted after its last ``)``; utime and stime are fields 14 and 15.
    """
    after = stat[stat.rindex(")") + 2 :].split()
    # ``after[0]`` is field 3 (the state): field n is after[n - 3].
    return (int(after[11]) + int(after[12])) / ticks_per_second


def blackbox_config(*, ca_file: str, timeout_s: float = 5.0) -> str:
    """Return blackbox_exporter's config: one module per compared type, each as plain as Uptimy's check."""
    return f"""\
modules:
  http_2xx:
    prober: http
    timeout: {timeout_s:g}s
    http:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
  tcp_connect:
    prober: tcp
    timeout: {timeout_s:g}s
    tcp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
  tcp_tls:
    prober: tcp
    timeout: {timeout_s:g}s
    tcp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      tls: true
      tls_config:
        ca_file: {ca_file}
        server_name: {TLS_NAME}
  dns_a:
    prober: dns
    timeout: {timeout_s:g}s
    dns:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      transport_protocol: udp
      query_name: {DNS_NAME}
      query_type: A
      valid_rcodes: [NOERROR]
  icmp:
    prober: icmp
    timeout: {timeout_s:g}s
    icmp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
"""


@dataclass(frozen=True)
class Row:
    """One type's figures: CPU µs per probe of each prober (medians of the rounds), and what came back."""

    type: str
    uptimy_us: float
    blackbox_us: float
    uptimy_results: dict[str, int]
    blackbox_results: dict[str, int]
    floor_us: float | None = None

    @property
    def ratio(self) -> float:
        return self.uptimy_us / self.blackbox_us if self.blackbox_us else float("nan")

    @property
    def ratio_less_floor(self) -> float | None:
        if self.floor_us is None or self.blackbox_us <= self.floor_us:
            return None
        return self.uptimy_us / (self.blackbox_us - self.floor_us)


def table(rows: Sequence[Row]) -> str:
    """Return the rows as the table the command prints (a Markdown table, as docs/benchmarks.md shows it)."""
    floor = any(row.floor_us is not None for row in rows)
    head = ["type", "Uptimy µs CPU/probe", "blackbox µs CPU/probe", "ratio"]
    if floor:
        head.append("ratio to blackbox less floor")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row.type, f"{row.uptimy_us:.0f}", f"{row.blackbox_us:.0f}", f"{row.ratio:.2f}×"]
        if floor:
            less = row.ratio_less_floor
            cells.append(f"{less:.2f}×" if less is not None else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def uptimy_config(kind: str, targets: dict[str, Any]) -> dict[str, Any]:
    """Return the API config of Uptimy's check of ``kind`` against the run's targets."""
    if kind == "http":
        return {"uri": f"http://127.0.0.1:{targets['http']}/", "timeout": 5}
    if kind == "tcp":
        return {"host": "127.0.0.1", "port": targets["tcp"], "timeout": 5}
    if kind == "tls":
        return {"host": "127.0.0.1", "port": targets["tls"], "serverName": TLS_NAME, "timeout": 5}
    if kind == "dns":
        return {
            "name": DNS_NAME,
            "recordType": "A",
            "nameserver": f"127.0.0.1:{targets['dns']}",
            "timeout": 5,
        }
    if kind == "icmp":
        return {"host": "127.0.0.1", "count": 1, "timeout": 5}
    raise ValueError(kind)


def blackbox_target(kind: str, targets: dict[str, Any]) -> str:
    """Return the ``target`` blackbox's module of ``kind`` probes."""
    if kind == "http":
        return f"http://127.0.0.1:{targets['http']}/"
    if kind == "icmp":
        return "127.0.0.1"
    return f"127.0.0.1:{targets[kind]}"


# --- the targets' process ----------------------------------------------------------------------


HTTP_ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
)


class _HttpTarget(asyncio.Protocol):
    """Answer one request per connection with 200 and close: what both probers' HTTP checks ask."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport
        self.seen = b""

    def data_received(self, data: bytes) -> None:
        self.seen += data
        if b"\r\n\r\n" in self.seen:
            self.transport.write(HTTP_ANSWER)
            self.transport.close()


class _Hangup(asyncio.Protocol):
    """Close once the client closes (a TCP connect check) or after a TLS handshake (the TLS server)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def eof_received(self) -> bool:
        return False


def make_pki(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """Write a CA for the run to ``folder``; return its PEM file and a server context for TLS_NAME."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)

    def issue(name: str, issuer: Any, key: Any, *, ca: bool) -> Any:
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer[0].subject if issuer else subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=90))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        return builder.sign(issuer[1] if issuer else key, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = issue("Uptimy bench CA", None, ca_key, ca=True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = issue(TLS_NAME, (ca, ca_key), leaf_key, ca=False)
    pem = serialization.Encoding.PEM
    ca_file, cert_file, key_file = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    ca_file.write_bytes(ca.public_bytes(pem))
    cert_file.write_bytes(leaf.public_bytes(pem))
    key_file.write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return ca_file, context


def serve_targets(folder: Path) -> None:
    """Serve every target on loopback, print their ports as one JSON line, and serve until stdin closes."""
    sys.path.insert(0, str(ROOT))
    from tests.dns_server import Zone, dns_server

    ca_file, tls_context = make_pki(folder)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        http_server = await loop.create_server(_HttpTarget, "127.0.0.1", 0, backlog=512)
        tcp_server = await loop.create_server(_Hangup, "127.0.0.1", 0, backlog=512)
        tls_server = await loop.create_server(_Hangup, "127.0.0.1", 0, ssl=tls_context, backlog=512)
        zone = Zone(records=[f"{DNS_NAME}. 60 IN A 192.0.2.1"])
        # The zone's log of questions would grow by one per probe: the bench never reads it.
        zone.asked = _Forgetful()
        with dns_server(zone) as dns_address:
            ports = {
                "http": http_server.sockets[0].getsockname()[1],
                "tcp": tcp_server.sockets[0].getsockname()[1],
                "tls": tls_server.sockets[0].getsockname()[1],
                "dns": int(dns_address.rsplit(":", 1)[1]),
                "ca_file": str(ca_file),
            }
            print(json.dumps(ports), flush=True)
            await loop.run_in_executor(None, sys.stdin.read)

    asyncio.run(main())


class _Forgetful(list[Any]):
    def append(self, item: Any) -> None:
        pass


# --- Uptimy's prober process -----------------------------------------------------------------


def run_prober(ca_file: str, concurrency: int) -> None:
    """Run batches as this process's stdin asks, one JSON line each, and say when each starts and ends.

    A request is ``{"type", "config", "probes", "warmup"}``: the warm-up batch runs, "ready" is
    written, and the measured batch starts on the "go" line the caller sends once it has read
    this process's CPU; "done" follows with the results, and the caller reads the CPU again.
    """
    sys.path.insert(0, str(ROOT))
    from probes.checks import check_kind
    from probes.runner import ProbeEnv, run_batch

    env = ProbeEnv(allow_private=True, ssl_context=ssl.create_default_context(cafile=ca_file))
    kinds = {"icmp": "ping"}

    async def batch(config: Any, probes: int) -> dict[str, int]:
        done = await run_batch([(index, config) for index in range(probes)], env, max_in_flight=concurrency)
        results: collections.Counter[str] = collections.Counter()
        for _, outcome in done:
            results[
                outcome.status.value if outcome.kind is None else f"{outcome.status.value}: {outcome.reason}"
            ] += 1
        return dict(results)

    async def main() -> None:
        for line in sys.stdin:
            request = json.loads(line)
            kind = request["type"]
            config = check_kind(kinds.get(kind, kind)).parse(request["config"])
            if request["warmup"]:
                await batch(config, request["warmup"])
            print("ready", flush=True)
            sys.stdin.readline()  # "go"
            started = time.perf_counter()
            results = await batch(config, request["probes"])
            wall = time.perf_counter() - started
            print(json.dumps({"results": results, "wall_s": wall}), flush=True)

    asyncio.run(main())


# --- the run ---------------------------------------------------------------------------------


def cpu_of(pid: int) -> float:
    """Return the CPU seconds process ``pid`` has used so far, all its threads, user and system."""
    return proc_cpu_seconds(Path(f"/proc/{pid}/stat").read_text(), os.sysconf("SC_CLK_TCK"))


@dataclass
class Measured:
    cpu_s: float
    wall_s: float
    results: dict[str, int]


class UptimyProber:
    """Uptimy's prober process: one batch per request, its CPU read from outside."""

    def __init__(self, pin: Sequence[str], ca_file: str, concurrency: int) -> None:
        self.process = subprocess.Popen(
            [*pin, sys.executable, __file__, "--role", "prober", ca_file, str(concurrency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        self.stdin: TextIO = self.process.stdin  # type: ignore[assignment]
        self.stdout: TextIO = self.process.stdout  # type: ignore[assignment]

    def measure(self, kind: str, config: dict[str, Any], probes: int, warmup: int) -> Measured:
        self.stdin.write(
            json.dumps({"type": kind, "config": config, "probes": probes, "warmup": warmup}) + "\n"
        )
        self.stdin.flush()
        if self.stdout.readline().strip() != "ready":
            raise RuntimeError("Uptimy's prober ended before its batch")
        cpu0, wall0 = cpu_of(self.process.pid), time.perf_counter()
        self.stdin.write("go\n")
        self.stdin.flush()
        answer = json.loads(self.stdout.readline())
        cpu, wall = cpu_of(self.process.pid) - cpu0, time.perf_counter() - wall0
        return Measured(cpu, wall, answer["results"])

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(timeout=30)


class Blackbox:
    """blackbox_exporter with the run's config, probed through /probe by client threads of this process."""

    def __init__(
        self, pin: Sequence[str], folder: Path, ca_file: str, concurrency: int, *, as_prometheus: bool
    ) -> None:
        # By default no Accept-Encoding: the exporter answers in plain text, the cheapest for it.
        # As Prometheus scrapes: gzip, its Accept and its timeout header.
        self.headers = PROMETHEUS_HEADERS if as_prometheus else {"Accept-Encoding": "identity"}
        config = folder / "blackbox.yml"
        config.write_text(blackbox_config(ca_file=ca_file))
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            self.port = free.getsockname()[1]
        self.process = subprocess.Popen(
            [
                *pin,
                BLACKBOX,
                f"--config.file={config}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(folder / "blackbox.log", "w"),  # noqa: SIM115 (closed with the process)
        )
        self.concurrency = concurrency
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            with contextlib.suppress(OSError):
                if (
                    self._get(http.client.HTTPConnection("127.0.0.1", self.port, timeout=5), "/-/healthy")[0]
                    == 200
                ):
                    break
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"blackbox_exporter did not start: see {folder / 'blackbox.log'}")
            time.sleep(0.1)

    def _get(self, conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
        conn.request("GET", path, headers=self.headers)
        response = conn.getresponse()
        body = response.read()
        if response.getheader("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return response.status, body

    def _run(self, path: str, probes: int) -> dict[str, int]:
        results: collections.Counter[str] = collections.Counter()
        lock = threading.Lock()
        shares = [
            probes // self.concurrency + (index < probes % self.concurrency)
            for index in range(self.concurrency)
        ]

        def client(count: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            seen: collections.Counter[str] = collections.Counter()
            for _ in range(count):
                status, body = self._get(conn, path)
                seen[probe_result(status, body)] += 1
            conn.close()
            with lock:
                results.update(seen)

        threads = [threading.Thread(target=client, args=(share,)) for share in shares if share]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return dict(results)

    def measure_path(self, path: str, probes: int, warmup: int) -> Measured:
        if warmup:
            self._run(path, warmup)
        cpu0, wall0 = cpu_of(self.process.pid), time.perf_counter()
        results = self._run(path, probes)
        return Measured(cpu_of(self.process.pid) - cpu0, time.perf_counter() - wall0, results)

    def measure(self, kind: str, target: str, probes: int, warmup: int) -> Measured:
        query = urllib.parse.urlencode({"module": MODULES[kind], "target": target})
        return self.measure_path(f"/probe?{query}", probes, warmup)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def probe_result(status: int, body: bytes) -> str:
    """Return "up" for a /probe answer whose probe_success is 1, else what it was."""
    if status != 200:
        return f"http {status}"
    if b"\nprobe_success 1" in b"\n" + body:
        return "up"
    if b"\nprobe_success 0" in b"\n" + body:
        return "down"
    return "ok" if body.strip() in (b"", b"Healthy", b"OK") else "?"


def icmp_allowed() -> bool:
    """Return whether this network namespace lets every group open datagram ICMP sockets."""
    low, high = (int(part) for part in Path("/proc/sys/net/ipv4/ping_group_range").read_text().split())
    return low <= os.getgid() <= high


def pins(no_pin: bool) -> tuple[list[str], list[str]]:
    """Return the taskset prefixes of the probers and of the rest (none without taskset or two cores)."""
    if no_pin or shutil.which("taskset") is None or (os.cpu_count() or 1) < 2:
        return [], []
    return ["taskset", "-c", "0"], ["taskset", "-c", "1"]


@contextlib.contextmanager
def targets_process(pin: Sequence[str], folder: Path) -> Iterator[dict[str, Any]]:
    process = subprocess.Popen(
        [*pin, sys.executable, __file__, "--role", "targets", str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        if not line:
            raise RuntimeError("the targets' process exited before printing its ports")
        yield json.loads(line)
    finally:
        if process.stdin:
            process.stdin.close()
        process.wait(timeout=30)


def run(args: argparse.Namespace) -> dict[str, Any]:
    prober_pin, other_pin = pins(args.no_pin)
    if other_pin:
        # This process drives blackbox's /probe requests: keep it off the probers' core.
        os.sched_setaffinity(0, {1})
    kinds = [kind for kind in args.types if kind != "icmp" or icmp_allowed()]
    skipped = [kind for kind in args.types if kind not in kinds]
    report: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {_cpu_model()}, load average "
        + " ".join(f"{load:.1f}" for load in os.getloadavg()),
        "python": platform.python_version(),
        "blackbox": _blackbox_version(),
        "namespace": args.in_namespace,
        "pinned": bool(prober_pin),
        "probes": args.probes,
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "as_prometheus": args.as_prometheus,
        "skipped": {kind: "net.ipv4.ping_group_range forbids unprivileged ICMP here" for kind in skipped},
        "types": {},
    }
    with tempfile.TemporaryDirectory(prefix="uptimy-bench-types-") as tmp:
        folder = Path(tmp)
        with targets_process(other_pin, folder) as targets:
            uptimy = UptimyProber(prober_pin, targets["ca_file"], args.concurrency)
            blackbox = Blackbox(
                prober_pin, folder, targets["ca_file"], args.concurrency, as_prometheus=args.as_prometheus
            )
            try:
                if args.floor:
                    floors = [
                        blackbox.measure_path("/-/healthy", args.probes, args.warmup)
                        for _ in range(args.rounds)
                    ]
                    report["blackbox_floor_us"] = _median_us(floors, args.probes)
                for kind in kinds:
                    ours: list[Measured] = []
                    theirs: list[Measured] = []
                    for _ in range(args.rounds):
                        ours.append(
                            uptimy.measure(kind, uptimy_config(kind, targets), args.probes, args.warmup)
                        )
                        theirs.append(
                            blackbox.measure(kind, blackbox_target(kind, targets), args.probes, args.warmup)
                        )
                    report["types"][kind] = {
                        "uptimy_us": _median_us(ours, args.probes),
                        "blackbox_us": _median_us(theirs, args.probes),
                        "uptimy_rounds_us": [round(m.cpu_s * 1e6 / args.probes) for m in ours],
                        "blackbox_rounds_us": [round(m.cpu_s * 1e6 / args.probes) for m in theirs],
                        "uptimy_probes_per_s": round(args.probes / statistics.median(m.wall_s for m in ours)),
                        "blackbox_probes_per_s": round(
                            args.probes / statistics.median(m.wall_s for m in theirs)
                        ),
                        "uptimy_results": _summed(ours),
                        "blackbox_results": _summed(theirs),
                    }
            finally:
                uptimy.close()
                blackbox.close()
    return report


def _median_us(runs: Sequence[Measured], probes: int) -> float:
    return round(statistics.median(m.cpu_s for m in runs) * 1e6 / probes, 1)


def _summed(runs: Sequence[Measured]) -> dict[str, int]:
    total: collections.Counter[str] = collections.Counter()
    for measured in runs:
        total.update(measured.results)
    return dict(sorted(total.items()))


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def _blackbox_version() -> str:
    done = subprocess.run([BLACKBOX, "--version"], capture_output=True, text=True, check=False)
    return (done.stdout + done.stderr).splitlines()[0] if (done.stdout + done.stderr) else "unknown"


def rows_of(report: dict[str, Any]) -> list[Row]:
    floor = report.get("blackbox_floor_us")
    return [
        Row(
            kind,
            figures["uptimy_us"],
            figures["blackbox_us"],
            figures["uptimy_results"],
            figures["blackbox_results"],
            floor,
        )
        for kind, figures in report["types"].items()
    ]


def human(report: dict[str, Any]) -> str:
    where = (
        "a user and network namespace of its own (ping_group_range 0 0 there)"
        if report["namespace"]
        else ("the machine's network")
    )
    lines = [
        f"{report['date']}, {report['machine']}; Python {report['python']}, {report['blackbox']}",
        f"{report['probes']} probes per type and prober, {report['rounds']} rounds (median), "
        f"{report['concurrency']} in flight; run in {where}; "
        + (
            "probers on core 0, targets and blackbox's client on core 1" if report["pinned"] else "not pinned"
        ),
        "",
        table(rows_of(report)),
        "",
        "Uptimy: the prober process's CPU over one run_batch of the probes (the worker's engine path, no database).",
        "blackbox: the exporter process's CPU over the same number of /probe requests ("
        + (
            "keep-alive, as Prometheus scrapes: gzip, OpenMetrics Accept"
            if report.get("as_prometheus")
            else "keep-alive, plain text, no gzip"
        )
        + "): it includes serving each request and rendering its metrics.",
    ]
    if "blackbox_floor_us" in report:
        lines.append(
            f"blackbox floor: {report['blackbox_floor_us']:.0f} µs CPU per /-/healthy request (its HTTP serving "
            "alone); the last column divides by blackbox's figure less it."
        )
    for kind, figures in report["types"].items():
        lines.append(
            f"{kind}: Uptimy rounds {figures['uptimy_rounds_us']} µs, {figures['uptimy_probes_per_s']}/s, "
            f"{figures['uptimy_results']}; blackbox rounds {figures['blackbox_rounds_us']} µs, "
            f"{figures['blackbox_probes_per_s']}/s, {figures['blackbox_results']}"
        )
    for kind, why in report["skipped"].items():
        lines.append(f"{kind}: skipped, {why}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python tests/bench/check_types.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--probes", type=int, default=2000, metavar="N", help="probes per type, prober and round (2000)"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, metavar="R", help="rounds per type; the median is shown (3)"
    )
    parser.add_argument("--concurrency", type=int, default=20, metavar="C", help="probes in flight (20)")
    parser.add_argument("--warmup", type=int, default=100, metavar="N", help="unmeasured probes first (100)")
    parser.add_argument(
        "--types",
        type=lambda text: [part.strip() for part in text.split(",") if part.strip()],
        default=list(TYPES),
        help=f"comma-separated, of {','.join(TYPES)} (all)",
    )
    parser.add_argument(
        "--floor", action=argparse.BooleanOptionalAction, default=True, help="measure /-/healthy too"
    )
    parser.add_argument(
        "--as-prometheus",
        action="store_true",
        help="ask blackbox's /probe as Prometheus scrapes it (gzip, OpenMetrics Accept) instead of plain text",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--no-namespace",
        action="store_true",
        help="run on the machine's network (icmp needs its ping_group_range)",
    )
    parser.add_argument("--no-pin", action="store_true", help="do not pin the probers to core 0")
    parser.add_argument("--in-namespace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.types) - set(TYPES))
    if unknown or not args.types:
        parser.error(f"--types takes some of {','.join(TYPES)}, not {','.join(unknown) or 'nothing'}")
    if args.probes < 1 or args.rounds < 1 or args.concurrency < 1 or args.warmup < 0:
        parser.error("--probes, --rounds and --concurrency must be at least 1; --warmup at least 0")
    return args


def enter_namespace(argv: list[str]) -> int:
    """Run this command again in a user and network namespace of its own, where ICMP is allowed."""
    setup = "ip link set lo up && echo '0 0' > /proc/sys/net/ipv4/ping_group_range && exec \"$@\""
    done = subprocess.run(
        [*UNSHARE, "sh", "-c", setup, "sh", sys.executable, __file__, *argv, "--in-namespace"], check=False
    )
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    raw = sys.argv[1:] if argv is None else argv
    if raw[:2] == ["--role", "targets"]:
        serve_targets(Path(raw[2]))
        return 0
    if raw[:2] == ["--role", "prober"]:
        run_prober(raw[2], int(raw[3]))
        return 0
    args = parse_args(raw)
    if not Path(BLACKBOX).exists():
        print(f"bench: {BLACKBOX} is missing: apt-get install prometheus-blackbox-exporter", file=sys.stderr)
        return 2
    if not args.no_namespace and not args.in_namespace:
        return enter_namespace(raw)
    report = run(args)
    print(json.dumps(report, indent=2) if args.json else human(report))
    failed = any(
        set(figures["uptimy_results"]) != {"up"} or set(figures["blackbox_results"]) != {"up"}
        for figures in report["types"].values()
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
