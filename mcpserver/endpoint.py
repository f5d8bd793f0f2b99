"""Serve /mcp: the SDK's Streamable HTTP app behind Uptimy's host check and bearer authentication.

The SDK (the official ``mcp`` package) speaks the protocol; this wrapper decides who is asking
before it does. Every request needs a bearer credential (:func:`mcpserver.auth.grant_for`);
without one the answer is 401 with ``WWW-Authenticate: Bearer resource_metadata=…``, the RFC 9728
document that tells an assistant where to sign in. The grant travels to the tools in the
request's ASGI scope (:data:`GRANT_KEY`), which the SDK hands them as ``request_context.request``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpserver.auth import CredentialExpired, Grant, grant_for
from signin.discovery import RESOURCE_METADATA_PATH, public_base_for

PATH = "/mcp"
GRANT_KEY = "uptimy.grant"


def resource_metadata_url(base: str) -> str:
    """Return the RFC 9728 path-aware address of /mcp's protected resource metadata."""
    return base + RESOURCE_METADATA_PATH


def _allowed_origin(origin: str) -> bool:
    """Return whether a browser's Origin is one of this server's own hosts (ALLOWED_HOSTS)."""
    try:
        domain = (urlsplit(origin).hostname or "").lower()
    except ValueError:
        return False
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def _grant(authorization: str | None, resource: str, address: str | None) -> Grant | CredentialExpired | None:
    # Django's request cycle closes stale connections around each request; this thread is not in one.
    close_old_connections()
    try:
        return grant_for(authorization, resource=resource, address=address)
    except CredentialExpired as expired:
        return expired
    finally:
        close_old_connections()


class McpEndpoint:
    """Check the Host and the bearer credential, then let the SDK's app answer with the grant in the scope."""

    def __init__(self, sdk_app: ASGIApp) -> None:
        self.sdk_app = sdk_app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts and stops with it
            await self.sdk_app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]
        }
        host = headers.get("host", "")
        domain, _ = split_domain_port(host)
        if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
            await _answer(send, 400, {"detail": f"This server does not answer for the host {host[:200]!r}."})
            return
        origin = headers.get("origin")
        if origin is not None and not _allowed_origin(origin):
            # DNS rebinding (MCP's transport spec: servers MUST validate Origin): a page elsewhere
            # whose name now points here sends its own Origin; the Host may already look like ours.
            await _answer(
                send, 403, {"detail": f"Requests from the origin {origin[:200]!r} are not accepted."}
            )
            return
        base = public_base_for(scope.get("scheme", "http"), host)
        authorization = headers.get("authorization")
        client = scope.get("client")
        address = str(client[0]) if client else None
        grant = await sync_to_async(_grant, thread_sensitive=False)(authorization, f"{base}{PATH}", address)
        if isinstance(grant, CredentialExpired):
            await _unauthorized(send, base, given=True, expired=grant.message)
            return
        if grant is None:
            await _unauthorized(send, base, given=bool(authorization))
            return
        if scope["method"] == "GET":
            # Stateless: no server-initiated messages, so no stream to open (the spec allows the 405);
            # an idle stream would only hold a connection until a restart's graceful timeout.
            await _answer(
                send,
                405,
                {"detail": "This server sends no stream on GET; POST JSON-RPC messages."},
                extra=[(b"allow", b"POST")],
            )
            return
        await self.sdk_app({**scope, GRANT_KEY: grant}, receive, send)


async def _unauthorized(send: Send, base: str, *, given: bool, expired: str | None = None) -> None:
    challenge = f'Bearer resource_metadata="{resource_metadata_url(base)}"'
    if expired:
        # RFC 6750 §3.1: invalid_token covers an expired one; the description says which it is.
        challenge = (
            'Bearer error="invalid_token", error_description="The API key expired", '
            f'resource_metadata="{resource_metadata_url(base)}"'
        )
        detail = expired
    elif given:
        # RFC 6750 §3.1: a credential was sent and is not one we know.
        challenge = (
            'Bearer error="invalid_token", error_description="Unknown or revoked credential", '
            f'resource_metadata="{resource_metadata_url(base)}"'
        )
        detail = "Unknown or revoked credential: send an Uptimy API key or an access token as 'Authorization: Bearer …'."
    else:
        detail = "Sign in, or send an Uptimy API key as 'Authorization: Bearer <key>'."
    await _answer(send, 401, {"detail": detail}, extra=[(b"www-authenticate", challenge.encode())])


async def _answer(
    send: Send, status: int, body: dict[str, str], extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
