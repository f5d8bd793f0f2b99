"""One MCP check over Streamable HTTP (respx): the session, the answers, the tool list."""

from __future__ import annotations

import json

import httpx
import pytest
from probe_support import URL, FakeMcp, mcp, run, sse_event, tool

from probes.mcp import tool_digest
from probes.types import Access, FailureKind, Status, ToolInfo, Transport


def test_open_server_is_up_with_its_tools(server):
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.kind is None
    assert outcome.access is Access.OPEN
    assert outcome.transport is Transport.STREAMABLE_HTTP
    assert outcome.protocol == "2025-11-25"
    assert (outcome.server.name, outcome.server.version) == ("acme-tools", "3.2.0")
    assert [(tool.name, tool.required_inputs) for tool in outcome.tools] == [
        ("search", ("q",)),
        ("fetch", ("url",)),
    ]
    assert outcome.tool_count == 2


def test_check_sends_initialize_initialized_tools_list_then_delete(server):
    run(mcp())
    assert server.methods() == ["initialize", "notifications/initialized", "tools/list", "DELETE"]


def test_initialize_asks_for_2025_11_25_with_empty_capabilities(server):
    run(mcp())
    params = json.loads(server.requests[0].content)["params"]
    assert params["protocolVersion"] == "2025-11-25"
    assert params["capabilities"] == {}
    assert params["clientInfo"]["name"] == "uptimy"


def test_every_post_accepts_json_and_event_streams_and_sends_no_origin(server):
    run(mcp())
    for request in server.requests:
        if request.method == "POST":
            assert request.headers["accept"] == "application/json, text/event-stream"
            assert request.headers["content-type"] == "application/json"
        assert "origin" not in request.headers


def test_user_agent_names_uptimy_and_what_it_sends(server):
    run(mcp())
    agent = server.requests[0].headers["user-agent"]
    assert agent.startswith("Uptimy/0.1.0")
    assert "initialize and tools/list" in agent


def test_session_and_version_headers_go_on_every_request_after_initialize(server):
    run(mcp())
    first, *later = server.requests
    assert "mcp-session-id" not in first.headers
    assert "mcp-protocol-version" not in first.headers
    for request in later:
        assert request.headers["mcp-session-id"] == "sess-7c1e"
        assert request.headers["mcp-protocol-version"] == "2025-11-25"


def test_server_requiring_the_session_on_every_request_is_up(server):
    server.require_session = True
    assert run(mcp()).status is Status.UP


def test_server_requiring_the_protocol_version_header_is_up(server):
    server.require_version = True
    server.protocol = "2025-06-18"
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.protocol == "2025-06-18"


def test_no_session_assigned_means_no_delete(server):
    server.session = None
    run(mcp())
    assert "DELETE" not in server.methods()


@pytest.mark.parametrize("status", [404, 405, 500])
def test_delete_answer_never_decides_the_result(server, status):
    server.delete_status = status
    assert run(mcp()).status is Status.UP


def test_configured_headers_are_sent_on_every_request(server):
    run(mcp(headers=(("Authorization", "Bearer k-123456"),)))
    assert all(request.headers["authorization"] == "Bearer k-123456" for request in server.requests)


def test_key_accepted_means_access_key(server):
    assert run(mcp(headers=(("X-Api-Key", "k-123456"),))).access is Access.KEY


# --- versions --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_each_known_version_the_server_answers_is_accepted(server, version):
    server.protocol = version
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.protocol == version


def test_an_unknown_answered_version_is_a_protocol_failure(server):
    server.protocol = "2023-01-01"
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert "2023-01-01" in outcome.reason


@pytest.mark.parametrize(
    ("rejected", "supported", "asked", "chosen"),
    [
        (("2025-11-25",), None, ["2025-11-25", "2025-06-18"], "2025-06-18"),
        (
            ("2025-11-25", "2025-06-18", "2025-03-26"),
            None,
            ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            "2024-11-05",
        ),
        (("2025-11-25",), ["2024-11-05"], ["2025-11-25", "2024-11-05"], "2024-11-05"),
    ],
)
def test_version_rejected_with_an_error_retries_older_versions_in_new_sessions(
    server, rejected, supported, asked, chosen
):
    server.reject_versions = rejected
    server.reject_with_supported = supported
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.protocol == chosen
    inits = [json.loads(r.content) for r in server.requests if r.content and b'"initialize"' in r.content]
    assert [m["params"]["protocolVersion"] for m in inits] == asked


def test_session_id_on_an_error_response_is_never_adopted(server):
    server.reject_versions = ("2025-11-25",)
    run(mcp())
    assert all(request.headers.get("mcp-session-id") != "from-an-error" for request in server.requests)
    assert all(
        "mcp-session-id" not in r.headers for r in server.requests if b'"initialize"' in (r.content or b"")
    )


def test_every_version_rejected_is_a_jsonrpc_error(server):
    server.reject_versions = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    outcome = run(mcp())
    assert outcome.kind is FailureKind.JSONRPC_ERROR
    assert "-32602" in outcome.reason


def test_no_common_version_in_supported_list_is_a_jsonrpc_error(server):
    server.reject_versions = ("2025-11-25",)
    server.reject_with_supported = ["2099-01-01"]
    assert run(mcp()).kind is FailureKind.JSONRPC_ERROR


# --- event streams ---------------------------------------------------------------------------


def test_event_stream_answers_are_read(server):
    server.sse = True
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_count == 2


def test_priming_comments_notifications_and_foreign_ids_before_the_answer_are_skipped(server):
    server.sse = True
    server.prelude = [
        "id: ev-0\nretry: 2000\ndata:\n\n",
        ": keep-alive\n\n",
        sse_event(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
        ),
        sse_event({"jsonrpc": "2.0", "id": 999, "result": {}}),
        sse_event(
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, event="message", event_id="ev-2"
        ),
    ]
    assert run(mcp()).status is Status.UP


def test_server_ping_inside_the_stream_is_answered_with_an_empty_result(server):
    server.sse = True
    server.prelude = [sse_event({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})]
    assert run(mcp()).status is Status.UP
    answers = [json.loads(r.content) for r in server.requests if r.content and b'"ping-1"' in r.content]
    assert answers
    assert all(answer == {"jsonrpc": "2.0", "id": "ping-1", "result": {}} for answer in answers)


def test_multi_line_data_is_joined_before_parsing(server):
    server.sse = True
    server.prelude = ['data: {"jsonrpc": "2.0",\ndata: "method": "notifications/message"}\n\n']
    assert run(mcp()).status is Status.UP


def test_stream_that_ends_without_the_answer_fails_at_once(mock):
    body = "data:\n\n" + sse_event({"jsonrpc": "2.0", "method": "notifications/message"})
    mock.post(URL).mock(
        return_value=httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert "ended without the answer to initialize" in outcome.reason
    assert outcome.timings.total_ms < 1000


def test_stream_with_too_many_events_is_a_protocol_failure(mock):
    body = ": x\n\n" + sse_event({"jsonrpc": "2.0", "method": "notifications/message"}) * 1001
    mock.post(URL).mock(
        return_value=httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert "1000 events" in outcome.reason


def test_media_types_are_matched_without_case_or_parameters(mock, server):
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "a", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": init})
    mock.post(URL).mock(
        return_value=httpx.Response(
            200, text=body, headers={"content-type": "Application/JSON; charset=UTF-8"}
        )
    )
    assert run(mcp()).status is Status.UP


def test_a_batch_array_answer_is_searched_for_our_id(mock):
    init = {"protocolVersion": "2025-03-26", "capabilities": {}, "serverInfo": {"name": "a", "version": "1"}}
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/message"},
        {"jsonrpc": "2.0", "id": 1, "result": init},
    ]
    mock.post(URL).mock(
        side_effect=lambda r: (
            httpx.Response(200, json=batch) if b"initialize" in r.content else httpx.Response(202)
        )
    )
    assert run(mcp()).status is Status.UP


def test_an_id_echoed_as_a_string_is_accepted_with_a_warning(mock):
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "a", "version": "1"}}
    body = sse_event({"jsonrpc": "2.0", "id": "1", "result": init})
    mock.post(URL).mock(
        side_effect=lambda r: (
            httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
            if b"initialize" in r.content
            else httpx.Response(202)
        )
    )
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert any("string" in warning for warning in outcome.warnings)


# --- tools/list ------------------------------------------------------------------------------


def test_no_tools_capability_means_zero_tools_and_no_tools_list(server):
    server.capabilities = {"logging": {}}
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_count == 0
    assert "tools/list" not in server.methods()


def test_pages_are_followed_by_next_cursor(server):
    server.pages = [[tool("a")], [tool("b")], [tool("c")]]
    outcome = run(mcp())
    assert outcome.tool_names == ("a", "b", "c")
    cursors = [
        json.loads(r.content).get("params") for r in server.requests if b"tools/list" in (r.content or b"")
    ]
    assert cursors == [None, {"cursor": "p1"}, {"cursor": "p2"}]


def test_a_repeated_cursor_ends_the_list_with_a_warning(server):
    server.pages = [[tool("a")], [tool("b")]]
    server.cursors = ["p1", "p1"]
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_names == ("a", "b")
    assert any("loops" in warning for warning in outcome.warnings)


def test_an_empty_cursor_ends_the_list_with_a_warning(server):
    server.pages = [[tool("a")], [tool("b")]]
    server.cursors = ["", None]
    outcome = run(mcp())
    assert outcome.tool_names == ("a",)
    assert any("empty nextCursor" in warning for warning in outcome.warnings)


def test_eleven_pages_stop_after_ten_with_a_warning(server):
    server.pages = [[tool(f"t{i}")] for i in range(11)]
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_count == 10
    assert server.methods().count("tools/list") == 10
    assert any("more than 10 pages" in warning for warning in outcome.warnings)


def test_duplicate_and_nameless_tools_are_warnings_not_failures(server):
    server.tools = [tool("a"), tool("a"), {"description": "no name"}]
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_names == ("a",)
    assert len(outcome.warnings) == 2


def test_required_tools_that_are_missing_are_named(server):
    outcome = run(mcp(required_tools=("search", "delete_all", "export")))
    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.MISSING_TOOLS
    assert outcome.missing_tools == ("delete_all", "export")
    assert outcome.reason == "Missing tools: delete_all, export"


def test_fewer_tools_than_the_minimum_is_too_few_tools(server):
    outcome = run(mcp(min_tools=5))
    assert outcome.kind is FailureKind.TOO_FEW_TOOLS
    assert outcome.reason == "2 tools listed; at least 5 required"


def test_missing_tools_is_reported_before_too_few(server):
    assert run(mcp(required_tools=("nope",), min_tools=5)).kind is FailureKind.MISSING_TOOLS


def test_tool_digest_ignores_order_and_sees_a_removed_tool():
    a, b = ToolInfo("a", ("x",)), ToolInfo("b")
    assert tool_digest([a, b]) == tool_digest([b, a])
    assert tool_digest([a, b]) != tool_digest([a])
    assert tool_digest([a]) != tool_digest([ToolInfo("a", ("y",))])


def test_outcome_carries_the_digest_of_its_tools(server):
    outcome = run(mcp())
    assert outcome.tool_digest == tool_digest(outcome.tools)


# --- redirects -------------------------------------------------------------------------------


def test_same_origin_307_is_followed_and_kept_for_the_session(mock):
    fake = FakeMcp()
    mock.post(URL).mock(return_value=httpx.Response(307, headers={"location": "/mcp/"}))
    mock.route(url=URL + "/").mock(side_effect=fake)
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert fake.methods() == ["initialize", "notifications/initialized", "tools/list", "DELETE"]


@pytest.mark.parametrize(
    ("location", "words"),
    [
        ("https://evil.example/mcp", "another host refused: https://evil.example/mcp"),
        ("http://mcp.example.com/mcp", "from https to http refused: http://mcp.example.com/mcp"),
    ],
)
def test_cross_host_or_downgrade_redirect_is_refused_naming_the_target(mock, location, words):
    mock.post(URL).mock(return_value=httpx.Response(308, headers={"location": location}))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.REDIRECT_REFUSED
    assert words in outcome.reason


KEY = (("Authorization", "Bearer sk-live-4f9a8b7c6d5e"),)


@pytest.mark.parametrize(
    "location", ["https://mcp.example.com:8443/mcp", "http://mcp.example.com:443/mcp"], ids=["port", "scheme"]
)
def test_a_check_with_headers_refuses_a_redirect_to_another_origin_of_its_host(mock, location):
    mock.post(URL).mock(return_value=httpx.Response(307, headers={"location": location}))
    elsewhere = mock.route(url=location).mock(side_effect=FakeMcp())

    outcome = run(mcp(headers=KEY))

    assert outcome.kind is FailureKind.REDIRECT_REFUSED
    assert "refused" in outcome.reason
    assert not elsewhere.called


def test_a_check_with_headers_follows_a_redirect_within_its_origin(mock):
    mock.post(URL).mock(
        return_value=httpx.Response(307, headers={"location": "https://mcp.example.com:443/mcp/"})
    )
    mock.route(url=URL + "/").mock(side_effect=FakeMcp())

    assert run(mcp(headers=KEY)).status is Status.UP


def test_a_keyless_check_follows_a_redirect_to_another_port_of_its_host(mock):
    other_port = "https://mcp.example.com:8443/v2/mcp"
    mock.post(URL).mock(return_value=httpx.Response(307, headers={"location": other_port}))
    mock.route(url=other_port).mock(side_effect=FakeMcp())

    assert run(mcp()).status is Status.UP


def test_a_302_on_post_is_refused_because_it_would_become_a_get(mock):
    mock.post(URL).mock(return_value=httpx.Response(302, headers={"location": "/other"}))
    assert run(mcp()).kind is FailureKind.REDIRECT_REFUSED


def test_more_than_three_redirects_are_refused(mock):
    for hop in range(5):
        mock.post(f"https://mcp.example.com/r{hop}").mock(
            return_value=httpx.Response(307, headers={"location": f"/r{hop + 1}"})
        )
    mock.post(URL).mock(return_value=httpx.Response(307, headers={"location": "/r0"}))
    outcome = run(mcp())
    assert outcome.kind is FailureKind.REDIRECT_REFUSED
    assert "more than 3 redirects" in outcome.reason


# --- 401 after initialize --------------------------------------------------------------------


def test_keyless_401_on_tools_list_runs_sign_in_discovery(server, mock):
    server.tools_list_status = 401
    mock.get("https://mcp.example.com/.well-known/oauth-protected-resource/mcp").respond(
        json={"resource": URL, "authorization_servers": ["https://login.example.com"]}
    )
    mock.get("https://login.example.com/.well-known/oauth-authorization-server").respond(
        json={
            "issuer": "https://login.example.com",
            "authorization_endpoint": "https://login.example.com/authorize",
            "token_endpoint": "https://login.example.com/token",
        }
    )
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == "https://login.example.com"
    assert outcome.server.name == "acme-tools"


def test_401_on_tools_list_with_a_key_is_key_refused(server):
    server.tools_list_status = 401
    outcome = run(mcp(headers=(("Authorization", "Bearer k-123456"),)))
    assert outcome.kind is FailureKind.KEY_REFUSED


# --- a session the server ends ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["notifications/initialized", "tools/list"])
def test_a_404_on_the_session_starts_one_new_session(server, method):
    server.expire_session_on = method
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.tool_count == 2
    methods = server.methods()
    first = methods.index(method) + 1
    assert methods[:first].count("initialize") == 1
    assert methods[first:] == ["initialize", "notifications/initialized", "tools/list", "DELETE"]
    restart, delete = server.requests[first], server.requests[-1]
    assert "mcp-session-id" not in restart.headers
    assert delete.headers["mcp-session-id"] == server.session != "sess-7c1e"
    assert any("ended the session (HTTP 404 on " + method in warning for warning in outcome.warnings)


def test_a_server_that_ends_every_session_fails_after_one_new_session(server):
    server.expire_session_on = "tools/list"
    server.expire_every_session = True
    outcome = run(mcp())
    assert outcome.kind is FailureKind.HTTP_STATUS
    assert outcome.http_status == 404
    assert outcome.reason == "HTTP 404 on tools/list: Session not found (-32001)"
    assert server.methods().count("initialize") == 2


def test_a_404_without_a_session_is_not_a_reason_for_a_new_one(server):
    server.session = None
    server.tools_list_status = 404
    outcome = run(mcp())
    assert outcome.kind is FailureKind.HTTP_STATUS
    assert outcome.http_status == 404
    assert server.methods().count("initialize") == 1


def test_a_2026_version_in_the_initialize_result_is_not_supported_yet(server):
    server.protocol = "2026-07-28"
    outcome = run(mcp())
    assert outcome.kind is FailureKind.PROTOCOL
    assert "2026-07-28" in outcome.reason
    assert "not supported yet" in outcome.reason
