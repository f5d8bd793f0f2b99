"""Fixtures shared by the monitors tests that run real checks."""

from __future__ import annotations

import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from monitors.models import Healthcheck
from monitors.services import healthcheck_create
from monitors.worker.execution import BatchItem
from probes.checks import CheckKind
from probes.checks.mcp import MCP
from tests.peers.peer_support import free_port

FAST_MCP = Path(__file__).resolve().parents[1] / "peers" / "servers" / "fast_mcp.py"
# The `make` fixture's default creation time: its checks' first slots are long past.
LOOPBACK_NOW = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)


def start_fast_mcp(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start tests/peers/servers/fast_mcp.py with ``args``; return the process and its MCP URL."""
    process = subprocess.Popen([sys.executable, str(FAST_MCP), *args], stdout=subprocess.PIPE)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 30)
    url = process.stdout.readline().decode().strip() if ready else ""
    if not url:
        process.kill()
        raise AssertionError("fast_mcp.py printed no URL")
    return process, url


MCP_PEER = Path(__file__).resolve().parents[1] / "e2e" / "mcp_peer.py"


def start_sdk_peer(name: str, *args: str, port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start an official-SDK server of tests/peers/servers/sdk_servers.py (tests/e2e/mcp_peer.py)
    on ``port`` (a free one by default); return the process and its MCP URL once it answers."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, str(MCP_PEER), name, str(port), *args], stdout=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx.get(base + "/_e2e/held", timeout=1.0)
        except httpx.HTTPError:
            time.sleep(0.05)
            continue
        return process, base + "/mcp"
    process.kill()
    raise AssertionError(f"the SDK server {name} did not answer on {base}")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def fast_mcp() -> Iterator[str]:
    """Serve tests/peers/servers/fast_mcp.py on loopback; return its MCP URL."""
    process, url = start_fast_mcp("--tools", "3")
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture
def fuzz_client(make_client, now, monkeypatch):
    """Return a client of an organization of its own with one MCP check (seed_id), one maintenance
    window holding it (window_id) and one email channel (channel_id), for the fuzzers.

    Its calls are not rate-limited: a fuzzer sends more than the per-key rate in a minute, and
    a 429 would hide the answer under test (the limit has tests of its own).
    """
    from monitors.api.throttling import ApiKeyRateThrottle

    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": None})
    from monitors.models import Plan
    from monitors.services import healthcheck_create, maintenance_window_create, organization_create
    from probes.checks.mcp import MCP

    organization = organization_create(slug="fuzz", plan=Plan.objects.get(slug="paid"))
    seed = healthcheck_create(
        organization=organization,
        name="seed",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
        now=now,
    )
    window = maintenance_window_create(
        organization=organization,
        name="seed",
        starts_at=now,
        duration=timedelta(hours=1),
        healthchecks=[seed.public_id],
    )
    from alerts.models import Channel
    from alerts.services import channel_create

    channel = channel_create(
        organization=organization,
        name="seed",
        kind=Channel.Kind.EMAIL,
        config={"recipients": ["ops@fuzz.example"]},
    )
    client = make_client(organization)
    client.seed_id = str(seed.public_id)
    client.window_id = str(window.public_id)
    client.channel_id = str(channel.public_id)

    def seed_for(path: str) -> str:
        """Aim an {id} at the object of the path's kind."""
        if "/maintenance-windows/" in path:
            return client.window_id
        if "/channels/" in path:
            return client.channel_id
        return client.seed_id

    client.seed_for = seed_for
    return client


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from loopback"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """Serve "hello from loopback" to every GET; return the URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def refused_url() -> str:
    """Return a loopback URL whose port nobody listens on: connection refused, at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def make(org, settings) -> Callable[..., Healthcheck]:
    """Return a factory of hourly checks of loopback targets in the organization ``org``."""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True

    def make(
        uri: str, *, check_type: CheckKind = MCP, now: datetime = LOOPBACK_NOW, timeout: float = 5, **rules
    ) -> Healthcheck:
        """Create a check of ``uri`` (every region unless ``regions=[…]``); ``rules`` are its rule fields."""
        config = {"uri": uri, "timeout": timeout}
        regions = rules.pop("regions", None)
        return healthcheck_create(
            organization=org,
            name="loopback",
            check_type=check_type,
            config=config,
            now=now,
            # An hour between slots: no second slot can fall due while a worker test runs.
            interval_seconds=3600,
            region_slugs=regions,
            rules=rules,
        )

    return make


class Captured:
    """Stand in for a broker: remember what execute_batch asks to enqueue."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[BatchItem], float]] = []

    def __call__(self, region: str, items: list[BatchItem], delay: float = 0) -> None:
        self.calls.append((region, items, delay))
