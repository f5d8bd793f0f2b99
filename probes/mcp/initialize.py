"""Open a session: agree on a protocol version and find out which transport, if any, answers.

Initialize is where a server shows what it is, so the decisions that hang on its answer live
here: stepping down to older versions when ours is refused, recognising a server of the stateless
2026-07-28 revision (which has no initialize), looking for the legacy HTTP+SSE transport on
400/404/405, and adopting the server's session id and identity.
"""

from __future__ import annotations

from probes import __version__, jsonrpc
from probes.connection import CheckFailed
from probes.jsonrpc import JsonObject, RpcError
from probes.mcp.exchange import SESSION_ID, Answer, Exchange, VersionRejected, rejects_version
from probes.mcp.legacy import legacy_call, open_legacy
from probes.mcp.transport import error_in_body, post_request, result_of, rpc_failure, short, status_failure
from probes.redact import clip
from probes.types import FailureKind, ServerInfo, Transport
from probes.wire import Headers

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
# 2026-07-28 (stateless) error codes: HeaderMismatch, MissingRequiredClientCapability,
# UnsupportedProtocolVersion. A server sending them has no initialize to fall back to.
STATELESS_CODES = frozenset({-32020, -32021, -32022})
METHOD_NOT_FOUND = -32601
STATELESS_ONLY = "The server speaks only the 2026-07-28 stateless revision of MCP, not supported yet"
NO_ENDPOINT = "No MCP endpoint at this URL (it often ends in /mcp)"
CLIENT_INFO = {
    "name": "uptimy",
    "title": "Uptimy monitor",
    "version": __version__,
    "websiteUrl": "https://uptimy.example",
}


async def initialize(ex: Exchange) -> JsonObject:
    """Initialize a session, stepping down protocol versions on a rejection; return the capabilities."""
    version = PROTOCOL_VERSIONS[0]
    while True:
        try:
            result = await _initialize_once(ex, version)
        except VersionRejected as rejected:
            older = _next_version(version, rejected.error)
            if older is None:
                raise rpc_failure("initialize", rejected.error) from None
            ex.warnings.append(f"The server refused protocol version {version}; retried with {older}")
            version = older
            continue
        return _accept_initialize(ex, result)


def _next_version(asked: str, error: RpcError) -> str | None:
    """Return the next version to ask for after ``error`` refused ``asked``, or None when none is left."""
    supported = error.data.get("supported") if isinstance(error.data, dict) else None
    older = PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.index(asked) + 1 :]
    if isinstance(supported, list):
        common = [version for version in older if version in supported]
        return common[0] if common else None
    return older[0] if older else None


async def _initialize_once(ex: Exchange, version: str) -> JsonObject:
    ex.session_id = None
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
    if ex.legacy is not None:
        return await legacy_call(ex, "initialize", params)
    answer = await post_request(ex, "initialize", params)
    if answer.message is None:
        if answer.status in (400, 404, 405):
            return await _initialize_rejected(ex, answer, params)
        raise status_failure(answer, "initialize")
    error = jsonrpc.error_of(answer.message)
    if error is not None:
        if error.code == METHOD_NOT_FOUND:
            raise _no_initialize(error, answer.status)
        if rejects_version(error):
            raise VersionRejected(error)
        raise rpc_failure("initialize", error)
    ex.transport = Transport.STREAMABLE_HTTP
    _adopt_session(ex, answer.headers)
    return result_of(answer.message, "initialize")


async def _initialize_rejected(ex: Exchange, answer: Answer, params: JsonObject) -> JsonObject:
    """Handle 400/404/405 on initialize: a 2026-only server, a version refusal, or maybe legacy SSE."""
    error = error_in_body(answer.body, "initialize")
    if error is not None and error.code == METHOD_NOT_FOUND:
        # A JSON-RPC answer from this very URL: no legacy SSE server to look for.
        raise _no_initialize(error, answer.status)
    if answer.status == 400 and error is not None:
        if _speaks_only_2026(error):
            raise CheckFailed(FailureKind.PROTOCOL, STATELESS_ONLY, http_status=400)
        if rejects_version(error):
            raise VersionRejected(error)
    ex.phase = "legacy SSE detection"
    if await open_legacy(ex):
        ex.phase = "initialize"
        return await legacy_call(ex, "initialize", params)
    if answer.status in (404, 405):
        raise CheckFailed(FailureKind.NO_ENDPOINT, NO_ENDPOINT, http_status=answer.status)
    raise status_failure(answer, "initialize")


def _no_initialize(error: RpcError, status: int) -> CheckFailed:
    """Return the verdict for "Method not found" as the answer to initialize itself.

    Every revision before 2026-07-28 begins with initialize; the stateless 2026-07-28
    revision removed it, and its servers answer it like any unknown method. (Only the answer
    to initialize counts: -32601 on tools/list stays a JSON-RPC error.)
    """
    words = short(error.message, 80) or "Method not found"
    return CheckFailed(
        FailureKind.PROTOCOL,
        f"{STATELESS_ONLY} (initialize was answered with {words}, code {METHOD_NOT_FOUND})",
        http_status=status if status >= 300 else None,
    )


def _speaks_only_2026(error: RpcError) -> bool:
    if error.code in STATELESS_CODES:
        return True
    supported = error.data.get("supported") if isinstance(error.data, dict) else None
    return isinstance(supported, list) and any(str(item).startswith("2026-") for item in supported)


def _accept_initialize(ex: Exchange, result: JsonObject) -> JsonObject:
    version = result.get("protocolVersion")
    if isinstance(version, str) and version.startswith("2026-"):
        raise CheckFailed(
            FailureKind.PROTOCOL,
            f"The server answered initialize with protocol version {short(version)}, the stateless "
            "revision of MCP, not supported yet",
        )
    if version not in PROTOCOL_VERSIONS:
        raise CheckFailed(
            FailureKind.PROTOCOL,
            f"The server answered with protocol version {short(version)}, which this check does not speak "
            f"({', '.join(PROTOCOL_VERSIONS)})",
        )
    ex.protocol = str(version)
    info = result.get("serverInfo")
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        ex.server = ServerInfo(name=clip(info["name"], 200), version=clip(str(info.get("version", "")), 100))
    else:
        ex.warnings.append("The initialize result has no serverInfo")
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        ex.warnings.append("The initialize result has no capabilities object")
        return {}
    return capabilities


def _adopt_session(ex: Exchange, headers: Headers) -> None:
    session_id = headers.get("mcp-session-id")
    if session_id is None:
        return
    if not SESSION_ID.match(session_id):
        raise CheckFailed(
            FailureKind.PROTOCOL,
            "The server assigned an invalid Mcp-Session-Id (only visible ASCII is allowed)",
        )
    ex.session_id = session_id
