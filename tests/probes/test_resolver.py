"""Name resolution against a DNS server of our own on loopback: no lookup starves another check.

The autouse ``dns`` fixture gives names fixed answers; these tests put the real resolver back
and point it (``ProbeEnv.nameservers``) at :class:`FakeDns`, which answers some names, never
answers others, and answers others late.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import subprocess
import sys
import textwrap
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from probe_support import loopback, mcp_handler

from probes import connection, resolver
from probes.checks.http import HttpConfig
from probes.checks.mcp import McpConfig
from probes.connection import resolve_name as real_resolve_name
from probes.runner import ProbeEnv, run_batch, run_check
from probes.types import FailureKind, Status

ROOT = Path(__file__).resolve().parents[2]
A, AAAA, IN = 1, 28, 1
NXDOMAIN = 3


@pytest.fixture(autouse=True)
def real_dns(monkeypatch: pytest.MonkeyPatch, dns: object) -> None:
    """Undo the fixed answers of the autouse ``dns`` fixture: these tests resolve for real."""
    monkeypatch.setattr(connection, "resolve_name", real_resolve_name)


class FakeDns(asyncio.DatagramProtocol):
    """Answer A queries for ``answers`` (AAAA with no records), NXDOMAIN for unknown names,
    nothing at all for names in ``silent``, and after ``delays[name]`` seconds for slow ones."""

    def __init__(self, answers: dict[str, str], silent: set[str], delays: dict[str, float]) -> None:
        self.answers = answers
        self.silent = silent
        self.delays = delays
        self.asked: list[str] = []
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        name, question_end = _question(data)
        qtype = struct.unpack("!H", data[question_end - 4 : question_end - 2])[0]
        self.asked.append(name)
        if name in self.silent:
            return
        reply = self._reply(data, name, qtype, question_end)
        delay = self.delays.get(name, 0.0)
        if delay:
            asyncio.get_running_loop().call_later(delay, self.transport.sendto, reply, addr)
        else:
            self.transport.sendto(reply, addr)

    def _reply(self, query: bytes, name: str, qtype: int, question_end: int) -> bytes:
        (query_id,) = struct.unpack("!H", query[:2])
        known = name in self.answers
        records = b""
        count = 0
        if known and qtype == A:
            records = struct.pack("!HHHIH", 0xC00C, A, IN, 60, 4) + socket.inet_aton(self.answers[name])
            count = 1
        flags = 0x8180 | (0 if known else NXDOMAIN)
        header = struct.pack("!HHHHHH", query_id, flags, 1, count, 0, 0)
        return header + query[12:question_end] + records


def _question(data: bytes) -> tuple[str, int]:
    """Return the queried name and where the question section ends (after QTYPE and QCLASS)."""
    labels = []
    pos = 12
    while data[pos]:
        length = data[pos]
        labels.append(data[pos + 1 : pos + 1 + length].decode("ascii").lower())
        pos += 1 + length
    return ".".join(labels), pos + 1 + 4


@asynccontextmanager
async def fake_dns(answers=None, silent=(), delays=None):
    loop = asyncio.get_running_loop()
    server = FakeDns(dict(answers or {}), set(silent), dict(delays or {}))
    transport, _ = await loop.create_datagram_endpoint(lambda: server, local_addr=("127.0.0.1", 0))
    try:
        server.address = f"127.0.0.1:{transport.get_extra_info('sockname')[1]}"
        yield server
    finally:
        transport.close()


def test_names_are_answered_by_the_configured_server():
    async def main():
        async with fake_dns({"api.ok.test": "127.0.0.7"}) as server:
            return await resolver.resolve("api.ok.test", 443, (server.address,)), server.asked

    addresses, asked = asyncio.run(main())
    assert addresses == ["127.0.0.7"]
    assert "api.ok.test" in asked


def test_localhost_and_etc_hosts_never_ask_the_dns_server():
    async def main():
        async with fake_dns(silent={"localhost"}) as server:
            started = time.perf_counter()
            addresses = await asyncio.wait_for(resolver.resolve("localhost", 80, (server.address,)), 5)
            return addresses, time.perf_counter() - started, server.asked

    addresses, elapsed, asked = asyncio.run(main())
    assert "127.0.0.1" in addresses
    assert elapsed < 1
    assert asked == []


def test_an_unknown_name_is_a_dns_failure_with_a_sentence():
    async def main():
        async with fake_dns({}) as server:
            return await run_check(
                McpConfig(uri="http://nothing.ok.test/mcp", timeout=5),
                ProbeEnv(allow_private=True, nameservers=(server.address,)),
            )

    outcome = asyncio.run(main())
    assert outcome.kind is FailureKind.DNS
    assert outcome.reason == "DNS lookup of nothing.ok.test failed: the name does not exist"


def test_a_lookup_that_never_ends_is_the_checks_timeout_naming_the_lookup():
    async def main():
        async with fake_dns(silent={"hang.test"}) as server:
            started = time.perf_counter()
            outcome = await run_check(
                HttpConfig(uri="http://hang.test/", timeout=1),
                ProbeEnv(allow_private=True, nameservers=(server.address,)),
            )
            return outcome, time.perf_counter() - started

    outcome, elapsed = asyncio.run(main())
    assert outcome.kind is FailureKind.TIMEOUT
    assert outcome.reason == "DNS lookup of hang.test got no answer within 1 s"
    assert 0.9 < elapsed < 3


def test_a_slow_answer_within_the_deadline_is_used_and_timed():
    async def main():
        async with (
            loopback(mcp_handler) as port,
            fake_dns({"slow.ok.test": "127.0.0.1"}, delays={"slow.ok.test": 0.3}) as server,
        ):
            return await run_check(
                McpConfig(uri=f"http://slow.ok.test:{port}/mcp", timeout=5),
                ProbeEnv(allow_private=True, nameservers=(server.address,)),
            )

    outcome = asyncio.run(main())
    assert outcome.status is Status.UP
    assert outcome.timings.dns_ms is not None
    assert outcome.timings.dns_ms >= 250


def test_a_dozen_silent_names_never_delay_the_healthy_checks_of_the_batch():
    # The event loop's default pool has min(32, CPUs + 4) threads: with getaddrinfo, twelve
    # names that never answer held all of them and the healthy checks below timed out too.
    silent = {f"hang{i}.tenant-a.test" for i in range(12)}
    healthy = {f"api{i}.tenant-b.test": "127.0.0.1" for i in range(8)}
    # Shorter than c-ares's first try, so the deadline (not c-ares giving up) ends them.
    assert resolver.DNS_TRY_TIMEOUT > 1.5

    async def main():
        async with loopback(mcp_handler) as port, fake_dns(healthy, silent=silent) as server:
            # The stuck ones first, as a shared batch may order them, then the healthy ones.
            items = [
                (name, McpConfig(uri=f"http://{name}:{port}/mcp", timeout=1.5)) for name in sorted(silent)
            ]
            items += [(name, McpConfig(uri=f"http://{name}:{port}/mcp", timeout=3)) for name in healthy]
            items.append(("localhost", McpConfig(uri=f"http://localhost:{port}/mcp", timeout=3)))
            items.append(("literal", McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=3)))
            env = ProbeEnv(allow_private=True, nameservers=(server.address,))
            started = time.perf_counter()
            results = dict(await run_batch(items, env))
            return results, time.perf_counter() - started

    results, elapsed = asyncio.run(main())
    for name in [*healthy, "localhost", "literal"]:
        outcome = results[name]
        assert outcome.status is Status.UP, (name, outcome.reason)
        # Normal timings: the whole check in well under a second, nowhere near the 3 s deadline.
        assert outcome.timings.total_ms < 1000, (name, outcome.timings)
    for name in [*healthy, "localhost"]:
        assert results[name].timings.dns_ms < 500, (name, results[name].timings)
    assert results["literal"].timings.dns_ms is None
    for name in silent:
        assert results[name].kind is FailureKind.TIMEOUT
        assert results[name].reason == f"DNS lookup of {name} got no answer within 1.5 s"
    assert elapsed < 5


SCRIPT = textwrap.dedent(
    """
    import sys, time
    from probes.checks.mcp import McpConfig
    from probes.runner import ProbeEnv, run_check_sync

    started = time.perf_counter()
    config = McpConfig(uri="http://never.answers.test/mcp", timeout=2)
    outcome = run_check_sync(config, ProbeEnv(nameservers=(sys.argv[1],)))
    print(outcome.kind, outcome.reason, round(time.perf_counter() - started, 2), flush=True)
    """
)


def test_a_process_exits_promptly_after_a_check_whose_lookup_never_ends():
    # A UDP socket that never reads: the DNS server that never answers.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, address],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("timeout DNS lookup of never.answers.test got no answer within 2 s")
    # With getaddrinfo on the default thread pool the check said "timeout" at 2 s and the
    # process left 17 s later; a hang guard only, as machines are noisy.
    assert elapsed < 10, (elapsed, done.stdout)
