"""An assistant signs in to a running Uptimy with OAuth and uses /mcp: no API key passes through the chat.

The official SDK's OAuth client (``mcp.client.auth.OAuthClientProvider``) meets /mcp's 401, finds
the sign-in from the RFC 9728 document, registers, and its user allows it on the consent screen
(tests/oauth_person.py plays that part over HTTP); then the SDK's session lists the tools and adds a
monitor with the token it got. An assistant that publishes a Client ID Metadata Document
(``client_metadata_url=``) signs in without registering: Uptimy fetches its document over TLS from
a loopback host (tests/signin/metadata_server.py), allowed and trusted through its settings.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientMetadata

from probes.checks.mcp import parse_mcp_config
from probes.runner import ProbeEnv, run_check_sync
from probes.types import Access, Status
from tests.live_uptimy import LiveUptimy, start_uptimy
from tests.oauth_person import CALLBACK, CLIENT_NAME, MemoryStorage, Person
from tests.signin.metadata_server import MetadataServer


def admin_login(live) -> tuple[str, str]:
    """Return the demo owner's username and password, as `make run` prints them on its first start."""
    found = re.search(r"^Admin login: (\S+) / (\S+)", live.output(), re.M)
    assert found, live.output()
    return found.group(1), found.group(2)


def signed_in_session(
    live,
    person: Person,
    storage: MemoryStorage,
    work,
    *,
    client_metadata_url: str | None = None,
    sent: list[Any] | None = None,
) -> Any:
    """Connect with the SDK client and its OAuth provider (signing in on the first 401), then run ``work``.

    ``sent`` collects every request the SDK's client made, sign-in's included.
    """
    provider = OAuthClientProvider(
        server_url=live.mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name=CLIENT_NAME, redirect_uris=[CALLBACK], token_endpoint_auth_method="none"
        ),
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.callback,
        client_metadata_url=client_metadata_url,
    )

    async def record(request: Any) -> None:
        if sent is not None:
            sent.append(request)

    async def main() -> Any:
        http = create_mcp_http_client(auth=provider)
        http.event_hooks["request"].append(record)
        async with (
            http,
            streamable_http_client(live.mcp_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return asyncio.run(main())


def test_an_assistant_signs_in_lists_the_tools_and_adds_a_monitor(live_uptimy):
    username, password = admin_login(live_uptimy)
    person, storage = Person(live_uptimy.base, username, password), MemoryStorage()

    async def work(session: ClientSession) -> tuple[set[str], Any, Any]:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        added = await session.call_tool(
            "add_monitors", {"monitors": [{"url": "https://mcp.example.com/mcp", "name": "Signed-in MCP"}]}
        )
        listed = await session.call_tool("list_monitors", {})
        return tools, added, listed

    tools, added, listed = signed_in_session(live_uptimy, person, storage, work)

    assert person.answer is not None, "the SDK never sent its user to the consent screen"
    assert {"add_monitors", "list_monitors", "get_monitor"} <= tools
    assert not added.is_error, added.content
    names = [monitor["name"] for monitor in json.loads(listed.content[0].text)["monitors"]]
    assert "Signed-in MCP" in names


def test_without_a_key_uptimys_own_check_is_up_with_oauth_access_and_uptimy_as_sign_in_server(live_uptimy):
    outcome = run_check_sync(parse_mcp_config({"uri": live_uptimy.mcp_url}), ProbeEnv(allow_private=True))

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == live_uptimy.base


@pytest.fixture(scope="module")
def metadata_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetadataServer]:
    server = MetadataServer(tmp_path_factory.mktemp("client-metadata"))
    yield server
    server.close()


@pytest.fixture(scope="module")
def cimd_uptimy(
    tmp_path_factory: pytest.TempPathFactory, metadata_host: MetadataServer
) -> Iterator[LiveUptimy]:
    """A running Uptimy that may fetch client documents from loopback and trusts the test host's CA."""
    running = start_uptimy(
        tmp_path_factory.mktemp("uptimy-cimd"),
        UPTIMY_ALLOW_PRIVATE_TARGETS="1",
        UPTIMY_OAUTH_CLIENT_METADATA_CA_FILE=str(metadata_host.ca_file),
    )
    try:
        yield running
    finally:
        running.stop()


def test_an_assistant_with_a_metadata_document_signs_in_without_registering(cimd_uptimy, metadata_host):
    document_url = metadata_host.serve_document(
        "/assistant/oauth-client.json", client_name=CLIENT_NAME, redirect_uris=[CALLBACK]
    )
    username, password = admin_login(cimd_uptimy)
    person, storage = Person(cimd_uptimy.base, username, password), MemoryStorage()
    sent: list[Any] = []

    async def work(session: ClientSession) -> set[str]:
        return {tool.name for tool in (await session.list_tools()).tools}

    tools = signed_in_session(cimd_uptimy, person, storage, work, client_metadata_url=document_url, sent=sent)

    assert {"add_monitors", "list_monitors", "get_monitor"} <= tools
    assert person.answer is not None, "the SDK never sent its user to the consent screen"
    assert storage.client_info is not None
    assert storage.client_info.client_id == document_url
    assert not [r for r in sent if r.url.path == "/oauth/register/"], "the SDK registered instead"
    assert [r for r in sent if r.url.path == "/oauth/token/"], "the SDK never exchanged its code"
    assert metadata_host.fetches_of("/assistant/oauth-client.json") == 1
    assert metadata_host.seen[0].headers["user-agent"].startswith("Uptimy-SignIn/")
