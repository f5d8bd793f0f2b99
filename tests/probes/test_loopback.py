"""Real sockets on loopback: the guard, timings, TLS, one deadline against slow drips and hangs.

The deadline tests never race the wall clock. A server that must not be waited for holds its
connection until the client closes it, so only the check's deadline can end the exchange (or,
in a test about not waiting, nothing can). Once the check can only be waiting on the server,
the server freezes the loop's clock (ControlledClockLoop), which then goes from timer to timer:
where the check ended, against its deadline, is exact whatever the machine's load. A check that
never ends fails after HANG.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest
from probe_support import (
    LONG_TIMEOUT,
    Certs,
    ControlledClockLoop,
    free_port,
    freeze_clock,
    http_response,
    loopback,
    make_certs,
    mcp_handler,
    read_request,
    unless_hung,
    until_closed,
)

from probes import connection
from probes.checks.http import HttpConfig
from probes.checks.mcp import McpConfig
from probes.runner import ProbeEnv, run_check
from probes.types import FailureKind, Status

OPEN = ProbeEnv(allow_private=True)


def check(config, env=OPEN, handler=mcp_handler, tls=None):
    async def main():
        async with loopback(handler, tls=tls) as port:
            return await unless_hung(run_check(config(port) if callable(config) else config, env))

    return asyncio.run(main())


def check_on_clock(config, handler, *, frozen=False):
    """Run a check against ``handler`` on a ControlledClockLoop, frozen from the start or by the
    handler (freeze_clock); return the outcome and the loop times the check started and ended."""

    async def main():
        async with loopback(handler) as port:
            loop = asyncio.get_running_loop()
            started = loop.time()
            outcome = await unless_hung(run_check(config(port), OPEN))
            return outcome, started, loop.time()

    with asyncio.Runner(loop_factory=lambda: ControlledClockLoop(frozen=frozen)) as runner:
        return runner.run(main())


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


# localhost as most machines resolve it: IPv6 first. Nothing listens on ::1 in these tests.
LOCALHOST = ["::1", "127.0.0.1"]


def test_a_name_whose_first_address_refuses_is_checked_on_the_next(dns):
    dns["localhost"] = LOCALHOST
    outcome = check(lambda port: McpConfig(uri=f"http://localhost:{port}/mcp"))

    assert outcome.status is Status.UP


def test_a_refused_connection_names_every_address_tried(dns):
    dns["localhost"] = LOCALHOST
    port = free_port()

    outcome = asyncio.run(run_check(McpConfig(uri=f"http://localhost:{port}/mcp"), OPEN))

    assert outcome.kind is FailureKind.CONNECT
    assert outcome.reason == f"Connection to localhost port {port} failed: ::1 refused, 127.0.0.1 refused"


def test_a_name_with_one_address_keeps_the_short_sentence(dns):
    dns["only-v4.invalid"] = ["127.0.0.1"]
    port = free_port()

    outcome = asyncio.run(run_check(McpConfig(uri=f"http://only-v4.invalid:{port}/mcp"), OPEN))

    assert (
        outcome.reason == f"Connection to only-v4.invalid (127.0.0.1) port {port} failed: connection refused"
    )


def test_a_deadline_during_the_second_address_names_the_refusal_before_it(dns, monkeypatch):
    """::1 refuses; 127.0.0.1 never completes the handshake (its listen queue is full)."""
    dns["localhost"] = LOCALHOST
    real_open = connection.open_stream

    async def open_stream(address, port):
        if address == "127.0.0.1":
            freeze_clock()  # the check can only wait now: the clock jumps to its deadline
        return await real_open(address, port)

    monkeypatch.setattr(connection, "open_stream", open_stream)
    with socket.socket() as full, socket.socket() as queued:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        queued.connect(("127.0.0.1", port))  # fills the queue: the next handshake gets no answer
        with asyncio.Runner(loop_factory=ControlledClockLoop) as runner:
            outcome = runner.run(
                unless_hung(run_check(McpConfig(uri=f"http://localhost:{port}/mcp", timeout=1.0), OPEN))
            )

    assert outcome.kind is FailureKind.TIMEOUT
    assert outcome.reason == (
        f"Connection to localhost port {port} failed: ::1 refused, 127.0.0.1 timed out (the check's 1 s ran out)"
    )


def test_a_deadline_during_the_first_address_says_the_next_was_not_tried(dns, monkeypatch):
    dns["localhost"] = ["127.0.0.1", "::1"]
    real_open = connection.open_stream

    async def open_stream(address, port):
        freeze_clock()
        return await real_open(address, port)

    monkeypatch.setattr(connection, "open_stream", open_stream)
    with socket.socket() as full, socket.socket() as queued:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        queued.connect(("127.0.0.1", port))
        with asyncio.Runner(loop_factory=ControlledClockLoop) as runner:
            outcome = runner.run(
                unless_hung(run_check(McpConfig(uri=f"http://localhost:{port}/mcp", timeout=1.0), OPEN))
            )

    assert outcome.reason == (
        f"Connection to localhost port {port} failed: 127.0.0.1 timed out, ::1 not tried (the check's 1 s ran out)"
    )


def test_a_server_that_closes_without_answering_is_connect():
    async def handler(reader, writer):
        await read_request(reader)
        writer.close()

    outcome = check(lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp"), handler=handler)
    assert outcome.kind is FailureKind.CONNECT
    assert "closed the connection without answering" in outcome.reason


def test_a_server_that_never_answers_times_out_on_the_deadline():
    async def handler(reader, writer):
        await until_closed(reader)  # never answers

    # Frozen from the start: nothing the server sends can matter, so the check ends exactly on
    # its deadline, neither sooner nor later.
    outcome, started, ended = check_on_clock(
        lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=1.0), handler, frozen=True
    )
    assert outcome.kind is FailureKind.TIMEOUT
    assert outcome.reason == "No complete answer within 1 s (during initialize)"
    assert ended - started == pytest.approx(1.0)


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json"])
def test_a_slow_drip_cannot_stretch_the_deadline(content_type):
    asked_at = []

    async def handler(reader, writer):
        await read_request(reader)
        asked_at.append(asyncio.get_running_loop().time())  # the check set its deadline before this
        head = f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: 100000\r\n\r\n"
        writer.write(head.encode())
        # Drip until the client hangs up, the answer never complete: a deadline that each drip
        # stretched would never end. The clock goes from drip to drip from here.
        freeze_clock()
        try:
            while not reader.at_eof():
                writer.write(b": drip\n\n" if content_type == "text/event-stream" else b" ")
                await writer.drain()
                await asyncio.sleep(0.05)
        except ConnectionError:
            pass

    outcome, started, ended = check_on_clock(
        lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=LONG_TIMEOUT), handler
    )
    assert outcome.kind is FailureKind.TIMEOUT
    assert outcome.reason == f"No complete answer within {LONG_TIMEOUT:g} s (during initialize)"
    # Ended on the deadline, set between the start and the request, after some 600 drips.
    assert started + LONG_TIMEOUT <= ended <= asked_at[0] + LONG_TIMEOUT


def test_a_stream_closed_before_the_answer_fails_at_once():
    async def handler(reader, writer):
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        writer.write(b"9\r\ndata: {}\n\n\r\n0\r\n\r\n")
        await writer.drain()
        await until_closed(reader)  # the connection stays open: nothing but the check can end it

    started = time.perf_counter()
    outcome = check(
        lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=LONG_TIMEOUT), handler=handler
    )
    # Waiting for more would have run into the deadline, which ends as a timeout.
    assert outcome.kind is FailureKind.PROTOCOL
    assert time.perf_counter() - started < LONG_TIMEOUT / 2


def test_a_hanging_delete_never_decides_the_result_and_is_bounded():
    asked_at = []
    methods = []

    async def handler(reader, writer):
        while True:
            method, _headers, body = await read_request(reader)
            asked_at.append(asyncio.get_running_loop().time())
            methods.append(method if method == "DELETE" else json.loads(body)["method"])
            if method == "DELETE":
                # The check only waits for this answer now, which never comes: the clock goes
                # from timer to timer from here.
                freeze_clock()
                await until_closed(reader)
                return
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

    outcome, _, ended = check_on_clock(
        lambda port: McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=LONG_TIMEOUT), handler
    )
    assert outcome.status is Status.UP
    assert methods == ["initialize", "notifications/initialized", "DELETE"]  # no tools: no tools/list
    # Bounded by the check's deadline, set before the first request.
    assert ended <= asked_at[0] + LONG_TIMEOUT


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
