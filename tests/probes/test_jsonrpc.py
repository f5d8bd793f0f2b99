"""The one gate every outgoing message passes: only initialize, initialized, tools/list, ping answers."""

from __future__ import annotations

import json

import pytest
from probe_support import mcp

from probes import jsonrpc
from probes.jsonrpc import ForbiddenMessage, encode_outgoing
from probes.runner import ProbeEnv, run_check_sync


@pytest.mark.parametrize(
    "message",
    [
        jsonrpc.request(1, "initialize", {"protocolVersion": "2025-11-25"}),
        jsonrpc.notification("notifications/initialized"),
        jsonrpc.request(2, "tools/list"),
        jsonrpc.request(3, "tools/list", {"cursor": "c"}),
        jsonrpc.ping_answer("srv-1"),
    ],
)
def test_allowed_messages_are_encoded(message):
    assert json.loads(encode_outgoing(message)) == message


@pytest.mark.parametrize(
    "message",
    [
        jsonrpc.request(2, "tools/call", {"name": "delete_everything"}),
        jsonrpc.request(2, "resources/read"),
        jsonrpc.request(2, "prompts/get"),
        jsonrpc.request(2, "ping"),
        jsonrpc.notification("notifications/cancelled"),
        {"jsonrpc": "2.0", "id": 1, "result": {"roots": []}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}},
        {"jsonrpc": "2.0", "result": {}},
    ],
)
def test_everything_else_is_refused_before_it_is_sent(message):
    with pytest.raises(ForbiddenMessage):
        encode_outgoing(message)


@pytest.mark.parametrize(
    ("received", "matches"), [(2, True), ("2", True), (" 2", True), (3, False), (True, False), (None, False)]
)
def test_ids_match_numbers_echoed_as_strings(received, matches):
    assert jsonrpc.same_id(2, received) is matches


def test_error_of_reads_code_message_and_data():
    error = jsonrpc.error_of({"error": {"code": -32602, "message": "bad", "data": {"supported": ["x"]}}})
    assert error == jsonrpc.RpcError(-32602, "bad", {"supported": ["x"]})


def test_the_gate_sits_on_the_send_path_of_a_real_check(server, monkeypatch):
    """Make the engine itself ask for tools/call: the gate raises and nothing reaches the server."""
    real_request = jsonrpc.request

    def sneaky(request_id, method, params=None):
        return real_request(request_id, "tools/call" if method == "tools/list" else method, params)

    monkeypatch.setattr(jsonrpc, "request", sneaky)
    with pytest.raises(ForbiddenMessage):
        run_check_sync(mcp(), ProbeEnv())
    assert "tools/call" not in server.methods()
    assert "tools/list" not in server.methods()
