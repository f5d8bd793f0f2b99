"""Every row of the failure table, each from the smallest server behaviour that causes it (respx)."""

from __future__ import annotations

import socket

import httpx
import pytest
from probe_support import URL, FakeMcp, mcp, rpc_error, run, sse_event

from probes.types import FailureKind, Status

HTML = "<html><head><title>Sign in - Acme</title></head><body>Please sign in</body></html>"
KEY = (("Authorization", "Bearer k-123456"),)


def no_legacy(mock, status: int = 405) -> None:
    mock.get(URL).mock(return_value=httpx.Response(status))


@pytest.mark.parametrize("status", [404, 405])
def test_404_or_405_without_a_legacy_server_is_no_endpoint(mock, status):
    mock.post(URL).mock(return_value=httpx.Response(status))
    no_legacy(mock, 404)
    outcome = run(mcp())
    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.NO_ENDPOINT
    assert outcome.reason == "No MCP endpoint at this URL (it often ends in /mcp)"
    assert outcome.http_status == status


def test_html_page_is_not_mcp(mock):
    mock.post(URL).mock(return_value=httpx.Response(200, html=HTML))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.NOT_MCP
    assert outcome.reason.startswith("Not an MCP endpoint")
    assert "HTML" in outcome.reason


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text="OK", headers={"content-type": "text/plain"}),
        httpx.Response(200, json={"status": "ok"}),
        httpx.Response(200, content=b"\x00\x01", headers={"content-type": "application/octet-stream"}),
    ],
)
def test_other_non_json_rpc_answers_are_not_mcp(mock, response):
    mock.post(URL).mock(return_value=response)
    assert run(mcp()).kind is FailureKind.NOT_MCP


def test_jsonrpc_error_on_initialize_names_message_and_code(mock):
    mock.post(URL).mock(return_value=httpx.Response(200, json=rpc_error(-32603, "Internal error", 1)))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.JSONRPC_ERROR
    assert outcome.reason == "initialize failed: Internal error (code -32603)"


def test_keyless_401_without_any_sign_in_metadata_is_credentials_required(mock):
    mock.post(URL).mock(return_value=httpx.Response(401))
    mock.get(url__startswith="https://mcp.example.com/.well-known/").mock(return_value=httpx.Response(404))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.CREDENTIALS_REQUIRED
    assert outcome.access is None
    assert outcome.reason.startswith(
        "The server asks for credentials (HTTP 401) and publishes no OAuth sign-in"
    )


def test_keyless_401_whose_named_metadata_is_missing_is_signin_not_discoverable(mock):
    mock.post(URL).mock(
        return_value=httpx.Response(
            401, headers={"www-authenticate": 'Bearer resource_metadata="https://mcp.example.com/prm"'}
        )
    )
    mock.get(url__startswith="https://mcp.example.com/").mock(return_value=httpx.Response(404))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert outcome.reason.startswith("Sign-in isn't discoverable: no protected resource metadata")


@pytest.mark.parametrize("status", [401, 403])
def test_401_or_403_with_a_key_is_key_refused(mock, status):
    mock.post(URL).mock(return_value=httpx.Response(status))
    outcome = run(mcp(headers=KEY))
    assert outcome.kind is FailureKind.KEY_REFUSED
    assert outcome.reason == f"The server refused the key (HTTP {status})"


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (httpx.Response(503, text="Service Unavailable"), "HTTP 503 on initialize: Service Unavailable"),
        (httpx.Response(502, html=HTML), "HTTP 502 on initialize: Sign in - Acme"),
        (
            httpx.Response(406, json=rpc_error(-32000, "Not Acceptable: Client must accept both")),
            "HTTP 406 on initialize: Not Acceptable: Client must accept both (-32000)",
        ),
        (httpx.Response(415, text="bad\x00 type\n\n here"), "HTTP 415 on initialize: bad type here"),
    ],
)
def test_other_statuses_are_http_status_with_the_servers_message(mock, response, reason):
    mock.post(URL).mock(return_value=response)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.HTTP_STATUS
    assert outcome.reason == reason
    assert outcome.http_status == response.status_code


def test_long_server_messages_are_cut(mock):
    mock.post(URL).mock(return_value=httpx.Response(500, text="x" * 5000))
    assert len(run(mcp()).reason) < 260


def test_keyless_403_is_http_status_not_key_refused(mock):
    mock.post(URL).mock(return_value=httpx.Response(403))
    assert run(mcp()).kind is FailureKind.HTTP_STATUS


def test_400_without_a_legacy_server_is_http_status(mock):
    mock.post(URL).mock(return_value=httpx.Response(400, json=rpc_error(-32600, "Bad Request: bad body")))
    no_legacy(mock)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.HTTP_STATUS
    assert "Bad Request: bad body" in outcome.reason


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "not valid JSON"),
        (b"", "empty"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": []}', "no result object"),
        (b'{"jsonrpc": "2.0", "id": 77, "result": {}}', "no response with id 1"),
    ],
)
def test_malformed_json_rpc_is_a_protocol_failure(mock, body, words):
    mock.post(URL).mock(
        return_value=httpx.Response(200, content=body, headers={"content-type": "application/json"})
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert words in outcome.reason


def test_202_to_initialize_is_a_protocol_failure(mock):
    mock.post(URL).mock(return_value=httpx.Response(202))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert "without answering" in outcome.reason


def test_a_huge_declared_body_is_too_large_before_reading_it(mock):
    body = b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"a" * (5 * 1024 * 1024) + b'"}}'
    mock.post(URL).mock(
        return_value=httpx.Response(200, content=body, headers={"content-type": "application/json"})
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.TOO_LARGE
    assert outcome.reason == "The answer is larger than the 5 MiB cap"


def test_a_huge_streamed_body_without_length_is_too_large(mock):
    async def chunks():
        for _ in range(6 * 16):
            yield b"a" * 65536

    mock.post(URL).mock(
        return_value=httpx.Response(200, content=chunks(), headers={"content-type": "text/event-stream"})
    )
    assert run(mcp()).kind is FailureKind.TOO_LARGE


def test_dns_failure_names_the_host(mock, dns):
    dns["mcp.example.com"] = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    outcome = run(mcp())
    assert outcome.kind is FailureKind.DNS
    assert outcome.reason == "DNS lookup of mcp.example.com failed: Name or service not known"


def test_name_resolving_to_a_private_address_is_blocked(mock, dns):
    dns["mcp.example.com"] = ["10.1.2.3"]
    outcome = run(mcp())
    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert outcome.reason.startswith("mcp.example.com resolves to 10.1.2.3, a private address")
    assert not mock.calls


def test_stateless_2026_server_is_not_supported_yet_and_no_legacy_probe(mock):
    mock.post(URL).mock(
        return_value=httpx.Response(400, json=rpc_error(-32020, "Header mismatch: Mcp-Method"))
    )
    legacy = mock.get(URL).mock(return_value=httpx.Response(405))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert "2026-07-28" in outcome.reason
    assert "not supported yet" in outcome.reason
    assert not legacy.called


def test_2026_server_named_by_its_supported_versions_is_detected(mock):
    error = rpc_error(-32602, "Unsupported protocol version", data={"supported": ["2026-07-28"]})
    mock.post(URL).mock(return_value=httpx.Response(400, json=error))
    assert "2026-07-28" in run(mcp()).reason


@pytest.mark.parametrize("status", [200, 400, 404])
def test_method_not_found_as_the_answer_to_initialize_is_a_2026_only_server(mock, status):
    """2026-07-28 removed initialize: its servers answer it as an unknown method (-32601)."""
    init = mock.post(URL).mock(
        return_value=httpx.Response(status, json=rpc_error(-32601, "Method not found: initialize", 1))
    )
    legacy = mock.get(URL).mock(return_value=httpx.Response(405))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert outcome.reason.startswith(
        "The server speaks only the 2026-07-28 stateless revision of MCP, not supported yet"
    )
    assert "Method not found: initialize, code -32601" in outcome.reason
    assert outcome.http_status == (None if status == 200 else status)
    assert init.call_count == 1
    assert not legacy.called


def test_method_not_found_in_an_event_stream_answer_to_initialize(mock):
    body = sse_event(rpc_error(-32601, "Method not found", 1))
    mock.post(URL).mock(
        return_value=httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert "2026-07-28" in outcome.reason


@pytest.mark.parametrize(
    ("code", "message"),
    [
        pytest.param(-32603, "database down", id="names message and code"),
        # Unlike on initialize, "Method not found" on tools/list is no sign of a 2026-only server.
        pytest.param(-32601, "Method not found", id="method not found stays a jsonrpc error"),
    ],
)
def test_jsonrpc_error_on_tools_list(mock, code, message):
    fake = FakeMcp()
    mock.route(url=URL).mock(
        side_effect=lambda r: (
            httpx.Response(200, json=rpc_error(code, message, 2)) if b"tools/list" in r.content else fake(r)
        )
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.JSONRPC_ERROR
    assert outcome.reason == f"tools/list failed: {message} (code {code})"
