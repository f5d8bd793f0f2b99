"""Check an MCP server the way an assistant connects to it: initialize, list tools, never call one.

One check is one :class:`_Exchange`: POST ``initialize`` (falling back to older protocol
versions when the server rejects ours with an error), POST ``notifications/initialized``,
POST ``tools/list`` page by page when the server declares tools, then DELETE the session.
Answers may be JSON or an event stream. A 401 without a key turns into sign-in discovery
(``probes.oauth``); 400/404/405 on ``initialize`` into a look for the legacy HTTP+SSE
transport, unless the answer shows a server of the stateless 2026-07-28 revision (its error
codes, or "Method not found" for initialize itself). A 404 to a request carrying the session
id means the server ended the session: the check starts one new session, once. Everything
remote becomes a :class:`CheckFailed` with a kind and a sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

import httpx

from probes import __version__, jsonrpc, oauth
from probes.connection import (
    MAX_BODY_BYTES,
    REDIRECT_STATUSES,
    CheckFailed,
    Connection,
    host_of,
    media_type,
    redirect_target,
    same_origin,
    sanitize,
    shown_url,
    text_message,
    too_large_words,
)
from probes.jsonrpc import JsonObject, RpcError
from probes.sse import SseEvent, SseParser
from probes.types import Access, FailureKind, McpConfig, ProbeOutcome, ServerInfo, Status, ToolInfo, Transport
from probes.wire import Headers, Response, WireError

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MAX_PAGES = 10
MAX_EVENTS = 1000
MAX_REDIRECTS = 3
MAX_PING_ANSWERS = 5
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
_SESSION_ID = re.compile(r"^[\x21-\x7e]{1,1024}$")
# Headers the exchange owns; a customer's header of the same name would break the protocol.
_MANAGED_HEADERS = frozenset(
    {"accept", "content-type", "content-length", "host", "mcp-session-id", "mcp-protocol-version"}
)


class _NeedsSignIn(Exception):
    """Signal a keyless 401: the check turns into sign-in discovery for ``url``."""

    def __init__(self, url: httpx.URL, challenges: list[str]) -> None:
        super().__init__("401")
        self.url = url
        self.challenges = challenges


class _SessionExpired(Exception):
    """Signal a 404 to a request that carried the session id: the server ended the session."""

    def __init__(self, method: str, failure: CheckFailed) -> None:
        super().__init__(failure.reason)
        self.method = method
        self.failure = failure


class _VersionRejected(Exception):
    """Signal that initialize got an error refusing our protocol version."""

    def __init__(self, error: RpcError) -> None:
        super().__init__(error.message)
        self.error = error


@dataclass(slots=True)
class _Answer:
    """Hold one HTTP answer to a POST: the JSON-RPC response for 2xx, the body otherwise."""

    status: int
    headers: Headers
    message: JsonObject | None = None
    body: bytes = b""
    mtype: str = ""


@dataclass(slots=True)
class _Legacy:
    """Hold the open GET stream of a legacy HTTP+SSE session and the URL it told us to POST to."""

    response: Response
    events: _EventReader
    endpoint: httpx.URL


@dataclass(slots=True)
class _Exchange:
    """Hold the mutable state of one check while it runs."""

    config: McpConfig
    conn: Connection
    url: httpx.URL
    next_id: int = 1
    phase: str = "initialize"
    session_id: str | None = None
    protocol: str | None = None
    server: ServerInfo | None = None
    transport: Transport | None = None
    access: Access | None = None
    signin_server: str | None = None
    legacy: _Legacy | None = None
    pings_answered: int = 0
    # The session id on an initialize answer not yet read: a ping inside that stream needs it.
    pending_session: str | None = None
    warnings: list[str] = field(default_factory=list)

    def take_id(self) -> int:
        request_id = self.next_id
        self.next_id += 1
        return request_id


async def check_mcp(config: McpConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one MCP check; ``deadline`` is the loop time the whole check ends by."""
    ex = _Exchange(config=config, conn=conn, url=httpx.URL(config.uri))
    if config.has_key:
        ex.access = Access.KEY
    started = time.perf_counter()
    try:
        async with asyncio.timeout_at(deadline):
            outcome = await _run(ex)
    except CheckFailed as failed:
        outcome = _down(ex, failed.kind, failed.reason, failed.http_status)
    except TimeoutError:
        outcome = _down(
            ex, FailureKind.TIMEOUT, f"No complete answer within {config.timeout:g} s (during {ex.phase})"
        )
    total_ms = (time.perf_counter() - started) * 1000
    await _end_session(ex, deadline)
    return _with_timings(outcome, conn, total_ms)


def _with_timings(outcome: ProbeOutcome, conn: Connection, total_ms: float) -> ProbeOutcome:
    return replace(outcome, timings=conn.timings(total_ms))


def _down(ex: _Exchange, kind: FailureKind, reason: str, http_status: int | None = None) -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.DOWN,
        kind=kind,
        reason=reason,
        http_status=http_status,
        server=ex.server,
        protocol=ex.protocol,
        access=ex.access,
        signin_server=ex.signin_server,
        transport=ex.transport,
        warnings=tuple(dict.fromkeys(ex.warnings)),
    )


async def _run(ex: _Exchange) -> ProbeOutcome:
    try:
        try:
            return await _session(ex)
        except _SessionExpired as expired:
            # The protocol's answer to a 404 on a session: start a new one. Once only: a
            # server that ends every session at once cannot be checked.
            ex.warnings.append(
                f"The server ended the session (HTTP 404 on {expired.method}); a new one was started"
            )
            try:
                return await _session(ex)
            except _SessionExpired as again:
                raise again.failure from None
    except _NeedsSignIn as need:
        return await _signin(ex, need)


async def _session(ex: _Exchange) -> ProbeOutcome:
    """Initialize a session, confirm it and list the tools; return the verdict."""
    capabilities = await _initialize(ex)
    ex.access = ex.access or Access.OPEN
    ex.phase = "notifications/initialized"
    await _notify(ex, "notifications/initialized")
    tools = await _list_tools(ex) if "tools" in capabilities else []
    return _verdict(ex, tools)


async def _signin(ex: _Exchange, need: _NeedsSignIn) -> ProbeOutcome:
    ex.phase = "sign-in discovery"
    ex.access = Access.OAUTH
    signin = await oauth.discover_signin(ex.conn, need.url, need.challenges)
    ex.signin_server = signin.issuer
    ex.warnings.extend(signin.warnings)
    return ProbeOutcome(
        status=Status.UP,
        server=ex.server,
        protocol=ex.protocol,
        access=Access.OAUTH,
        signin_server=signin.issuer,
        transport=ex.transport,
        http_status=401,
        warnings=tuple(dict.fromkeys(ex.warnings)),
    )


def _verdict(ex: _Exchange, tools: list[ToolInfo]) -> ProbeOutcome:
    names = {tool.name for tool in tools}
    missing = tuple(name for name in ex.config.required_tools if name not in names)
    kind: FailureKind | None = None
    reason = ""
    if missing:
        kind, reason = FailureKind.MISSING_TOOLS, "Missing tools: " + ", ".join(missing)
    elif len(tools) < ex.config.min_tools:
        kind = FailureKind.TOO_FEW_TOOLS
        reason = f"{len(tools)} {'tool' if len(tools) == 1 else 'tools'} listed; at least {ex.config.min_tools} required"
    return ProbeOutcome(
        status=Status.DOWN if kind else Status.UP,
        kind=kind,
        reason=reason,
        server=ex.server,
        protocol=ex.protocol,
        access=ex.access,
        tools=tuple(tools),
        tool_count=len(tools),
        tool_digest=tool_digest(tools),
        missing_tools=missing,
        transport=ex.transport,
        warnings=tuple(dict.fromkeys(ex.warnings)),
    )


def tool_digest(tools: list[ToolInfo] | tuple[ToolInfo, ...]) -> str:
    """Return a stable sha256 of the sorted (name, required inputs) list, to tell a changed tool list."""
    canonical = sorted((tool.name, sorted(tool.required_inputs)) for tool in tools)
    return hashlib.sha256(
        json.dumps(canonical, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()


# --- initialize ------------------------------------------------------------------------------


async def _initialize(ex: _Exchange) -> JsonObject:
    """Initialize a session, stepping down protocol versions on a rejection; return the capabilities."""
    version = PROTOCOL_VERSIONS[0]
    while True:
        try:
            result = await _initialize_once(ex, version)
        except _VersionRejected as rejected:
            older = _next_version(version, rejected.error)
            if older is None:
                raise _rpc_failure("initialize", rejected.error) from None
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


def _rejects_version(error: RpcError) -> bool:
    # -32602 alone proves nothing (Python servers send it for anything before initialize);
    # a rejection names the supported versions or says "version".
    if isinstance(error.data, dict) and isinstance(error.data.get("supported"), list):
        return True
    return "version" in error.message.lower()


async def _initialize_once(ex: _Exchange, version: str) -> JsonObject:
    ex.session_id = None
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
    if ex.legacy is not None:
        return await _legacy_call(ex, "initialize", params)
    answer = await _post_request(ex, "initialize", params)
    if answer.message is None:
        if answer.status in (400, 404, 405):
            return await _initialize_rejected(ex, answer, params)
        raise _status_failure(answer, "initialize")
    error = jsonrpc.error_of(answer.message)
    if error is not None:
        if error.code == METHOD_NOT_FOUND:
            raise _no_initialize(error, answer.status)
        if _rejects_version(error):
            raise _VersionRejected(error)
        raise _rpc_failure("initialize", error)
    ex.transport = Transport.STREAMABLE_HTTP
    _adopt_session(ex, answer.headers)
    return _result_of(answer.message, "initialize")


async def _initialize_rejected(ex: _Exchange, answer: _Answer, params: JsonObject) -> JsonObject:
    """Handle 400/404/405 on initialize: a 2026-only server, a version refusal, or maybe legacy SSE."""
    error = _error_in_body(answer.body)
    if error is not None and error.code == METHOD_NOT_FOUND:
        # A JSON-RPC answer from this very URL: no legacy SSE server to look for.
        raise _no_initialize(error, answer.status)
    if answer.status == 400 and error is not None:
        if _speaks_only_2026(error):
            raise CheckFailed(FailureKind.PROTOCOL, STATELESS_ONLY, http_status=400)
        if _rejects_version(error):
            raise _VersionRejected(error)
    ex.phase = "legacy SSE detection"
    if await _open_legacy(ex):
        ex.phase = "initialize"
        return await _legacy_call(ex, "initialize", params)
    if answer.status in (404, 405):
        raise CheckFailed(FailureKind.NO_ENDPOINT, NO_ENDPOINT, http_status=answer.status)
    raise _status_failure(answer, "initialize")


def _no_initialize(error: RpcError, status: int) -> CheckFailed:
    """Return the verdict for "Method not found" as the answer to initialize itself.

    Every revision before 2026-07-28 begins with initialize; the stateless 2026-07-28
    revision removed it, and its servers answer it like any unknown method. (Only the answer
    to initialize counts: -32601 on tools/list stays a JSON-RPC error.)
    """
    words = _short(error.message, 80) or "Method not found"
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


def _accept_initialize(ex: _Exchange, result: JsonObject) -> JsonObject:
    version = result.get("protocolVersion")
    if isinstance(version, str) and version.startswith("2026-"):
        raise CheckFailed(
            FailureKind.PROTOCOL,
            f"The server answered initialize with protocol version {_short(version)}, the stateless "
            "revision of MCP, not supported yet",
        )
    if version not in PROTOCOL_VERSIONS:
        raise CheckFailed(
            FailureKind.PROTOCOL,
            f"The server answered with protocol version {_short(version)}, which this check does not speak "
            f"({', '.join(PROTOCOL_VERSIONS)})",
        )
    ex.protocol = str(version)
    info = result.get("serverInfo")
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        ex.server = ServerInfo(name=info["name"][:200], version=str(info.get("version", ""))[:100])
    else:
        ex.warnings.append("The initialize result has no serverInfo")
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        ex.warnings.append("The initialize result has no capabilities object")
        return {}
    return capabilities


def _adopt_session(ex: _Exchange, headers: Headers) -> None:
    session_id = headers.get("mcp-session-id")
    if session_id is None:
        return
    if not _SESSION_ID.match(session_id):
        raise CheckFailed(
            FailureKind.PROTOCOL,
            "The server assigned an invalid Mcp-Session-Id (only visible ASCII is allowed)",
        )
    ex.session_id = session_id


# --- tools/list ------------------------------------------------------------------------------


async def _list_tools(ex: _Exchange) -> list[ToolInfo]:
    """Return the tools over at most MAX_PAGES pages; a repeated or empty cursor ends the list."""
    tools: dict[str, ToolInfo] = {}
    seen: set[str] = set()
    cursor: str | None = None
    for page in range(1, MAX_PAGES + 1):
        ex.phase = "tools/list" if page == 1 else f"tools/list page {page}"
        result = await _call(ex, "tools/list", {"cursor": cursor} if cursor is not None else None)
        listed = result.get("tools")
        if not isinstance(listed, list):
            raise CheckFailed(FailureKind.PROTOCOL, f"The {ex.phase} result has no tools list")
        _collect_tools(ex, listed, tools)
        next_cursor = result.get("nextCursor")
        if next_cursor is None:
            break
        if not isinstance(next_cursor, str) or not next_cursor:
            ex.warnings.append("tools/list returned an empty nextCursor; treated as the end")
            break
        if next_cursor in seen:
            ex.warnings.append("tools/list pagination loops (a cursor repeated); stopped there")
            break
        seen.add(next_cursor)
        cursor = next_cursor
    else:
        ex.warnings.append(f"tools/list has more than {MAX_PAGES} pages; counted the first {MAX_PAGES}")
    return list(tools.values())


def _collect_tools(ex: _Exchange, listed: list[Any], tools: dict[str, ToolInfo]) -> None:
    for item in listed:
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name:
            ex.warnings.append("tools/list returned a tool without a name")
            continue
        if name in tools:
            ex.warnings.append(f"tools/list lists {_short(name)} twice")
            continue
        tools[name] = ToolInfo(name=name, required_inputs=_required_inputs(item))


def _required_inputs(tool: JsonObject) -> tuple[str, ...]:
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    if not isinstance(required, list):
        return ()
    return tuple(str(name) for name in required if isinstance(name, str))


# --- requests over Streamable HTTP or legacy SSE ---------------------------------------------


async def _call(ex: _Exchange, method: str, params: JsonObject | None) -> JsonObject:
    """Send a request on the session and return its result; errors become CheckFailed."""
    if ex.legacy is not None:
        return await _legacy_call(ex, method, params)
    answer = await _post_request(ex, method, params)
    if answer.message is None:
        raise _later_failure(ex, answer, method)
    error = jsonrpc.error_of(answer.message)
    if error is not None:
        raise _rpc_failure(method, error)
    return _result_of(answer.message, method)


async def _notify(ex: _Exchange, method: str) -> None:
    body = jsonrpc.encode_outgoing(jsonrpc.notification(method))
    url = ex.legacy.endpoint if ex.legacy is not None else ex.url
    response = await _post(ex, url, body, initialize=False)
    if response.status_code in (401, 403):
        await ex.conn.discard(response)
        _refused(ex, response, url)
    if not 200 <= response.status_code < 300:
        answer = await _answer_from_error(ex, response)
        raise _later_failure(ex, answer, method)
    await ex.conn.discard(response)


def _later_failure(ex: _Exchange, answer: _Answer, method: str) -> Exception:
    """Return what to raise for a non-2xx answer after initialize: a 404 to a request that
    carried a session id means the session ended (spec: start a new one), else a failure."""
    failure = _status_failure(answer, method)
    if answer.status == 404 and ex.session_id is not None and ex.legacy is None:
        return _SessionExpired(method, failure)
    return failure


async def _post_request(ex: _Exchange, method: str, params: JsonObject | None) -> _Answer:
    request_id = ex.take_id()
    body = jsonrpc.encode_outgoing(jsonrpc.request(request_id, method, params))
    response = await _post(ex, ex.url, body, initialize=method == "initialize")
    status = response.status_code
    if status in (401, 403):
        await ex.conn.discard(response)
        _refused(ex, response, ex.url)
    if not 200 <= status < 300:
        return await _answer_from_error(ex, response)
    ex.pending_session = response.headers.get("mcp-session-id") if method == "initialize" else None
    try:
        message = await _read_response(ex, response, request_id, method)
    finally:
        await response.aclose()
    return _Answer(status=status, headers=response.headers, message=message, mtype=media_type(response))


def _refused(ex: _Exchange, response: Response, url: httpx.URL) -> NoReturn:
    """Raise for a 401 or 403: the key was refused, or (keyless 401) sign-in discovery starts."""
    status = response.status_code
    if ex.config.has_key:
        raise CheckFailed(
            FailureKind.KEY_REFUSED, f"The server refused the key (HTTP {status})", http_status=status
        )
    if status == 401:
        raise _NeedsSignIn(url, response.headers.get_list("www-authenticate"))
    raise CheckFailed(
        FailureKind.HTTP_STATUS, f"HTTP 403 on {ex.phase}: the server forbids access", http_status=403
    )


async def _answer_from_error(ex: _Exchange, response: Response) -> _Answer:
    body = await ex.conn.read_body(response)
    return _Answer(
        status=response.status_code, headers=response.headers, body=body, mtype=media_type(response)
    )


async def _post(ex: _Exchange, url: httpx.URL, body: bytes, *, initialize: bool) -> Response:
    """POST ``body`` and return the response, following up to 3 same-host 307/308 redirects.

    A redirect moves the session's endpoint for good (Starlette's ``/mcp`` → ``/mcp/``).
    """
    for _hop in range(MAX_REDIRECTS + 1):
        response = await ex.conn.send("POST", url, headers=_headers(ex, initialize=initialize), content=body)
        if response.status_code not in REDIRECT_STATUSES:
            if ex.legacy is None:
                ex.url = url
            return response
        await ex.conn.discard(response)
        url = _mcp_redirect(url, response)
    raise CheckFailed(FailureKind.REDIRECT_REFUSED, f"Redirect refused: more than {MAX_REDIRECTS} redirects")


def _mcp_redirect(url: httpx.URL, response: Response) -> httpx.URL:
    """Return a redirect's target if an MCP client may follow it: same host, 307 or 308 only."""
    status = response.status_code
    target = redirect_target(url, response)
    shown = shown_url(target)
    if host_of(target) != host_of(url):
        raise CheckFailed(
            FailureKind.REDIRECT_REFUSED, f"Redirect to another host refused: {shown}", http_status=status
        )
    if status not in (307, 308):
        raise CheckFailed(
            FailureKind.REDIRECT_REFUSED,
            f"Redirect refused: HTTP {status} would turn the POST into a GET (only 307 and 308 keep it): {shown}",
            http_status=status,
        )
    return target


def _customer_headers(ex: _Exchange) -> list[tuple[str, str]]:
    """Return the configured headers, without those the exchange owns."""
    return [(name, value) for name, value in ex.config.headers if name.lower() not in _MANAGED_HEADERS]


def _headers(ex: _Exchange, *, initialize: bool) -> list[tuple[str, str]]:
    headers = _customer_headers(ex)
    headers.append(("Accept", "application/json, text/event-stream"))
    headers.append(("Content-Type", "application/json"))
    # Both go on everything after initialize (notifications, pages, ping answers, DELETE),
    # never on initialize itself: a fresh initialize must not look like part of a session.
    if not initialize:
        if ex.session_id is not None:
            headers.append(("Mcp-Session-Id", ex.session_id))
        if ex.protocol is not None:
            headers.append(("MCP-Protocol-Version", ex.protocol))
    return headers


async def _read_response(ex: _Exchange, response: Response, request_id: int, method: str) -> JsonObject:
    """Return the JSON-RPC response to ``request_id`` from a 2xx answer, JSON or event stream."""
    mtype = media_type(response)
    if mtype == "text/event-stream":
        return await _response_from_stream(ex, _EventReader(response), request_id, method)
    if mtype == "application/json" or mtype.endswith("+json"):
        body = await ex.conn.read_body(response)
        return _response_from_json(body, request_id, method)
    if response.status_code in (202, 204) or (not mtype and response.headers.get("content-length") == "0"):
        raise CheckFailed(
            FailureKind.PROTOCOL,
            f"The server accepted {method} (HTTP {response.status_code}) without answering it",
            http_status=response.status_code,
        )
    shown = "an HTML page" if "html" in mtype else (mtype or "an answer without a content type")
    raise CheckFailed(
        FailureKind.NOT_MCP,
        f"Not an MCP endpoint: {method} was answered with {shown}",
        http_status=response.status_code,
    )


def _response_from_json(body: bytes, request_id: int, method: str) -> JsonObject:
    if not body.strip():
        raise CheckFailed(FailureKind.PROTOCOL, f"The answer to {method} is empty")
    try:
        payload = json.loads(body)
    except ValueError:
        raise CheckFailed(FailureKind.PROTOCOL, f"The answer to {method} is not valid JSON") from None
    messages = jsonrpc.messages_in(payload)
    for message in messages:
        if jsonrpc.is_response(message) and jsonrpc.same_id(request_id, message.get("id")):
            return message
    for message in messages:
        # An error whose id the server could not read (null or absent) answers what we sent.
        if jsonrpc.is_response(message) and message.get("id") is None and "error" in message:
            return message
    if not any(jsonrpc.looks_like_jsonrpc(message) for message in messages):
        raise CheckFailed(
            FailureKind.NOT_MCP, f"Not an MCP endpoint: the answer to {method} is JSON but not JSON-RPC"
        )
    raise CheckFailed(
        FailureKind.PROTOCOL, f"The answer to {method} carries no response with id {request_id}"
    )


class _EventReader:
    """Read events from an event-stream response, within the byte and event caps."""

    def __init__(self, response: Response) -> None:
        self.response = response
        self._parser = SseParser()
        self._ready: list[SseEvent] = []
        self._size = 0
        self._count = 0
        self._ended = False

    async def next(self) -> SseEvent | None:
        """Return the next event, or None when the stream has ended."""
        while not self._ready:
            if self._ended:
                return None
            try:
                chunk = await self.response.read_chunk()
            except WireError:
                # A connection dropped mid-stream ends the stream as surely as a clean close.
                self._ended = True
                continue
            if not chunk:
                self._ended = True
                self._ready.extend(self._parser.close())
                continue
            self._size += len(chunk)
            if self._size > MAX_BODY_BYTES:
                raise CheckFailed(FailureKind.TOO_LARGE, too_large_words(MAX_BODY_BYTES))
            self._ready.extend(self._parser.feed(chunk))
        self._count += 1
        if self._count > MAX_EVENTS:
            raise CheckFailed(
                FailureKind.PROTOCOL,
                f"The event stream sent more than {MAX_EVENTS} events without the answer",
            )
        return self._ready.pop(0)

    async def aclose(self) -> None:
        await self.response.aclose()


async def _response_from_stream(
    ex: _Exchange, events: _EventReader, request_id: int, method: str
) -> JsonObject:
    """Read the stream up to the response to ``request_id``; answer pings, skip everything else.

    A POST's stream is then finished: kept with its connection when the server ends it at
    once (as it should after the response), closed otherwise. The legacy GET stream stays open.
    """
    own_stream = ex.legacy is None or events is not ex.legacy.events
    try:
        while (event := await events.next()) is not None:
            if event.event != "message" or not event.data.strip():
                continue  # priming events, keep-alives and foreign event types
            for message in _messages_in_event(event, method):
                if jsonrpc.is_response(message) and jsonrpc.same_id(request_id, message.get("id")):
                    if isinstance(message.get("id"), str):
                        ex.warnings.append(f"The server echoed the {method} id as a string")
                    if own_stream:
                        await ex.conn.finish(events.response)
                    return message
                if jsonrpc.is_request(message) and message.get("method") == "ping":
                    await _answer_ping(ex, message["id"])
    finally:
        if own_stream:
            await events.aclose()
    raise CheckFailed(FailureKind.PROTOCOL, f"The event stream ended without the answer to {method}")


def _messages_in_event(event: SseEvent, method: str) -> list[JsonObject]:
    try:
        payload = json.loads(event.data)
    except ValueError:
        raise CheckFailed(
            FailureKind.PROTOCOL, f"The event stream for {method} carried an event that is not JSON"
        ) from None
    return jsonrpc.messages_in(payload)


async def _answer_ping(ex: _Exchange, request_id: Any) -> None:
    """Answer a server ping with an empty result, best effort: a ping never decides the check."""
    if (
        ex.pings_answered >= MAX_PING_ANSWERS
        or isinstance(request_id, bool)
        or not isinstance(request_id, int | str)
    ):
        return
    ex.pings_answered += 1
    body = jsonrpc.encode_outgoing(jsonrpc.ping_answer(request_id))
    url = ex.legacy.endpoint if ex.legacy is not None else ex.url
    headers = _headers(ex, initialize=False)
    if ex.session_id is None and ex.pending_session and _SESSION_ID.match(ex.pending_session):
        headers.append(("Mcp-Session-Id", ex.pending_session))
    with contextlib.suppress(CheckFailed):
        response = await ex.conn.send("POST", url, headers=headers, content=body)
        await ex.conn.discard(response)


def _result_of(message: JsonObject, method: str) -> JsonObject:
    result = message.get("result")
    if not isinstance(result, dict):
        raise CheckFailed(FailureKind.PROTOCOL, f"The {method} response has no result object")
    return result


def _error_in_body(body: bytes) -> RpcError | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    for message in jsonrpc.messages_in(payload):
        error = jsonrpc.error_of(message)
        if error is not None:
            return error
    return None


def _status_failure(answer: _Answer, method: str) -> CheckFailed:
    error = _error_in_body(answer.body) if answer.body else None
    if error is not None:
        detail = (
            f"{_short(error.message, 200)} ({error.code})"
            if error.code is not None
            else _short(error.message, 200)
        )
    else:
        detail = text_message(answer.body, answer.mtype)
    reason = f"HTTP {answer.status} on {method}" + (f": {detail}" if detail else "")
    return CheckFailed(FailureKind.HTTP_STATUS, reason, http_status=answer.status)


def _rpc_failure(method: str, error: RpcError) -> CheckFailed:
    message = _short(error.message, 200) or "no message"
    code = f" (code {error.code})" if error.code is not None else ""
    return CheckFailed(FailureKind.JSONRPC_ERROR, f"{method} failed: {message}{code}")


def _short(value: object, limit: int = 60) -> str:
    return sanitize(value if isinstance(value, str) else repr(value), limit)


# --- legacy HTTP+SSE (2024-11-05) ------------------------------------------------------------


async def _open_legacy(ex: _Exchange) -> bool:
    """Return whether a legacy HTTP+SSE server answers a GET of the URL with an ``endpoint`` event."""
    headers = _customer_headers(ex)
    headers.append(("Accept", "text/event-stream"))
    response = await ex.conn.send("GET", ex.url, headers=headers)
    if response.status_code in (401, 403):
        await ex.conn.discard(response)
        _refused(ex, response, ex.url)
    if response.status_code != 200 or media_type(response) != "text/event-stream":
        await response.aclose()
        return False
    events = _EventReader(response)
    first = await events.next()
    while first is not None and not first.data.strip():
        first = await events.next()
    if first is None or first.event != "endpoint":
        await events.aclose()
        return False
    try:
        endpoint = ex.url.join(first.data.strip())
    except httpx.InvalidURL:
        await events.aclose()
        return False
    if not same_origin(endpoint, ex.url):
        await events.aclose()
        raise CheckFailed(
            FailureKind.REDIRECT_REFUSED,
            f"The legacy SSE endpoint is on another origin, refused: {shown_url(endpoint)}",
        )
    ex.legacy = _Legacy(response=response, events=events, endpoint=endpoint)
    ex.transport = Transport.SSE
    return True


async def _legacy_call(ex: _Exchange, method: str, params: JsonObject | None) -> JsonObject:
    """POST a request to the legacy endpoint (answered 202) and read its response from the GET stream."""
    assert ex.legacy is not None
    request_id = ex.take_id()
    body = jsonrpc.encode_outgoing(jsonrpc.request(request_id, method, params))
    response = await _post(ex, ex.legacy.endpoint, body, initialize=method == "initialize")
    if response.status_code in (401, 403):
        await ex.conn.discard(response)
        _refused(ex, response, ex.url)
    if not 200 <= response.status_code < 300:
        answer = await _answer_from_error(ex, response)
        raise _status_failure(answer, method)
    await ex.conn.discard(response)
    message = await _response_from_stream(ex, ex.legacy.events, request_id, method)
    error = jsonrpc.error_of(message)
    if error is not None:
        if method == "initialize" and _rejects_version(error):
            raise _VersionRejected(error)
        raise _rpc_failure(method, error)
    return _result_of(message, method)


# --- the end of a session --------------------------------------------------------------------


async def _end_session(ex: _Exchange, deadline: float) -> None:
    """Close the legacy stream or DELETE the session, within what is left of the deadline.

    Best effort: the result is already decided, and 404 or 405 (or no answer) is fine.
    """
    if ex.legacy is not None:
        with contextlib.suppress(Exception):
            await ex.legacy.events.aclose()
        return
    if ex.session_id is None:
        return
    headers = _headers(ex, initialize=False)
    with contextlib.suppress(CheckFailed, OSError, TimeoutError):
        async with asyncio.timeout_at(deadline):
            response = await ex.conn.send("DELETE", ex.url, headers=headers)
            await response.aclose()
