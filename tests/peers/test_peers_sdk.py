"""Check the official Python SDK's servers (PyPI ``mcp`` 2.x) with Uptimy's MCP check.

The servers come from tests/peers/servers/sdk_servers.py; each records what it received, so
besides the verdict these tests prove what the check sent: only initialize,
notifications/initialized and tools/list (never tools/call), the session and protocol-version
headers where they belong, and a DELETE only when a session was assigned.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from probes.types import Access, FailureKind, SigninDiscovery, Status, Transport

pytestmark = pytest.mark.peers

SDK_TOOLS = ("echo", "get_status", "search_docs")
ALLOWED_RPC = {"initialize", "notifications/initialized", "tools/list", "<response>", None}


def assert_up(outcome: Any) -> None:
    assert outcome.status is Status.UP, f"{outcome.kind}: {outcome.reason}"
    assert outcome.kind is None


def assert_polite(log: list[dict[str, Any]]) -> None:
    """Assert the check sent nothing but the three allowed messages, and named itself."""
    assert log, "the server saw no request"
    sent = [entry["rpc"] for entry in log if entry["http"] == "POST"]
    assert set(sent) <= ALLOWED_RPC, f"unexpected JSON-RPC methods: {sent}"
    assert "tools/call" not in sent
    assert all("uptimy" in entry["user_agent"].lower() for entry in log), log


@pytest.fixture
def sdk(peers):
    """Return a function giving an SDK server's base URL with its request log cleared."""

    def url(name: str) -> str:
        peers.clear_sdk_log(name)
        return peers.sdk(name)

    return url


@pytest.mark.parametrize("mode", ["stateful", "json"])
def test_stateful_server_is_up_with_its_tools_and_session_is_ended(peers, sdk, mcp_check, mode):
    outcome = mcp_check(sdk(mode) + "/mcp")

    assert_up(outcome)
    assert outcome.transport is Transport.STREAMABLE_HTTP
    assert outcome.protocol == "2025-11-25"
    assert outcome.access is Access.OPEN
    assert outcome.server is not None
    assert (outcome.server.name, outcome.server.version) == ("sdk-streamable", "2.3.0-peer")
    assert sorted(outcome.tool_names) == list(SDK_TOOLS)
    assert outcome.tool_count == 3
    assert outcome.tool_digest
    assert outcome.timings.total_ms is not None
    assert outcome.timings.ttfb_ms is not None
    log = peers.sdk_log(mode)
    assert_polite(log)
    assert [(e["http"], e["rpc"]) for e in log] == [
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
        ("POST", "tools/list"),
        ("DELETE", None),
    ]
    first, *later = log
    # Never a session id or protocol header on initialize; both on everything after it.
    assert not first["session"]
    assert first["protocol_version"] is None
    assert all(e["session"] for e in later)
    assert all(e["protocol_version"] == "2025-11-25" for e in later)


def test_stateless_server_is_up_without_delete_or_get_stream(peers, sdk, mcp_check):
    outcome = mcp_check(sdk("stateless") + "/mcp")

    assert_up(outcome)
    assert sorted(outcome.tool_names) == list(SDK_TOOLS)
    log = peers.sdk_log("stateless")
    assert_polite(log)
    # No session was assigned, so there is nothing to DELETE; a GET stream here never ends.
    assert [e["http"] for e in log] == ["POST", "POST", "POST"]
    assert not any(e["session"] for e in log)


def test_paginated_tools_list_is_followed_to_the_last_page(peers, sdk, mcp_check):
    outcome = mcp_check(sdk("paginated") + "/mcp", requiredTools=["tool_00", "tool_24"], minTools=25)

    assert_up(outcome)
    assert outcome.tool_count == 25
    assert sorted(outcome.tool_names) == [f"tool_{i:02d}" for i in range(25)]
    by_name = {tool.name: tool for tool in outcome.tools}
    assert by_name["tool_07"].required_inputs == ("n",)
    log = peers.sdk_log("paginated")
    assert_polite(log)
    assert [e["rpc"] for e in log].count("tools/list") == 3


def test_legacy_sse_server_is_checked_over_its_transport(peers, sdk, mcp_check):
    outcome = mcp_check(sdk("legacy") + "/sse")

    assert_up(outcome)
    assert outcome.transport is Transport.SSE
    assert outcome.protocol in {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
    assert outcome.server is not None
    assert outcome.server.name == "sdk-legacy-sse"
    assert sorted(outcome.tool_names) == list(SDK_TOOLS)
    log = peers.sdk_log("legacy")
    assert_polite(log)
    messages = [e["rpc"] for e in log if e["http"] == "POST" and e["path"].startswith("/messages")]
    assert messages[:2] == ["initialize", "notifications/initialized"]
    assert "tools/list" in messages
    assert any(e["http"] == "GET" and e["path"] == "/sse" for e in log)


def test_localhost_name_reaches_a_server_bound_to_127_0_0_1(sdk, mcp_check):
    port = sdk("json").rsplit(":", 1)[1]

    outcome = mcp_check(f"http://localhost:{port}/mcp")

    assert_up(outcome)
    assert outcome.tool_count == 3


def test_required_tool_missing_is_down(peers, sdk, mcp_check):
    outcome = mcp_check(sdk("json") + "/mcp", requiredTools=["search_docs", "delete_everything"])

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.MISSING_TOOLS
    assert outcome.missing_tools == ("delete_everything",)
    assert "delete_everything" in outcome.reason
    assert_polite(peers.sdk_log("json"))


def test_too_few_tools_is_down(sdk, mcp_check):
    outcome = mcp_check(sdk("stateful") + "/mcp", minTools=4)

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.TOO_FEW_TOOLS
    assert "3" in outcome.reason
    assert "4" in outcome.reason


def test_wrong_path_on_an_sdk_server_is_no_endpoint(sdk, mcp_check):
    outcome = mcp_check(sdk("json") + "/not-mcp")

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.NO_ENDPOINT


def test_post_to_the_legacy_message_path_is_not_mistaken_for_mcp(sdk, mcp_check):
    # /messages/ without a session answers 400 to a POST and 405 to the GET probe.
    outcome = mcp_check(sdk("legacy") + "/messages/")

    assert outcome.status is Status.DOWN
    assert outcome.kind in {FailureKind.NO_ENDPOINT, FailureKind.HTTP_STATUS}


# --- OAuth: 401 + RFC 9728 metadata + an authorization server built from the SDK's routes ---

OAUTH_CASES = [
    # resource server, authorization server, issuer path
    pytest.param("oauth-root", "as-root", "", id="rfc8414-issuer-without-path"),
    pytest.param("oauth-path", "as-path", "/tenant1", id="rfc8414-issuer-with-path"),
    pytest.param("oauth-oidc", "as-oidc", "/realms/uptimy", id="oidc-only-issuer-with-path"),
    pytest.param("oauth-oidc-root", "as-oidc-root", "", id="oidc-only-issuer-without-path"),
]


@pytest.mark.parametrize(("resource", "auth_server", "issuer_path"), OAUTH_CASES)
def test_keyless_check_finds_discoverable_sign_in(peers, sdk, mcp_check, resource, auth_server, issuer_path):
    peers.clear_sdk_log(auth_server)

    outcome = mcp_check(sdk(resource) + "/mcp")

    assert_up(outcome)
    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == peers.sdk(auth_server) + issuer_path
    assert outcome.signin_discovery is SigninDiscovery.RESOURCE_METADATA
    assert not any("2025-03-26" in warning for warning in outcome.warnings)
    assert outcome.tool_names == ()
    log = peers.sdk_log(resource)
    assert_polite(log)
    assert not any(e["authorization"] for e in log)
    assert [e["rpc"] for e in log if e["http"] == "POST"] == ["initialize"]
    # The check read the metadata and went no further: no register, authorize or token.
    auth_log = peers.sdk_log(auth_server)
    assert auth_log
    assert all(e["http"] == "GET" and "/.well-known/" in e["path"] for e in auth_log)


@pytest.mark.parametrize(("resource", "auth_server", "issuer_path"), OAUTH_CASES[:2])
def test_check_with_a_valid_key_lists_the_tools(peers, sdk, mcp_check, resource, auth_server, issuer_path):
    outcome = mcp_check(sdk(resource) + "/mcp", headers={"Authorization": "Bearer uptimy-peer-token"})

    assert_up(outcome)
    assert outcome.access is Access.KEY
    assert sorted(outcome.tool_names) == list(SDK_TOOLS)
    log = peers.sdk_log(resource)
    assert_polite(log)
    assert all(e["authorization"] for e in log)
    assert [e["http"] for e in log][-1] == "DELETE"


def test_check_with_a_refused_key_is_down(sdk, mcp_check):
    outcome = mcp_check(sdk("oauth-root") + "/mcp", headers={"Authorization": "Bearer not-the-token"})

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.KEY_REFUSED
    assert "not-the-token" not in outcome.reason


def test_issuer_with_a_trailing_slash_quirk_passes_with_a_warning(peers, sdk, mcp_check):
    """PRM names "http://h:p" while the SDK-built AS calls itself "http://h:p/" (AnyHttpUrl).

    RFC 8414 §3.3 wants the issuer identical; a difference of one trailing "/" is the common
    pydantic quirk, which the reference's policy (and the TS SDK) passes with a warning
    rather than calling the sign-in undiscoverable.
    """
    outcome = mcp_check(sdk("oauth-naive") + "/mcp")

    assert_up(outcome)
    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == peers.sdk("as-naive")
    assert any("issuer" in warning.lower() for warning in outcome.warnings), outcome.warnings


# --- OAuth the 2025-03-26 way: no RFC 9728 metadata, the server's origin is the AS ---


def test_keyless_check_of_a_2025_03_26_server_finds_sign_in_through_the_fallback(peers, sdk, mcp_check):
    """The SDK server built with an embedded authorization server and no resource_server_url has no
    protected resource metadata; SDK clients sign in at its origin, so the check is up and says how."""
    outcome = mcp_check(sdk("oauth-legacy") + "/mcp")

    assert_up(outcome)
    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == peers.sdk("oauth-legacy")
    assert outcome.signin_discovery is SigninDiscovery.LEGACY_FALLBACK
    assert outcome.warnings[0].startswith("Sign-in was found only through the 2025-03-26 fallback")
    assert outcome.tool_names == ()
    log = peers.sdk_log("oauth-legacy")
    assert_polite(log)
    assert not any(e["authorization"] for e in log)
    # Both RFC 9728 locations first (404 here), then the origin's RFC 8414 metadata, found at
    # once; nothing after it: no register, authorize or token.
    assert [(e["http"], e["path"]) for e in log] == [
        ("POST", "/mcp"),
        ("GET", "/.well-known/oauth-protected-resource/mcp"),
        ("GET", "/.well-known/oauth-protected-resource"),
        ("GET", "/.well-known/oauth-authorization-server"),
    ]


def test_check_with_a_valid_key_on_a_2025_03_26_server_lists_the_tools(peers, sdk, mcp_check):
    outcome = mcp_check(sdk("oauth-legacy") + "/mcp", headers={"Authorization": "Bearer uptimy-peer-token"})

    assert_up(outcome)
    assert outcome.access is Access.KEY
    assert outcome.signin_discovery is None
    assert sorted(outcome.tool_names) == list(SDK_TOOLS)
    assert_polite(peers.sdk_log("oauth-legacy"))


# --- one connection per check ---


@pytest.mark.parametrize("mode", ["json", "stateful"])
def test_check_uses_one_connection(peers, sdk, mcp_check, mode):
    """Issue 3: each check opens its own connection, and one only (on https, each extra one is
    another TLS handshake). Every JSON answer, the 202 to notifications/initialized included,
    has a known length; in SSE mode the server ends each answer's stream right after the
    response, and the check reads that end to keep the connection."""
    outcome = mcp_check(sdk(mode) + "/mcp")

    assert_up(outcome)
    log = peers.sdk_log(mode)
    assert [e["rpc"] or e["http"] for e in log] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "DELETE",
    ]
    connections = [e["client_port"] for e in log]
    assert len(set(connections)) == 1, (
        f"requests per connection: {[(e['rpc'] or e['http']) for e in log]} on {connections}"
    )


def test_each_tools_description_schema_and_hints_are_kept_as_the_sdk_lists_them(sdk, mcp_check):
    outcome = mcp_check(sdk("stateful") + "/mcp")

    assert_up(outcome)
    tools = {tool.name: tool for tool in outcome.tools}
    search = tools["search_docs"]
    assert search.description == "Full-text search over the docs."
    assert json.loads(search.input_schema or "") == {
        "properties": {"q": {"title": "Q", "type": "string"}},
        "required": ["q"],
        "type": "object",
        "title": "search_docsArguments",
    }
    # ToolAnnotations(read_only_hint=True, open_world_hint=False): no destructiveHint sent.
    assert [(t.name, t.read_only_hint, t.destructive_hint) for t in outcome.tools] == [
        ("search_docs", True, None),
        ("get_status", True, None),
        ("echo", True, None),
    ]
    assert outcome.tool_details_digest
