"""Serve official-SDK MCP servers (PyPI ``mcp`` 2.x) on loopback for Uptimy's peer tests.

Usage: ``python sdk_servers.py NAME [NAME ...]`` with names from ``BUILDERS``. Every server gets
its own free port on 127.0.0.1, all in one process and one event loop (importing the SDK costs
most of a second of CPU, so one process starts all of them quickly). The first line on stdout
is a JSON object mapping each name to its base URL ("http://127.0.0.1:PORT"); the process then
serves until it is killed.

Nothing here is Uptimy code: the apps are built from the SDK's own classes (``MCPServer``, the
low-level ``Server``, ``create_auth_routes``, ``build_metadata``), so the checks are proven
against code that nobody on the project wrote. Every app is wrapped in a recorder that keeps
the HTTP method, path and JSON-RPC method of each request, served at ``GET /_peer/log``, so
tests can prove that a check never sends ``tools/call``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import Callable
from typing import Any

import uvicorn
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_metadata, cors_middleware, create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.types import ListToolsResult, PaginatedRequestParams, Tool, ToolAnnotations
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Mount, Route

# The bearer token the protected servers accept; tests send it as "Authorization: Bearer …".
GOOD_TOKEN = "uptimy-peer-token"
SCOPES = ["mcp:read"]
PAGE_SIZE = 10
PAGED_TOOLS = 25
ISSUER_PATH = "/tenant1"
OIDC_PATH = "/realms/uptimy"

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


async def send_json(send: Send, value: Any) -> None:
    """Answer an ASGI HTTP request with 200 and ``value`` as JSON."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(value).encode()})


async def read_body(receive: Receive) -> tuple[bytes, Receive]:
    """Read an ASGI request's whole body; return it and a ``receive`` that replays it to the app."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


class Recorder:
    """Wrap an ASGI app and remember every request: HTTP method, path, JSON-RPC method, connection."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.log: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/_peer/log":
            if scope["method"] == "DELETE":
                self.log.clear()
            await send_json(send, self.log)
            return
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in scope["headers"]}
        entry: dict[str, Any] = {
            "http": scope["method"],
            "path": scope["path"],
            "rpc": None,
            "session": "mcp-session-id" in headers,
            "protocol_version": headers.get("mcp-protocol-version"),
            "authorization": "authorization" in headers,
            "user_agent": headers.get("user-agent", ""),
            # The client's port tells which TCP connection carried the request.
            "client_port": (scope.get("client") or ("", 0))[1],
        }
        self.log.append(entry)
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        # Read the whole body, note its JSON-RPC method, then replay it to the app.
        body, replay = await read_body(receive)
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if isinstance(payload, dict):
            entry["rpc"] = payload.get("method") or ("<response>" if "id" in payload else None)
        await self.app(scope, replay, send)


class AcceptOneToken:
    """Verify bearer tokens for the protected servers: only GOOD_TOKEN is valid."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if token == GOOD_TOKEN:
            return AccessToken(token=token, client_id="uptimy-peer", scopes=SCOPES)
        return None


class NoAuthorizationProvider:
    """Stand in for an authorization server's backend; a check never registers, authorizes or
    asks for a token, so every call is a test failure."""

    def __getattr__(self, name: str) -> Any:
        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(f"the check must not call the authorization server's {name}")

        return refuse


class EmbeddedAuthorizationProvider(NoAuthorizationProvider):
    """Back the authorization server a 2025-03-26 server embeds: it verifies GOOD_TOKEN (the SDK
    calls load_access_token for that), and every other call is still a test failure."""

    async def load_access_token(self, token: str) -> AccessToken | None:
        return await AcceptOneToken().verify_token(token)


def add_tools(server: MCPServer) -> None:
    """Give an SDK server three read-only tools; calling any of them fails loudly."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(description="Full-text search over the docs.", annotations=read_only)
    def search_docs(q: str) -> str:
        raise AssertionError("Uptimy must never call a tool")

    @server.tool(description="Report the service status.", annotations=read_only)
    def get_status() -> str:
        raise AssertionError("Uptimy must never call a tool")

    @server.tool(description="Echo the text back.", annotations=read_only)
    def echo(text: str, times: int = 1) -> str:
        raise AssertionError("Uptimy must never call a tool")


def mcp_server(name: str, **kwargs: Any) -> MCPServer:
    server = MCPServer(
        name, version="2.3.0-peer", instructions="A test peer for Uptimy.", log_level="WARNING", **kwargs
    )
    add_tools(server)
    return server


def streamable(**options: Any) -> Callable[[dict[str, str]], Any]:
    def build(urls: dict[str, str]) -> Any:
        return mcp_server("sdk-streamable").streamable_http_app(**options)

    return build


def legacy_sse(urls: dict[str, str]) -> Any:
    return mcp_server("sdk-legacy-sse").sse_app()


def paginated(urls: dict[str, str]) -> Any:
    """Replace MCPServer's one-page tools/list through the low-level server, as peers.md says."""
    server = mcp_server("sdk-paginated")
    tools = [
        Tool(
            name=f"tool_{index:02d}",
            description=f"Paged tool {index}.",
            input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        )
        for index in range(PAGED_TOOLS)
    ]

    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE_SIZE
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    server._lowlevel_server.add_request_handler("tools/list", PaginatedRequestParams, list_tools)
    return server.streamable_http_app()


def protected(as_name: str, issuer_suffix: str = "", issuer_as_anyhttpurl: bool = False) -> Any:
    """Build an SDK server behind OAuth: 401 + WWW-Authenticate + RFC 9728 metadata."""

    def build(urls: dict[str, str]) -> Any:
        issuer: Any = urls[as_name] + issuer_suffix
        if issuer_as_anyhttpurl:
            # The quirk from peers.md: pydantic's AnyHttpUrl turns "http://h:p" into "http://h:p/".
            issuer = AnyHttpUrl(issuer)
        auth = AuthSettings(
            issuer_url=issuer,
            resource_server_url=urls[CURRENT] + "/mcp",
            required_scopes=SCOPES,
            validate_token_resource=False,
        )
        server = mcp_server("sdk-protected", token_verifier=AcceptOneToken(), auth=auth)
        return server.streamable_http_app()

    return build


def legacy_protected(urls: dict[str, str]) -> Any:
    """Build a 2025-03-26-style SDK server: no RFC 9728 metadata anywhere, its own origin the AS.

    The SDK's own way to do it: MCPServer with an auth_server_provider and no resource_server_url
    serves RFC 8414 metadata whose issuer is the origin at /.well-known/oauth-authorization-server,
    with /authorize, /token and /register beside it, and answers 401 without resource_metadata.
    """
    auth = AuthSettings(
        issuer_url=urls[CURRENT],
        resource_server_url=None,
        required_scopes=SCOPES,
        client_registration_options=ClientRegistrationOptions(enabled=True),
    )
    server = mcp_server("sdk-legacy-oauth", auth_server_provider=EmbeddedAuthorizationProvider(), auth=auth)
    return server.streamable_http_app()


def bare_protected(urls: dict[str, str]) -> Any:
    """Build an SDK server behind the SDK's bearer middleware with no metadata anywhere: a bare 401.

    ``RequireAuthMiddleware`` without a resource metadata URL answers 401 with a plain Bearer
    challenge; no RFC 9728 or RFC 8414 document is served (every other path is the SDK app's 404).
    """
    inner = mcp_server("sdk-bare-protected").streamable_http_app()
    guarded = AuthenticationMiddleware(
        RequireAuthMiddleware(inner, SCOPES, None), backend=BearerAuthBackend(AcceptOneToken())
    )

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            await guarded(scope, receive, send)
        else:  # the lifespan, and the 404s of every other path
            await inner(scope, receive, send)

    return app


def _auth_routes(issuer: str) -> list[Route]:
    """Return the SDK's authorize and token routes without its root-only metadata route."""
    routes = create_auth_routes(NoAuthorizationProvider(), AnyHttpUrl(issuer))  # type: ignore[arg-type]
    return [route for route in routes if not route.path.startswith("/.well-known/")]


def _metadata_route(path: str, issuer: str) -> Route:
    # build_metadata is given the issuer as a string so pydantic keeps it exactly (no "/").
    metadata = build_metadata(issuer, None, ClientRegistrationOptions(), RevocationOptions())  # type: ignore[arg-type]
    return Route(path, endpoint=cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]))


def as_root(urls: dict[str, str]) -> Any:
    """RFC 8414 authorization server whose issuer has no path."""
    issuer = urls[CURRENT]
    return Starlette(
        routes=[_metadata_route("/.well-known/oauth-authorization-server", issuer), *_auth_routes(issuer)]
    )


def as_path(urls: dict[str, str]) -> Any:
    """RFC 8414 authorization server whose issuer has a path: metadata at the inserted URL."""
    issuer = urls[CURRENT] + ISSUER_PATH
    return Starlette(
        routes=[
            _metadata_route("/.well-known/oauth-authorization-server" + ISSUER_PATH, issuer),
            Mount(ISSUER_PATH, routes=_auth_routes(issuer)),
        ]
    )


def as_oidc(urls: dict[str, str]) -> Any:
    """OpenID-only provider with an issuer path, Keycloak style: only the appended form exists."""
    issuer = urls[CURRENT] + OIDC_PATH
    return Starlette(
        routes=[
            _metadata_route(OIDC_PATH + "/.well-known/openid-configuration", issuer),
            Mount(OIDC_PATH, routes=_auth_routes(issuer)),
        ]
    )


def as_oidc_root(urls: dict[str, str]) -> Any:
    """OpenID-only provider whose issuer has no path."""
    issuer = urls[CURRENT]
    return Starlette(
        routes=[_metadata_route("/.well-known/openid-configuration", issuer), *_auth_routes(issuer)]
    )


def as_naive(urls: dict[str, str]) -> Any:
    """The SDK's routes used as they come: the issuer built with AnyHttpUrl ends in "/"."""
    routes = create_auth_routes(NoAuthorizationProvider(), AnyHttpUrl(urls[CURRENT]))  # type: ignore[arg-type]
    return Starlette(routes=routes)


BUILDERS: dict[str, Callable[[dict[str, str]], Any]] = {
    # Streamable HTTP in the SDK's three modes, all at /mcp.
    "stateful": streamable(),
    "json": streamable(json_response=True),
    "stateless": streamable(stateless_http=True),
    "paginated": paginated,
    # The 2024-11-05 HTTP+SSE transport at /sse.
    "legacy": legacy_sse,
    # Authorization servers.
    "as-root": as_root,
    "as-path": as_path,
    "as-oidc": as_oidc,
    "as-oidc-root": as_oidc_root,
    "as-naive": as_naive,
    # Protected resources (each needs its authorization server started alongside).
    "oauth-root": protected("as-root"),
    "oauth-path": protected("as-path", ISSUER_PATH),
    "oauth-oidc": protected("as-oidc", OIDC_PATH),
    "oauth-oidc-root": protected("as-oidc-root"),
    # PRM names "http://h:p" while the naive AS calls itself "http://h:p/".
    "oauth-naive": protected("as-naive"),
    # No RFC 9728 metadata: sign-in only through the 2025-03-26 rule (the origin is the AS).
    "oauth-legacy": legacy_protected,
    # 401 with neither RFC 9728 metadata nor a 2025-03-26 fallback: sign-in cannot be discovered.
    "oauth-bare": bare_protected,
}
CURRENT = "__current__"


async def serve(names: list[str]) -> None:
    sockets: dict[str, socket.socket] = {}
    urls: dict[str, str] = {}
    for name in names:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(512)
        sockets[name] = sock
        urls[name] = f"http://127.0.0.1:{sock.getsockname()[1]}"
    servers = []
    for name in names:
        app = Recorder(BUILDERS[name]({**urls, CURRENT: urls[name]}))
        config = uvicorn.Config(app, log_level="warning", lifespan="auto", timeout_graceful_shutdown=1)
        servers.append((uvicorn.Server(config), sockets[name]))
    print(json.dumps(urls), flush=True)
    await asyncio.gather(*(server.serve(sockets=[sock]) for server, sock in servers))


def main() -> None:
    names = sys.argv[1:] or list(BUILDERS)
    unknown = [name for name in names if name not in BUILDERS]
    if unknown:
        sys.exit(f"unknown server(s): {', '.join(unknown)}; known: {', '.join(BUILDERS)}")
    asyncio.run(serve(names))


if __name__ == "__main__":
    main()
