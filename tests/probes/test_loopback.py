"""Real sockets on loopback: the guard, timings, TLS, one deadline against slow drips and hangs."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from probe_support import Certs, free_port, http_response, loopback, make_certs, mcp_handler, read_request

from probes.checks.http import HttpConfig
from probes.checks.mcp import McpConfig
from probes.runner import ProbeEnv, run_check
from probes.types import FailureKind, Status

OPEN = ProbeEnv(allow_private=True)


def check(config, env=OPEN, handler=mcp_handler, tls=None):
    async def main():
        async with loopback(handler, tls=tls) as port:
            return await run_check(config(port) if callable(config) else config, env)

    return asyncio.run(main())


def test_loopback_server_is_checked_when_private_targets_are_allowed():
    outcome = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp"))
    assert outcome.status is Status.UP
    assert outcome.tool_names == ("ping_me",)


def test_timings_of_a_real_connection():
    timings = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp")).timings
    assert timings.dns_ms is None  # a literal address needs no lookup
    assert timings.tls_ms is None
    assert timings.tcp_ms is not None
    assert timings.ttfb_ms is not None
    assert timings.total_ms >= timings.tcp_ms


def test_loopback_is_refused_by_default_before_connecting():
    connections = []

    async def handler(reader, writer):
        connections.append(1)
        writer.close()

    outcome = check(
        lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp"), env=ProbeEnv(), handler=handler
    )
    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert outcome.reason == "127.0.0.1 is a loopback address; Uptimy only checks public addresses"
    assert connections == []


def test_the_connection_goes_to_the_checked_address_without_a_second_lookup(dns):
    # "rebind.invalid" exists only in the fake resolver: a second, system lookup would fail.
    dns["rebind.invalid"] = ["127.0.0.1"]
    outcome = check(lambda port: McpConfig(uri=f"http://rebind.invalid:{port}/mcp"))
    assert outcome.status is Status.UP
    assert outcome.timings.dns_ms is not None


def test_a_refused_connection_is_connect():
    port = free_port()
    outcome = asyncio.run(run_check(McpConfig(uri=f"http://127.0.0.1:{port}/mcp"), OPEN))
    assert outcome.kind is FailureKind.CONNECT
    assert outcome.reason == f"Connection to 127.0.0.1 port {port} failed: connection refused"


def test_a_server_that_closes_without_answering_is_connect():
    async def handler(reader, writer):
        await read_request(reader)
        writer.close()

    outcome = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp"), handler=handler)
    assert outcome.kind is FailureKind.CONNECT
    assert "closed the connection without answering" in outcome.reason


def test_a_server_that_never_answers_times_out_on_the_deadline():
    async def handler(reader, writer):
        await asyncio.sleep(30)

    started = time.perf_counter()
    outcome = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=1.0), handler=handler)
    assert outcome.kind is FailureKind.TIMEOUT
    assert outcome.reason == "No complete answer within 1 s (during initialize)"
    assert 0.9 < time.perf_counter() - started < 3


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json"])
def test_a_slow_drip_cannot_stretch_the_deadline(content_type):
    async def handler(reader, writer):
        await read_request(reader)
        head = f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: 100000\r\n\r\n"
        writer.write(head.encode())
        for _ in range(100):
            writer.write(b": drip\n\n" if content_type == "text/event-stream" else b" ")
            await writer.drain()
            await asyncio.sleep(0.05)

    started = time.perf_counter()
    outcome = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=1.0), handler=handler)
    assert outcome.kind is FailureKind.TIMEOUT
    assert time.perf_counter() - started < 2


def test_a_stream_closed_before_the_answer_fails_at_once():
    async def handler(reader, writer):
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        writer.write(b"9\r\ndata: {}\n\n\r\n0\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(30)

    started = time.perf_counter()
    outcome = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=5.0), handler=handler)
    assert outcome.kind is FailureKind.PROTOCOL
    assert time.perf_counter() - started < 2


def test_a_hanging_delete_never_decides_the_result_and_is_bounded():
    async def handler(reader, writer):
        while True:
            method, _headers, body = await read_request(reader)
            if method == "DELETE":
                await asyncio.sleep(30)
            message = json.loads(body)
            if "id" not in message:
                writer.write(http_response(202))
                continue
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"},
            }
            out = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            writer.write(
                http_response(200, out, {"content-type": "application/json", "mcp-session-id": "s1"})
            )

    started = time.perf_counter()
    outcome = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=1.0), handler=handler)
    assert outcome.status is Status.UP
    assert time.perf_counter() - started < 2


# --- TLS -------------------------------------------------------------------------------------


def tls_check(tmp_path, dns, *, expired=False, cert_host="mcp.test", url_host="mcp.test", trust=True):
    certs: Certs = make_certs(tmp_path, expired=expired, host=cert_host)
    dns[url_host] = ["127.0.0.1"]
    env = ProbeEnv(allow_private=True, ssl_context=certs.client if trust else None)
    return check(lambda port: McpConfig(uri=f"https://{url_host}:{port}/mcp"), env=env, tls=certs.server)


def test_tls_to_the_checked_address_verifies_the_host_name(tmp_path, dns):
    outcome = tls_check(tmp_path, dns)
    assert outcome.status is Status.UP
    assert outcome.timings.tls_ms is not None
    assert outcome.timings.dns_ms is not None


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"expired": True}, "TLS handshake failed: certificate has expired"),
        ({"trust": False}, "TLS handshake failed: self-signed certificate"),
        ({"cert_host": "other.test"}, "TLS handshake failed: Hostname mismatch"),
    ],
)
def test_tls_failures_are_tls_with_the_reason(tmp_path, dns, kwargs, words):
    outcome = tls_check(tmp_path, dns, **kwargs)
    assert outcome.kind is FailureKind.TLS
    assert outcome.reason.startswith(words)


def test_http_check_over_real_tls(tmp_path, dns):
    certs = make_certs(tmp_path)
    dns["localhost"] = ["127.0.0.1"]

    async def handler(reader, writer):
        await read_request(reader)
        writer.write(http_response(200, b"all good", {"content-type": "text/plain"}))
        await writer.drain()
        writer.close()

    env = ProbeEnv(allow_private=True, ssl_context=certs.client)
    outcome = check(
        lambda port: HttpConfig(uri=f"https://localhost:{port}/", keyword="good"),
        env=env,
        handler=handler,
        tls=certs.server,
    )
    assert outcome.status is Status.UP
    assert outcome.timings.tls_ms is not None
