"""A browser-hosted assistant on another origin discovers, registers and reaches the token endpoint, in Chromium.

Chromium enforces CORS itself: the requests carry headers and a JSON body, so each one is
preceded by a real preflight, and the page can read an answer only when Uptimy allows it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.signin.conftest import REDIRECT_URI

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

ASSISTANT_JOURNEY = """async (base) => {
  const headers = {"MCP-Protocol-Version": "2025-06-18"};
  const metadata = await (await fetch(base + "/.well-known/oauth-authorization-server", {headers})).json();
  const registered = await fetch(metadata.registration_endpoint, {
    method: "POST",
    headers: {...headers, "Content-Type": "application/json"},
    body: JSON.stringify({redirect_uris: [REDIRECT], token_endpoint_auth_method: "none"}),
  });
  const client = await registered.json();
  const token = await fetch(metadata.token_endpoint, {
    method: "POST",
    headers,
    body: new URLSearchParams({grant_type: "authorization_code", code: "not-a-code", client_id: client.client_id}),
  });
  return {registered: registered.status, client_id: client.client_id, token: token.status, error: (await token.json()).error};
}""".replace("REDIRECT", repr(REDIRECT_URI))


def test_an_assistant_page_on_another_origin_registers_and_reads_token_errors(chromium, live_server):
    server = urlsplit(live_server.url)
    # The same server under another host name is another origin to the browser; both are
    # loopback, so Chromium's local network access rules leave the requests alone.
    other_host = "127.0.0.1" if server.hostname != "127.0.0.1" else "localhost"
    context = chromium.new_context()
    context.set_default_timeout(20_000)
    tab = context.new_page()
    tab.goto(f"http://{other_host}:{server.port}/healthz")

    answer = tab.evaluate(ASSISTANT_JOURNEY, live_server.url)
    context.close()

    assert answer["registered"] == 201
    assert answer["client_id"]
    assert answer["token"] in (400, 401)
    assert answer["error"] in ("invalid_grant", "invalid_client")
