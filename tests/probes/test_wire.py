"""The HTTP/1.1 client under the checks (probes.wire): one connection per check, framing, failures.

The respx tests run the real client against the in-memory server of probe_support.RespxStream;
the loopback tests put real sockets and hand-written HTTP under it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any

import httpx
import pytest
from probe_support import (
    LONG_TIMEOUT,
    PUBLIC_IP,
    URL,
    Handler,
    http_response,
    loopback,
    make_certs,
    mcp,
    mcp_handler,
    mcp_handler_listing,
    read_request,
    run,
    run_on_frozen_clock,
    sse_event,
    unless_hung,
    until_closed,
)

from probes import wire
from probes.checks.http import HttpConfig
from probes.checks.mcp import McpConfig
from probes.runner import ProbeEnv, run_check
from probes.types import FailureKind, ProbeOutcome, Status

OPEN = ProbeEnv(allow_private=True)
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "s", "version": "1"},
}


def check(handler: Any, config: Any = None) -> ProbeOutcome:
    async def main() -> ProbeOutcome:
        async with loopback(handler) as port:
            uri = f"http://127.0.0.1:{port}/mcp"
            return await unless_hung(run_check(config(uri) if config else McpConfig(uri=uri), OPEN))

    return asyncio.run(main())


# --- one connection per check (respx) --------------------------------------------------------


def test_a_json_check_runs_on_one_connection_to_the_checked_address(server, connections):
    assert run(mcp()).status is Status.UP

    assert len(connections) == 1
    (conn,) = connections
    assert [r.method for r in conn.requests] == ["POST", "POST", "POST", "DELETE"]
    assert (conn.address, conn.port, conn.scheme) == (PUBLIC_IP, 443, "https")
    assert conn.server_hostname == "mcp.example.com"


def test_an_sse_check_whose_streams_end_runs_on_one_connection(server, connections):
    server.sse = True
    server.prelude = ["id: 0\ndata:\n\n"]

    assert run(mcp()).status is Status.UP
    assert len(connections) == 1


def streaming_server(end_after: float | None):
    """Answer requests with event streams that end ``end_after`` seconds after the answer (None: never).

    The tests run these on a frozen ControlledClockLoop: the server's ``end_after`` and the
    check's own wait for a stream's end are timers fired in the order of their deadlines, not
    races against a busy machine's clock.
    """

    async def stream(message: dict[str, Any]):
        yield sse_event(message).encode()
        if end_after is None:
            await asyncio.Event().wait()
        await asyncio.sleep(end_after)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        message = json.loads(request.content)
        if "id" not in message:
            return httpx.Response(202)
        result = INIT if message["method"] == "initialize" else {"tools": []}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream", "mcp-session-id": "s1"},
            content=stream(reply),
        )

    return answer


def test_a_stream_that_ends_just_after_the_answer_keeps_the_connection(mock, connections):
    mock.route(url=URL).mock(side_effect=streaming_server(end_after=0.01))

    outcome, _ = run_on_frozen_clock(mcp())

    assert outcome.status is Status.UP
    assert len(connections) == 1


def test_a_stream_left_open_after_the_answer_is_closed_without_waiting_for_it(mock, connections):
    mock.route(url=URL).mock(side_effect=streaming_server(end_after=None))

    outcome, waited = run_on_frozen_clock(mcp())

    assert outcome.status is Status.UP
    assert waited < 1  # the seconds the check spent waiting on timers, whatever the machine's load
    # initialize's stream never ended, so its connection was closed; the next one carried
    # notifications/initialized and tools/list, whose stream never ended either.
    assert [len(conn.requests) for conn in connections] == [1, 2, 1]
    assert all(conn.closed for conn in connections)


def test_a_configured_header_replaces_the_default_of_its_name(mock):
    route = mock.get("https://www.example.com/").respond(200)

    run(HttpConfig(uri="https://www.example.com/", headers=(("user-agent", "probe/2"), ("X-A", "b"))))

    raw = route.calls.last.request.headers.raw
    assert [value for name, value in raw if name.lower() == b"user-agent"] == [b"probe/2"]
    assert (b"x-a", b"b") in raw
    assert (b"accept-encoding", b"identity") in raw


# --- framing and connection reuse on real sockets --------------------------------------------


def test_connection_close_answers_get_a_new_connection_each():
    seen: list[str] = []

    async def handler(reader, writer):
        method, _headers, body = await read_request(reader)
        seen.append(method)
        if method == "DELETE" or "id" not in json.loads(body):
            writer.write(http_response(202 if method == "POST" else 200, headers={"connection": "close"}))
        else:
            message = json.loads(body)
            result = INIT if message["method"] == "initialize" else {"tools": []}
            out = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            writer.write(
                http_response(
                    200,
                    out,
                    {"content-type": "application/json", "mcp-session-id": "s1", "connection": "close"},
                )
            )
        await writer.drain()
        writer.close()

    outcome = check(handler)

    assert outcome.status is Status.UP, outcome.reason
    assert seen == ["POST", "POST", "POST", "DELETE"]  # one request per connection


def test_a_kept_connection_the_server_drops_is_retried_once_on_a_new_one():
    """A keep-alive race: the server drops the idle connection just as the next request goes out."""
    connections: list[list[str]] = []

    async def handler(reader, writer):
        served: list[str] = []
        connections.append(served)
        try:
            while True:
                method, _headers, body = await read_request(reader)
                rpc = json.loads(body).get("method") if body else method
                served.append(rpc)
                if len(connections) == 1 and rpc == "tools/list":
                    writer.close()  # dropped without an answer
                    return
                if method == "DELETE":
                    writer.write(http_response(200))
                elif rpc == "notifications/initialized":
                    writer.write(http_response(202))
                else:
                    message = json.loads(body)
                    result = INIT if rpc == "initialize" else {"tools": [{"name": "t"}]}
                    out = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                    writer.write(
                        http_response(200, out, {"content-type": "application/json", "mcp-session-id": "s1"})
                    )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    outcome = check(handler)

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.tool_names == ("t",)
    assert connections == [
        ["initialize", "notifications/initialized", "tools/list"],
        ["tools/list", "DELETE"],
    ]


def test_informational_and_chunked_answers_are_read_on_one_connection():
    connections = 0

    async def handler(reader, writer):
        nonlocal connections
        connections += 1
        try:
            while True:
                method, _headers, body = await read_request(reader)
                if method == "DELETE" or "id" not in json.loads(body):
                    writer.write(http_response(202 if method == "POST" else 200))
                    continue
                message = json.loads(body)
                result = INIT if message["method"] == "initialize" else {"tools": [{"name": "t"}]}
                out = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                half = len(out) // 2
                writer.write(
                    b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n"
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                )
                for part in (out[:half], out[half:]):
                    writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    outcome = check(handler)

    assert outcome.status is Status.UP, outcome.reason
    assert connections == 1


@pytest.mark.parametrize(
    ("answer", "kind", "reason"),
    [
        pytest.param(
            b"HTTP/1.1 two hundred\r\n\r\n",
            FailureKind.PROTOCOL,
            "127.0.0.1 sent a malformed HTTP answer",
            id="a malformed HTTP answer is a protocol failure",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{",
            FailureKind.CONNECT,
            "The connection to 127.0.0.1 broke while reading the answer",
            id="a body cut short is connect",
        ),
    ],
)
def test_a_broken_answer_then_a_close_fails_with_its_kind(answer, kind, reason):
    async def handler(reader, writer):
        await read_request(reader)
        writer.write(answer)
        await writer.drain()
        writer.close()

    outcome = check(handler)

    assert outcome.kind is kind
    assert outcome.reason.startswith(reason)


def test_head_answers_have_no_body_even_with_a_length():
    async def handler(reader, writer):
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n")
        await writer.drain()
        await until_closed(reader)  # no body ever comes: waiting for one runs into the deadline

    outcome = check(handler, lambda uri: HttpConfig(uri=uri, method="HEAD", timeout=LONG_TIMEOUT))

    assert outcome.status is Status.UP
    assert outcome.timings.total_ms < LONG_TIMEOUT * 1000 / 2


def test_the_loopback_mcp_server_is_checked_on_one_connection():
    connections = 0

    async def counted(reader, writer):
        nonlocal connections
        connections += 1
        await mcp_handler(reader, writer)

    assert check(counted).status is Status.UP
    assert connections == 1


# --- reads larger than one socket read (loopback) --------------------------------------------


def big_tools_handler(prefix: str, count: int) -> Handler:
    """Serve an MCP server whose tools/list answer, ``count`` tools named after ``prefix``, spans
    many socket reads (each tool carries a 200-character description)."""
    return mcp_handler_listing(
        [
            {"name": f"{prefix}_{index}", "description": prefix * 200, "inputSchema": {}}
            for index in range(count)
        ]
    )


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_answers_of_many_reads_reach_each_of_concurrent_checks_whole(scheme, tmp_path, dns):
    # About 280 KB per answer: more than four socket reads each, interleaved across four
    # checks on one loop, which all read through the same per-thread buffer.
    certs = make_certs(tmp_path, host="mcp.test")
    dns["mcp.test"] = ["127.0.0.1"]
    prefixes = ["a", "b", "c", "d"]
    env = ProbeEnv(allow_private=True, ssl_context=certs.client)
    tls = certs.server if scheme == "https" else None

    async def main() -> list[ProbeOutcome]:
        async with contextlib.AsyncExitStack() as stack:
            ports = [
                await stack.enter_async_context(loopback(big_tools_handler(prefix, 1_200), tls=tls))
                for prefix in prefixes
            ]
            host = "mcp.test" if tls else "127.0.0.1"
            configs = [McpConfig(uri=f"{scheme}://{host}:{port}/mcp") for port in ports]
            return await unless_hung(asyncio.gather(*(run_check(config, env) for config in configs)))

    outcomes = asyncio.run(main())

    for prefix, outcome in zip(prefixes, outcomes, strict=True):
        assert outcome.status is Status.UP
        assert outcome.tool_names == tuple(f"{prefix}_{index}" for index in range(1_200))


def test_checks_on_two_threads_never_share_a_read_buffer():
    streams: list[wire.SocketStream] = []
    threads = [threading.Thread(target=lambda: streams.append(wire.SocketStream())) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    first, second = (stream.get_buffer(-1) for stream in streams)
    assert first.obj is not second.obj


def test_header_names_are_read_whatever_their_case():
    session_ids: list[str | None] = []

    async def shouting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                method, headers, body = await read_request(reader)
                session_ids.append(headers.get("mcp-session-id"))
                if method == "DELETE":
                    writer.write(http_response(200))
                    continue
                message = json.loads(body)
                if "id" not in message:
                    writer.write(http_response(202))
                    continue
                result = INIT if message["method"] == "initialize" else {"tools": []}
                out = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                head = f"HTTP/1.1 200 OK\r\nCONTENT-LENGTH: {len(out)}\r\nContent-TYPE: application/json\r\n"
                writer.write(head.encode() + b"MCP-Session-ID: s-upper\r\n\r\n" + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    outcome = check(shouting)

    assert outcome.status is Status.UP
    assert session_ids == [None, "s-upper", "s-upper", "s-upper"]
