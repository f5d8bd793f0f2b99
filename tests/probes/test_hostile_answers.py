"""Answers built to exhaust a check: endless tool lists, JSON nested 200,000 deep, slow parses.

Each ends the one check ``down`` with a sentence, within its deadline, and still says goodbye
(DELETE) when the server had assigned a session.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from probe_support import URL, FakeMcp, http_response, loopback, mcp, read_request, run, sse_event, tool

from probes import jsonrpc
from probes.checks.mcp import McpConfig
from probes.jsonrpc import MAX_JSON_DEPTH, JsonTooDeep, read_json
from probes.mcp.tools import MAX_TOOLS, MAX_TOOLS_LIST_BYTES
from probes.runner import ProbeEnv, run_batch, run_check
from probes.types import FailureKind, Status

DEEP = 200_000
TOO_DEEP = f"nests arrays and objects more than {MAX_JSON_DEPTH} levels deep, past the limit a check reads"
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "1"},
}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def rpc_text(request_id: int, result_text: str) -> str:
    """Return a JSON-RPC response whose result is ``result_text`` verbatim (json.dumps would recurse)."""
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":' + result_text + "}"


def with_tools_list(mock, answer) -> FakeMcp:
    """Route URL to a FakeMcp whose tools/list answers come from ``answer(request)`` instead."""
    fake = FakeMcp()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and json.loads(request.content).get("method") == "tools/list":
            fake.requests.append(request)
            return answer(request)
        return fake(request)

    mock.route(url=URL).mock(side_effect=handler)
    return fake


# --- the one JSON reader -----------------------------------------------------------------------


def test_nesting_up_to_the_limit_is_read_and_one_more_level_is_refused():
    assert read_json(nested(MAX_JSON_DEPTH)) is not None
    assert read_json(nested(MAX_JSON_DEPTH).encode()) is not None
    with pytest.raises(JsonTooDeep):
        read_json(nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(JsonTooDeep):
        read_json("{" + '"a":{' * MAX_JSON_DEPTH + "}" * (MAX_JSON_DEPTH + 1))


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps({"description": "[" * 500 + '\\"{' * 500, "escaped": "\\", "after": [[1]]})
    assert read_json(text)["after"] == [[1]]
    # A quote escaped inside a string does not end it, so the brackets after it stay inside.
    assert read_json('["a\\"' + "[" * 100 + '"]') == ['a"' + "[" * 100]


def test_many_shallow_containers_are_not_deep():
    text = json.dumps([{"a": [1, {"b": 2}]} for _ in range(5000)])
    assert len(read_json(text)) == 5000


def test_deep_nesting_is_refused_in_every_encoding_without_recursion():
    for data in (nested(DEEP), nested(DEEP).encode(), nested(DEEP).encode("utf-16")):
        with pytest.raises(JsonTooDeep) as refused:
            read_json(data)
        assert str(refused.value) == TOO_DEEP
    assert read_json(json.dumps([[["x"]] * 100]).encode("utf-16")) == [[["x"]] * 100]


def test_invalid_json_is_still_a_value_error_and_too_deep_is_not():
    with pytest.raises(ValueError, match="Expecting property name"):
        read_json(b"{not json")
    assert not issubclass(JsonTooDeep, ValueError)


# --- deep JSON in each body a check parses ---------------------------------------------------


def test_a_deep_initialize_answer_is_a_protocol_failure(mock):
    body = rpc_text(1, '{"protocolVersion":"2025-11-25","x":' + nested(DEEP) + "}")
    mock.post(URL).mock(
        return_value=httpx.Response(200, text=body, headers={"content-type": "application/json"})
    )
    outcome = run(mcp())
    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.PROTOCOL
    assert outcome.reason == f"The answer to initialize {TOO_DEEP}"


def test_a_deep_error_body_on_initialize_is_a_protocol_failure(mock):
    mock.post(URL).mock(
        return_value=httpx.Response(400, text=nested(DEEP), headers={"content-type": "application/json"})
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert outcome.reason == f"The error answer to initialize {TOO_DEEP}"


def test_a_deep_error_body_on_tools_list_fails_and_the_session_is_still_deleted(mock):
    fake = with_tools_list(
        mock,
        lambda request: httpx.Response(500, text=nested(DEEP), headers={"content-type": "application/json"}),
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert outcome.reason == f"The error answer to tools/list {TOO_DEEP}"
    assert fake.methods()[-1] == "DELETE"


def test_a_deep_tools_list_result_fails_and_the_session_is_still_deleted(mock):
    fake = with_tools_list(
        mock,
        lambda request: httpx.Response(
            200,
            text=rpc_text(json.loads(request.content)["id"], '{"tools":' + nested(DEEP) + "}"),
            headers={"content-type": "application/json"},
        ),
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert outcome.reason == f"The answer to tools/list {TOO_DEEP}"
    assert fake.methods()[-1] == "DELETE"
    assert outcome.server.name == "acme-tools"


def test_a_deep_event_in_a_stream_fails_and_the_session_is_still_deleted(mock):
    def stream(request: httpx.Request) -> httpx.Response:
        body = sse_event(rpc_text(json.loads(request.content)["id"], nested(DEEP)))
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    fake = with_tools_list(mock, stream)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert outcome.reason == f"An event in the stream for tools/list {TOO_DEEP}"
    assert fake.methods()[-1] == "DELETE"


@pytest.mark.parametrize("deep_document", ["protected resource", "authorization server"])
def test_deep_sign_in_metadata_is_a_protocol_failure(mock, deep_document):
    issuer = "https://login.example.com"
    mock.post(URL).mock(return_value=httpx.Response(401, headers={"www-authenticate": "Bearer"}))
    prm = {"resource": URL, "authorization_servers": [issuer]}
    deep = httpx.Response(
        200, text='{"issuer":' + nested(DEEP) + "}", headers={"content-type": "application/json"}
    )
    prm_route = mock.get("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
    as_route = mock.get(f"{issuer}/.well-known/oauth-authorization-server")
    if deep_document == "protected resource":
        prm_route.mock(return_value=deep)
    else:
        prm_route.respond(json=prm)
        as_route.mock(return_value=deep)
    host = "mcp.example.com" if deep_document == "protected resource" else "login.example.com"
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert outcome.reason == f"The sign-in metadata from {host} {TOO_DEEP}"


def test_a_deep_answer_in_a_batch_is_that_checks_failure_not_a_crash(mock):
    body = rpc_text(1, nested(DEEP))
    mock.post(URL).mock(
        return_value=httpx.Response(200, text=body, headers={"content-type": "application/json"})
    )
    results = asyncio.run(run_batch([("deep", mcp())], ProbeEnv()))
    outcome = dict(results)["deep"]
    assert outcome.kind is FailureKind.PROTOCOL
    assert "our bug" not in outcome.reason


# --- tool lists ------------------------------------------------------------------------------


def test_more_tools_than_the_cap_across_pages_is_too_large_and_the_session_is_deleted(server):
    server.pages = [[{"name": f"t{page}_{i}"} for i in range(4_000)] for page in range(3)]
    outcome = run(mcp())
    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.TOO_LARGE
    assert (
        outcome.reason == "The server lists more than 10,000 tools, the most a check reads (12,000 by page 3)"
    )
    assert outcome.tools == ()
    assert server.methods()[-1] == "DELETE"


def test_exactly_the_tool_cap_is_read(server):
    server.pages = [[{"name": f"t{page}_{i}"} for i in range(MAX_TOOLS // 2)] for page in range(2)]
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_count == MAX_TOOLS


def test_pages_larger_together_than_the_byte_cap_are_too_large(server):
    # Each page (one tool with a 3 MiB description) is under the 5 MiB cap of one answer.
    description = "x" * (3 * 1024 * 1024)
    server.pages = [[{"name": f"t{page}", "description": description}] for page in range(4)]
    assert 3 * len(description) < MAX_TOOLS_LIST_BYTES < 4 * len(description)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.TOO_LARGE
    assert outcome.reason == (
        "The tools/list answers are larger than the 10 MiB cap for all pages together (reached on page 4)"
    )
    assert server.methods()[-1] == "DELETE"


def test_many_duplicate_names_make_a_few_warnings_not_thousands(server):
    server.tools = [tool("same")] * 2_000
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_count == 1
    assert outcome.warnings == (
        "tools/list lists same twice",
        "tools/list lists 1996 more tool names more than once",
    )


def test_a_parse_that_runs_past_the_deadline_is_a_timeout_not_up(server, monkeypatch):
    real = jsonrpc.read_json

    def slow(data: bytes | str) -> Any:
        value = real(data)
        if b"inputSchema" in data:
            time.sleep(1.2)  # CPU-bound work: the event loop gets no turn to fire the deadline
        return value

    monkeypatch.setattr(jsonrpc, "read_json", slow)
    outcome = run(mcp(timeout=1))
    assert outcome.kind is FailureKind.TIMEOUT
    assert outcome.reason == "No complete answer within 1 s (during tools/list)"


def test_three_pages_of_280000_tools_on_a_real_socket_end_too_large_within_the_deadline():
    # The attack as found: each page under the 5 MiB cap of one answer, 840,000 tools in all.
    page = json.dumps({"tools": [{"name": f"{i:x}"} for i in range(280_000)]}, separators=(",", ":"))
    assert len(page) < 5 * 1024 * 1024
    methods: list[str] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                method, _headers, body = await read_request(reader)
                if method == "DELETE":
                    methods.append("DELETE")
                    writer.write(http_response(200))
                    continue
                message = json.loads(body)
                methods.append(message["method"])
                if "id" not in message:
                    writer.write(http_response(202))
                    continue
                if message["method"] == "initialize":
                    result = json.dumps(INIT)
                else:
                    cursor = int((message.get("params") or {}).get("cursor", "0"))
                    result = page[:-1] + (f',"nextCursor":"{cursor + 1}"}}' if cursor < 2 else "}")
                out = rpc_text(message["id"], result).encode()
                headers = {"content-type": "application/json", "mcp-session-id": "s-280k"}
                writer.write(http_response(200, out, headers))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        async with loopback(handler) as port:
            started = time.perf_counter()
            config = McpConfig(uri=f"http://127.0.0.1:{port}/mcp", timeout=10)
            outcome = await run_check(config, ProbeEnv(allow_private=True))
            return outcome, time.perf_counter() - started

    outcome, elapsed = asyncio.run(main())
    assert outcome.kind is FailureKind.TOO_LARGE
    assert (
        outcome.reason
        == "The server lists more than 10,000 tools, the most a check reads (280,000 by page 1)"
    )
    assert methods == ["initialize", "notifications/initialized", "tools/list", "DELETE"]
    # Found taking 24 s with a 10 s timeout; a hang guard only, as machines are noisy.
    assert elapsed < 8
