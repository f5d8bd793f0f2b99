"""The official SDK's OAuth client signs in to a running Uptimy; its code, replayed, revokes what the SDK was given.

``mcp.client.auth.OAuthClientProvider`` (not written here) exchanges the code; the replay is an
attacker's second POST of that code to /oauth/token/. Then the SDK's access token gets /mcp's 401
and its refresh token is refused (RFC 6749 §4.1.2).
"""

from __future__ import annotations

import httpx
from mcp.client.session import ClientSession

from tests.mcpserver.test_mcp_oauth_live import admin_login, signed_in_session
from tests.oauth_person import CALLBACK, MemoryStorage, Person

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def mcp_status(live, access_token: str) -> int:
    headers = {"Authorization": f"Bearer {access_token}", "Accept": "application/json, text/event-stream"}
    return httpx.post(live.mcp_url, json=INITIALIZE, headers=headers, timeout=30).status_code


def test_a_replayed_code_revokes_the_sdks_tokens(live_uptimy):
    username, password = admin_login(live_uptimy)
    person, storage = Person(live_uptimy.base, username, password), MemoryStorage()

    async def work(session: ClientSession) -> int:
        return len((await session.list_tools()).tools)

    assert signed_in_session(live_uptimy, person, storage, work) > 0
    assert person.answer is not None
    assert storage.tokens is not None
    assert storage.client_info is not None
    tokens, client_id = storage.tokens, storage.client_info.client_id
    assert mcp_status(live_uptimy, tokens.access_token) == 200

    replay = httpx.post(
        f"{live_uptimy.base}/oauth/token/",
        data={
            "grant_type": "authorization_code",
            "code": person.answer["code"],
            "redirect_uri": CALLBACK,
            "client_id": client_id,
            "code_verifier": "v" * 64,
        },
        timeout=30,
    )

    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert mcp_status(live_uptimy, tokens.access_token) == 401
    refused = httpx.post(
        f"{live_uptimy.base}/oauth/token/",
        data={"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "client_id": client_id},
        timeout=30,
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_grant"
