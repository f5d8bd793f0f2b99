"""Uptimy's /mcp as assistants reach it: the official SDK client against a live `manage.py serve`.

Also what the ASGI switch must keep: the web app, the API, static files and the metrics on the
same host and port.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND

T = TypeVar("T")
TOOLS = {
    "add_monitors",
    "list_monitors",
    "get_monitor",
    "get_incidents",
    "pause_monitor",
    "resume_monitor",
    "run_check",
}
WRITES = {"add_monitors", "pause_monitor", "resume_monitor"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def with_session(url: str, key: str, work: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Connect with the official SDK client (a bearer key on every request), initialize, and run ``work``."""

    async def main() -> T:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return asyncio.run(main())


def call(live, name: str, arguments: dict[str, Any], *, key: str | None = None) -> tuple[bool, Any]:
    """Call one tool through the SDK client; return (is_error, the JSON answer or the error's text)."""

    async def work(session: ClientSession) -> tuple[bool, Any]:
        result = await session.call_tool(name, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        return bool(result.is_error), text if result.is_error else json.loads(text)

    return with_session(live.mcp_url, key or live.key, work)


# --- who may ask ----------------------------------------------------------------------------------


def test_without_a_credential_the_answer_is_401_pointing_at_the_resource_metadata(live_uptimy):
    answer = httpx.post(live_uptimy.mcp_url, json=INIT, headers=ACCEPT)

    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{live_uptimy.base}/.well-known/oauth-protected-resource/mcp"'
    )


def test_an_unknown_key_is_401_invalid_token(live_uptimy):
    answer = httpx.post(
        live_uptimy.mcp_url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer upt_nope"}
    )

    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 400),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://localhost:6274"}, 200),
    ],
)
def test_a_foreign_host_or_origin_is_refused(live_uptimy, headers, status):
    answer = httpx.post(
        live_uptimy.mcp_url,
        json=INIT,
        headers={**ACCEPT, "Authorization": f"Bearer {live_uptimy.key}", **headers},
    )

    assert answer.status_code == status


def test_get_opens_no_stream_and_says_405(live_uptimy):
    answer = httpx.get(
        live_uptimy.mcp_url,
        headers={"Accept": "text/event-stream", "Authorization": f"Bearer {live_uptimy.key}"},
    )

    assert (answer.status_code, answer.headers["allow"]) == (405, "POST")


# --- the tools, through the SDK client -------------------------------------------------------------


def test_the_sdk_client_lists_every_tool_described_with_an_object_schema_and_annotations(live_uptimy):
    async def work(session: ClientSession) -> list[dict[str, Any]]:
        return [
            tool.model_dump(by_alias=True, exclude_none=True) for tool in (await session.list_tools()).tools
        ]

    tools = {tool["name"]: tool for tool in with_session(live_uptimy.mcp_url, live_uptimy.key, work)}

    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert len(tool["description"]) >= 20, name
        schema = tool["inputSchema"]
        assert schema["type"] == "object", name
        described = [schema["properties"], *(d["properties"] for d in schema.get("$defs", {}).values())]
        assert all(prop.get("description") for props in described for prop in props.values()), name
        hints = tool["annotations"]
        assert hints["readOnlyHint"] is (name not in WRITES), name
        assert hints["destructiveHint"] is False, name


def test_initialize_advertises_tools_only_to_the_sdk_client(live_uptimy):
    async def work(session: ClientSession) -> Any:
        return session.server_capabilities

    capabilities = with_session(live_uptimy.mcp_url, live_uptimy.key, work)

    assert capabilities.model_dump(by_alias=True, exclude_none=True) == {"tools": {"listChanged": False}}


@pytest.mark.parametrize("method", ["list_prompts", "list_resources", "list_resource_templates"])
def test_a_list_behind_no_advertised_capability_is_method_not_found(live_uptimy, method):
    async def work(session: ClientSession) -> int:
        with pytest.raises(MCPError) as refused:
            await getattr(session, method)()
        return refused.value.error.code

    assert with_session(live_uptimy.mcp_url, live_uptimy.key, work) == METHOD_NOT_FOUND


def test_add_monitors_then_list_and_get_them_through_the_sdk_client(live_uptimy):
    failed, added = call(
        live_uptimy,
        "add_monitors",
        {
            "monitors": [
                {"url": "https://docs.example.com/mcp", "name": "SDK docs", "requiredTools": ["search"]}
            ]
        },
    )
    assert not failed, added
    (monitor,) = added["added"]

    _, listed = call(live_uptimy, "list_monitors", {})
    _, shown = call(live_uptimy, "get_monitor", {"monitor": monitor["id"]})

    assert monitor["id"] in [m["id"] for m in listed["monitors"]]
    assert (shown["name"], shown["type_name"], shown["config"]["requiredTools"]) == (
        "SDK docs",
        "mcp",
        ["search"],
    )
    assert shown["settings_url"] == f"{live_uptimy.base}/app/healthchecks/{monitor['id']}/edit/"
    assert {region["region"] for region in shown["regions_now"]} == {"eu-west", "us-east", "ap-southeast"}


def test_a_key_pasted_in_a_url_is_refused_through_the_sdk_client(live_uptimy):
    failed, words = call(
        live_uptimy, "add_monitors", {"monitors": [{"url": "https://k.example.com/mcp?token=sk-9"}]}
    )

    assert failed
    assert "it carries a key (the query parameter token)" in words
    assert f"{live_uptimy.base}/app/healthchecks/new/?type=mcp" in words


# The names issue 23 found accepted and stored in clear.
CAMEL_CASE_KEYS = ["accessToken", "authToken", "clientSecret", "privateKey", "sessionToken"]


@pytest.mark.parametrize("name", CAMEL_CASE_KEYS)
def test_a_camel_case_key_in_a_url_is_refused_through_the_sdk_client(live_uptimy, name):
    url = f"https://camel.example.com/mcp?{name}=sk-9"
    failed, words = call(live_uptimy, "add_monitors", {"monitors": [{"url": url}]})

    assert failed
    assert f"it carries a key (the query parameter {name})" in words
    _, listed = call(live_uptimy, "list_monitors", {})
    assert not [m for m in listed["monitors"] if "sk-9" in m["url"]]


@pytest.mark.parametrize("name", CAMEL_CASE_KEYS)
def test_a_camel_case_key_in_a_url_is_refused_by_the_rest_api(live_uptimy, name):
    answer = httpx.post(
        f"{live_uptimy.base}/api/v1/healthchecks/",
        json={
            "name": "camel",
            "type": "mcp",
            "config": {"uri": f"https://camel.example.com/mcp?{name}=sk-9"},
        },
        headers={"Authorization": f"Bearer {live_uptimy.key}"},
    )

    assert answer.status_code == 400, answer.text
    (message,) = answer.json()["config.uri"]
    assert message.startswith(f"It carries a key (the query parameter {name})")
    assert "https://camel.example.com/mcp)" in message
    assert "sk-9" not in message


def test_headers_next_to_the_list_are_refused_through_the_sdk_client(live_uptimy):
    failed, words = call(
        live_uptimy,
        "add_monitors",
        {"monitors": [{"url": "https://h.example.com/mcp"}], "headers": {"Authorization": "Bearer sk-9"}},
    )

    assert failed
    assert "headers are not taken here" in words
    _, listed = call(live_uptimy, "list_monitors", {})
    assert "https://h.example.com/mcp" not in [m["url"] for m in listed["monitors"]]


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("add_monitors", {"monitors": [{"url": "https://n.example.com/mcp", "name": "Do\x00cs"}]}, "NUL"),
        ("get_monitor", {"monitor": "a\x00b"}, "NUL"),
    ],
)
def test_text_no_column_can_store_is_refused_before_any_tool_runs(live_uptimy, tool, arguments, says):
    failed, words = call(live_uptimy, tool, arguments)

    assert failed
    assert says in words
    _, listed = call(live_uptimy, "list_monitors", {})
    assert "https://n.example.com/mcp" not in [m["url"] for m in listed["monitors"]]


def test_a_lone_surrogate_is_refused_as_a_parse_error_and_nothing_is_added(live_uptimy):
    # Sent as raw JSON: the SDK client itself can't encode a lone surrogate, a hostile client can.
    body = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add_monitors", "arguments": '
        '{"monitors": [{"url": "https://n.example.com/mcp", "name": "Do\\ud800cs"}]}}}'
    )
    answer = httpx.post(
        live_uptimy.mcp_url,
        content=body,
        headers={**ACCEPT, "Content-Type": "application/json", "Authorization": f"Bearer {live_uptimy.key}"},
        timeout=30,
    )

    # The SDK's JSON parser refuses the escape itself: the request never reaches a tool.
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == -32700
    _, listed = call(live_uptimy, "list_monitors", {})
    assert "https://n.example.com/mcp" not in [m["url"] for m in listed["monitors"]]


def test_a_read_only_key_reads_but_cannot_add(live_uptimy):
    read_only = live_uptimy.create_key(read_only=True)

    failed, words = call(
        live_uptimy, "add_monitors", {"monitors": [{"url": "https://ro.example.com/mcp"}]}, key=read_only
    )
    listed_failed, _ = call(live_uptimy, "list_monitors", {}, key=read_only)

    assert failed
    assert words.endswith(
        "This credential is read-only: it can list and read monitors and run one-off checks, "
        "not add, pause or resume them. Use a read-write API key (or sign in with the write scope)."
    )
    assert not listed_failed


def test_run_check_stores_nothing_and_answers_the_result_fields(live_uptimy):
    _, before = call(live_uptimy, "list_monitors", {})

    failed, result = call(live_uptimy, "run_check", {"url": "http://10.1.2.3/mcp"})

    assert not failed
    assert (result["status"], result["kind"]) == ("down", "blocked_address")
    assert {"server", "protocol", "access", "signin_server", "tools", "missing_tools", "timings"} <= set(
        result
    )
    _, after = call(live_uptimy, "list_monitors", {})
    assert after["total"] == before["total"]


# --- what the ASGI switch keeps -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/healthz", 200),
        ("/app/login/", 200),
        ("/static/web/web.css", 200),
        ("/metrics", 200),
        ("/api/v1/docs/", 200),
        ("/api/v1/organization/", 401),
    ],
)
def test_the_web_app_api_static_files_and_metrics_still_answer_beside_mcp(live_uptimy, path, status):
    assert httpx.get(f"{live_uptimy.base}{path}").status_code == status


def test_the_rest_api_answers_the_key_on_the_same_port(live_uptimy):
    answer = httpx.get(
        f"{live_uptimy.base}/api/v1/organization/", headers={"Authorization": f"Bearer {live_uptimy.key}"}
    )

    assert (answer.status_code, answer.json()["slug"]) == (200, "demo")


def test_serve_announces_the_mcp_endpoint(live_uptimy):
    assert (
        f"MCP server: {live_uptimy.mcp_url} (sign in from the assistant, or Authorization: Bearer <API key>)"
        in live_uptimy.output()
    )


def test_ten_thousand_monitors_in_one_call_are_refused_and_nothing_is_added(live_uptimy):
    _, before = call(live_uptimy, "list_monitors", {})
    many = [{"url": f"https://mcp{n}.example.com/mcp"} for n in range(10_000)]

    failed, words = call(live_uptimy, "add_monitors", {"monitors": many})

    assert failed
    assert "add_monitors adds at most 100 monitors a call; this call has 10,000. Nothing was added" in words
    _, after = call(live_uptimy, "list_monitors", {})
    assert after["total"] == before["total"]
