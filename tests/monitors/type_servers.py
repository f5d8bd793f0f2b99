"""Real loopback servers for each active check type, each able to fail and recover when a test says so.

Shared by the per-type API tests and the end-to-end table (test_types_end_to_end.py). A
:class:`Target` is what a test needs of a type: the config that points a check at the server,
``fail()`` and ``recover()`` (the server stopped, or answering what the type calls down), and
the cause kind and reason the down verdict must name. :func:`open_target` starts one type's.
"""

from __future__ import annotations

import json
import socket
import socketserver
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from probes import certificates, rdap, runner
from probes.checks.domain import clear_cache
from tests.dns_server import Zone, dns_server
from tests.monitors.conftest import start_sdk_peer, stop
from tests.monitors.worker_support import QUICK_INTERVAL
from tests.probes.tls_support import HOST, Pki, scenarios


def serve_get(answer: Callable[[str], tuple[int, str, bytes]]) -> ThreadingHTTPServer:
    """Serve GETs on a free loopback port with ``answer(path)`` → (status, content type, body); quiet."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, content_type, body = answer(self.path)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


# --- TCP: an SSH-like banner -----------------------------------------------------------------

BANNER = b"SSH-2.0-Uptimy_test\r\n"


class _Banner(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(BANNER)
        # Hold the connection until the check closes it, as an SSH server waits for the client.
        try:
            while self.request.recv(4096):
                pass
        except OSError:
            pass


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


class BannerServer:
    """Serve an SSH-like banner on a loopback port, which can be stopped and started again."""

    def __init__(self) -> None:
        self.server: _Server | None = None
        self.port = 0
        self.start()

    def start(self) -> None:
        self.server = _Server(("127.0.0.1", self.port), _Banner)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


# --- TLS: a handshake with a certificate the test swaps ----------------------------------------


class TlsServer:
    """Serve TLS on a loopback port with ``context``, which a test may replace between handshakes."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.context = context
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            try:
                with self.context.wrap_socket(sock, server_side=True) as tls:
                    tls.recv(1)
            except (OSError, ssl.SSLError):
                pass

    def close(self) -> None:
        self._stop.set()
        self.listener.close()
        self._thread.join(5)


@contextmanager
def tls_server(context: ssl.SSLContext) -> Iterator[TlsServer]:
    server = TlsServer(context)
    try:
        yield server
    finally:
        server.close()


def trust_pki(monkeypatch: pytest.MonkeyPatch, pki: Pki) -> None:
    """Make the checks trust ``pki``'s root and read its instant as now, so the days left are exact."""
    monkeypatch.setattr(runner, "default_ssl_context", pki.client)
    monkeypatch.setattr(certificates, "utc_now", lambda: pki.now)


# --- domain: an RDAP registry answering recorded, real-shaped JSON -----------------------------

RECORDED_RDAP = Path(__file__).parents[1] / "probes" / "data" / "rdap_domain_example.json"


class RdapRegistry:
    """Answer RDAP for example.test on loopback: the recorded answer, its expiry set by the test.

    ``expires_at`` None answers the recording as it is; ``found`` False answers 404.
    """

    def __init__(self) -> None:
        self.expires_at: str | None = None
        self.found = True
        self.httpd = serve_get(self._get)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/rdap/"

    def _get(self, path: str) -> tuple[int, str, bytes]:
        if self.found and path == "/rdap/domain/example.test":
            return 200, "application/rdap+json", self.answer()
        return 404, "application/rdap+json", b'{"errorCode": 404}'

    def answer(self) -> bytes:
        if self.expires_at is None:
            return RECORDED_RDAP.read_bytes()
        data = json.loads(RECORDED_RDAP.read_bytes())
        for event in data["events"]:
            if event["eventAction"] == "expiration":
                event["eventDate"] = self.expires_at
        return json.dumps(data).encode()

    def expire_in(self, days: int) -> None:
        """Answer an expiry ``days`` from now (negative: ago), and forget cached answers.

        Python's clock, not the machine's: the domain check judges the date in Python, whose clock
        a shifted run (CLOCK_OFFSET) moves ahead.
        """
        self.expires_at = f"{datetime.now(UTC) + timedelta(days=days, hours=1):%Y-%m-%dT%H:%M:%SZ}"
        # The check keeps a registry's answer for hours; the test changes it now.
        clear_cache()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def rdap_registry(settings: Any, tmp_path: Path) -> Iterator[RdapRegistry]:
    """Serve an RDAP registry for the .test domains and point the bootstrap at it (and nothing else)."""
    settings.UPTIMY_RDAP_BOOTSTRAP_FILE = tmp_path / "none.json"
    registry = RdapRegistry()
    rdap.use_bootstrap(rdap.Bootstrap("test", {"test": (registry.base,)}))
    clear_cache()
    try:
        yield registry
    finally:
        rdap.use_bootstrap(None)
        clear_cache()
        registry.close()


# --- HTTP: a JSON health endpoint whose answer the test sets -----------------------------------


class HealthServer:
    """Answer GET /health with ``{"status": <state>}`` on loopback."""

    def __init__(self) -> None:
        self.state = "ok"
        self.httpd = serve_get(self._get)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/health"

    def _get(self, path: str) -> tuple[int, str, bytes]:
        return (
            200 if path == "/health" else 404,
            "application/json",
            json.dumps({"status": self.state}).encode(),
        )

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --- one table of targets ----------------------------------------------------------------------


@dataclass
class Target:
    """A type's real server as a check sees it, and how to make it fail and recover."""

    type: str
    config: dict[str, Any]
    fail: Callable[[], None]
    recover: Callable[[], None]
    # The down verdict's cause: its kind, and words its reason must hold.
    kind: str
    reason: str
    # Other answers the server can give, by name (a TLS server's expiring certificate).
    answers: dict[str, Callable[[], None]] = field(default_factory=dict)
    # Seconds between slots: room for every region's run and recheck before the next slot.
    interval: int = QUICK_INTERVAL


def _http(stack: ExitStack, **_: Any) -> Target:
    server = HealthServer()
    stack.callback(server.close)

    def answer(state: str) -> Callable[[], None]:
        return lambda: setattr(server, "state", state)

    config = {
        "uri": server.url,
        "assertions": [
            {"type": "status", "in": ["2xx"]},
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
        ],
        "timeout": 5,
    }
    return Target("http", config, answer("degraded"), answer("ok"), "assertion", '$.status was "degraded"')


def _tls(stack: ExitStack, *, monkeypatch: pytest.MonkeyPatch, **_: Any) -> Target:
    pki = Pki()
    trust_pki(monkeypatch, pki)
    contexts = scenarios(pki)
    server = stack.enter_context(tls_server(contexts["valid"]))

    def serve(name: str) -> Callable[[], None]:
        return lambda: setattr(server, "context", contexts[name])

    config = {"host": "127.0.0.1", "port": server.port, "serverName": HOST, "timeout": 5}
    return Target(
        "tls",
        config,
        serve("expired"),
        serve("valid"),
        "certificate",
        "Certificate expired 3 days ago",
        answers={"expiring": serve("expiring")},
    )


def _tcp(stack: ExitStack, **_: Any) -> Target:
    server = BannerServer()
    stack.callback(server.stop)
    config = {"host": "127.0.0.1", "port": server.port, "expect": "^SSH-2\\.0-", "timeout": 5}
    return Target("tcp", config, server.stop, server.start, "connect", f"127.0.0.1 port {server.port}")


def _dns(stack: ExitStack, **_: Any) -> Target:
    zone = Zone(records=["example.test. 60 IN A 192.0.2.1"])
    nameserver = stack.enter_context(dns_server(zone))

    def answer(address: str) -> Callable[[], None]:
        return lambda: setattr(zone, "records", [f"example.test. 60 IN A {address}"])

    config = {
        "name": "example.test",
        "nameserver": nameserver,
        "expect": {"op": "contains", "values": ["192.0.2.1"]},
        "timeout": 5,
    }
    return Target(
        "dns",
        config,
        answer("192.0.2.9"),
        answer("192.0.2.1"),
        "dns_answer",
        "A answer was 192.0.2.9, expected to contain 192.0.2.1",
    )


def _domain(stack: ExitStack, *, settings: Any, tmp_path: Path, **_: Any) -> Target:
    registry = stack.enter_context(rdap_registry(settings, tmp_path))
    registry.expire_in(365)
    return Target(
        "domain",
        {"domain": "example.test", "timeout": 5},
        lambda: registry.expire_in(-3),
        lambda: registry.expire_in(365),
        "domain_expired",
        "The registration of example.test expired 2 days ago",
    )


def _mcp(stack: ExitStack, **_: Any) -> Target:
    process, url = start_sdk_peer("stateful")
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    running = [process]
    stack.callback(lambda: stop(running[0]) if running[0].poll() is None else None)

    def restart() -> None:
        running[0], _ = start_sdk_peer("stateful", port=port)

    return Target(
        "mcp", {"uri": url, "timeout": 5}, lambda: stop(running[0]), restart, "connect", f"port {port}"
    )


TARGETS: dict[str, Callable[..., Target]] = {
    "http": _http,
    "tls": _tls,
    "tcp": _tcp,
    "dns": _dns,
    "domain": _domain,
    "mcp": _mcp,
}


@contextmanager
def open_target(name: str, **fixtures: Any) -> Iterator[Target]:
    """Start type ``name``'s server (``fixtures``: monkeypatch, settings, tmp_path); stop it after."""
    with ExitStack() as stack:
        yield TARGETS[name](stack, **fixtures)


# --- ping: an address on the loopback of a network namespace of the test's own -----------------

PING_ADDRESS = "10.9.0.7"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True)


@contextmanager
def ping_namespace() -> Iterator[None]:
    """Set up the network namespace this process runs in (unshare --net): only there, never on a machine.

    Loopback up, unprivileged ICMP allowed for the test's group, and 10.9.0.0/24 routed into the
    loopback, where nothing answers it until the target's address is added.
    """
    ip("link", "set", "lo", "up")
    ip("route", "add", "10.9.0.0/24", "dev", "lo")
    with open("/proc/sys/net/ipv4/ping_group_range", "w") as setting:
        setting.write("0 0")  # root of the user namespace, whom the test runs as
    yield


def ping_target() -> Target:
    """Return a ping check's target whose address is on the namespace's loopback until it fails."""
    ip("addr", "add", f"{PING_ADDRESS}/32", "dev", "lo")
    return Target(
        "ping",
        {"host": PING_ADDRESS, "count": 1, "timeout": 2},
        lambda: ip("addr", "del", f"{PING_ADDRESS}/32", "dev", "lo"),
        lambda: ip("addr", "add", f"{PING_ADDRESS}/32", "dev", "lo"),
        "packet_loss",
        f"No echo reply from {PING_ADDRESS} (1 sent)",
        # A lost echo takes the whole timeout, and on SQLite the regions' runs take turns
        # (worker_support._OneStepAtATime): three of them and their rechecks need more than 5 s.
        interval=15,
    )
