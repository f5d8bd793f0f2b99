"""Check npm @modelcontextprotocol/server-everything (the TypeScript SDK's reference server).

It differs from the Python SDK where a check can trip: every SSE answer starts with an event
whose data is empty, every event has an id, an unknown session gets 400 instead of 404, and on
the legacy transport it pushes unrequested notifications between answers.
"""

from __future__ import annotations

import json

import pytest

from probes.types import Access, FailureKind, Status, Transport

pytestmark = pytest.mark.peers


def test_streamable_http_mode_is_up_with_its_tools(peers, mcp_check):
    outcome = mcp_check(peers.everything("streamableHttp") + "/mcp", requiredTools=["echo"])

    assert outcome.status is Status.UP, f"{outcome.kind}: {outcome.reason}"
    assert outcome.transport is Transport.STREAMABLE_HTTP
    assert outcome.protocol == "2025-11-25"
    assert outcome.access is Access.OPEN
    assert outcome.server is not None
    assert outcome.server.name == "mcp-servers/everything"
    assert outcome.tool_count is not None
    assert outcome.tool_count >= 10
    assert "echo" in outcome.tool_names


def test_sse_mode_is_up_over_the_legacy_transport(peers, mcp_check):
    outcome = mcp_check(peers.everything("sse") + "/sse", requiredTools=["echo"])

    assert outcome.status is Status.UP, f"{outcome.kind}: {outcome.reason}"
    assert outcome.transport is Transport.SSE
    assert outcome.server is not None
    assert outcome.server.name == "mcp-servers/everything"
    assert "echo" in outcome.tool_names


def test_both_modes_list_the_same_tools(peers, mcp_check):
    streamable = mcp_check(peers.everything("streamableHttp") + "/mcp")
    legacy = mcp_check(peers.everything("sse") + "/sse")

    assert sorted(streamable.tool_names) == sorted(legacy.tool_names)
    assert streamable.tool_digest == legacy.tool_digest


def test_express_404_page_is_no_endpoint(peers, mcp_check):
    # Express answers "Cannot POST /nope" as an HTML 404, and the GET probe gets the same.
    outcome = mcp_check(peers.everything("streamableHttp") + "/nope")

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.NO_ENDPOINT


def test_missing_required_tool_on_everything_is_down(peers, mcp_check):
    outcome = mcp_check(peers.everything("streamableHttp") + "/mcp", requiredTools=["echo", "launch_rockets"])

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.MISSING_TOOLS
    assert outcome.missing_tools == ("launch_rockets",)


def test_each_tools_description_schema_and_hints_are_kept(peers, mcp_check):
    outcome = mcp_check(peers.everything("streamableHttp") + "/mcp")

    echo = next(tool for tool in outcome.tools if tool.name == "echo")
    assert echo.description == "Echoes back the input string"
    schema = json.loads(echo.input_schema or "")
    assert schema["type"] == "object"
    assert schema["properties"]["message"] == {"type": "string", "description": "Message to echo"}
    assert (echo.read_only_hint, echo.destructive_hint) == (True, False)
    # Every tool of the reference server declares both hints as booleans, and an object schema.
    assert all(isinstance(tool.read_only_hint, bool) for tool in outcome.tools)
    assert all(json.loads(tool.input_schema or "")["type"] == "object" for tool in outcome.tools)


def test_both_modes_keep_the_same_tool_details(peers, mcp_check):
    streamable = mcp_check(peers.everything("streamableHttp") + "/mcp")
    legacy = mcp_check(peers.everything("sse") + "/sse")

    assert streamable.tool_details_digest == legacy.tool_details_digest
