"""Fixtures shared by the monitors tests that run real checks."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FAST_MCP = Path(__file__).resolve().parents[1] / "peers" / "servers" / "fast_mcp.py"


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
    """Return a client of an organization of its own with one MCP check (seed_id), for the fuzzers.

    Its calls are not rate-limited: a fuzzer sends more than the per-key rate in a minute, and
    a 429 would hide the answer under test (the limit has tests of its own).
    """
    from monitors.api.throttling import ApiKeyRateThrottle

    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": None})
    from monitors.models import Plan
    from monitors.services import healthcheck_create, organization_create
    from probes.checks.mcp import MCP

    organization = organization_create(slug="fuzz", plan=Plan.objects.get(slug="paid"))
    seed = healthcheck_create(
        organization=organization,
        name="seed",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
        now=now,
    )
    client = make_client(organization)
    client.seed_id = str(seed.public_id)
    return client
