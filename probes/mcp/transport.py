"""Carry one JSON-RPC message over HTTP and turn what comes back into a message or a failure.

Own the wire rules every step shares: which headers go on a request and which a customer may
not override, which redirects an MCP client may follow, how a 2xx answer is read whether it is
JSON or an event stream (answering the pings met on the way), and how a refused or failed
answer becomes a sentence. Nothing here decides what the check does next; the steps that call
it do.
"""

from __future__ import annotations

import contextlib
from typing import Any, NoReturn

import httpx

from probes import jsonrpc
from probes.connection import (
    REDIRECT_STATUSES,
    CheckFailed,
    host_of,
    media_type,
    redirect_target,
    same_origin,
    sanitize,
    shown_url,
    text_message,
)
from probes.jsonrpc import JsonObject, RpcError
from probes.mcp.events import EventReader
from probes.mcp.exchange import SESSION_ID, Answer, Exchange, NeedsSignIn
from probes.sse import SseEvent
from probes.types import FailureKind
from probes.wire import Response

MAX_REDIRECTS = 3
MAX_PING_ANSWERS = 5
# Headers the exchange owns; a customer's header of the same name would break the protocol.
_MANAGED_HEADERS = frozenset(
    {"accept", "content-type", "content-length", "host", "mcp-session-id", "mcp-protocol-version"}
)


async def post_request(ex: Exchange, method: str, params: JsonObject | None) -> Answer:
    request_id = ex.take_id()
    body = jsonrpc.encode_outgoing(jsonrpc.request(request_id, method, params))
    response = await post(ex, ex.url, body, initialize=method == "initialize")
    status = response.status_code
    if status in (401, 403):
        await ex.conn.discard(response)
        refused(ex, response, ex.url)
    if not 200 <= status < 300:
        return await answer_from_error(ex, response)
    ex.pending_session = response.headers.get("mcp-session-id") if method == "initialize" else None
    try:
        message = await _read_response(ex, response, request_id, method)
    finally:
        await response.aclose()
    return Answer(status=status, headers=response.headers, message=message, mtype=media_type(response))


def refused(ex: Exchange, response: Response, url: httpx.URL) -> NoReturn:
    """Raise for a 401 or 403: the key was refused, or (keyless 401) sign-in discovery starts."""
    status = response.status_code
    if ex.config.has_key:
        raise CheckFailed(
            FailureKind.KEY_REFUSED, f"The server refused the key (HTTP {status})", http_status=status
        )
    if status == 401:
        raise NeedsSignIn(url, response.headers.get_list("www-authenticate"))
    raise CheckFailed(
        FailureKind.HTTP_STATUS, f"HTTP 403 on {ex.phase}: the server forbids access", http_status=403
    )


async def answer_from_error(ex: Exchange, response: Response) -> Answer:
    body = await ex.conn.read_body(response)
    return Answer(
        status=response.status_code, headers=response.headers, body=body, mtype=media_type(response)
    )


async def post(ex: Exchange, url: httpx.URL, body: bytes, *, initialize: bool) -> Response:
    """POST ``body`` and return the response, following up to 3 same-host 307/308 redirects.

    A redirect moves the session's endpoint for good (Starlette's ``/mcp`` → ``/mcp/``).
    """
    for _hop in range(MAX_REDIRECTS + 1):
        response = await ex.conn.send(
            "POST", url, headers=request_headers(ex, initialize=initialize), content=body
        )
        if response.status_code not in REDIRECT_STATUSES:
            if ex.legacy is None:
                ex.url = url
            return response
        await ex.conn.discard(response)
        url = _mcp_redirect(url, response, with_headers=bool(customer_headers(ex)))
    raise CheckFailed(FailureKind.REDIRECT_REFUSED, f"Redirect refused: more than {MAX_REDIRECTS} redirects")


def _mcp_redirect(url: httpx.URL, response: Response, *, with_headers: bool) -> httpx.URL:
    """Return a redirect's target if an MCP client may follow it: same host, 307 or 308 only.

    A check with headers follows only within its origin (scheme, host, port): its key must
    never reach a port or scheme the customer did not name, and an MCP exchange can't go on
    without it, so the redirect is refused rather than followed bare.
    """
    status = response.status_code
    target = redirect_target(url, response)
    shown = shown_url(target)
    if host_of(target) != host_of(url):
        raise CheckFailed(
            FailureKind.REDIRECT_REFUSED, f"Redirect to another host refused: {shown}", http_status=status
        )
    if with_headers and not same_origin(target, url):
        raise CheckFailed(
            FailureKind.REDIRECT_REFUSED,
            f"Redirect to another origin refused: {shown} (this check's headers go only to the origin configured)",
            http_status=status,
        )
    if status not in (307, 308):
        raise CheckFailed(
            FailureKind.REDIRECT_REFUSED,
            f"Redirect refused: HTTP {status} would turn the POST into a GET (only 307 and 308 keep it): {shown}",
            http_status=status,
        )
    return target


def customer_headers(ex: Exchange) -> list[tuple[str, str]]:
    """Return the configured headers, without those the exchange owns."""
    return [(name, value) for name, value in ex.config.headers if name.lower() not in _MANAGED_HEADERS]


def request_headers(ex: Exchange, *, initialize: bool) -> list[tuple[str, str]]:
    headers = customer_headers(ex)
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


async def _read_response(ex: Exchange, response: Response, request_id: int, method: str) -> JsonObject:
    """Return the JSON-RPC response to ``request_id`` from a 2xx answer, JSON or event stream."""
    mtype = media_type(response)
    if mtype == "text/event-stream":
        return await response_from_stream(ex, EventReader(response), request_id, method)
    if mtype == "application/json" or mtype.endswith("+json"):
        body = await ex.conn.read_body(response)
        return _response_from_json(ex, body, request_id, method)
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


def read_answer(ex: Exchange, data: bytes | str, what: str) -> Any:
    """Return the JSON value of one answer (``what`` names it in a sentence: "The answer to X").

    Count its bytes for the caps that span answers (``Exchange.answer_bytes``), refuse
    nesting past ``jsonrpc.MAX_JSON_DEPTH`` as a protocol failure, and check the deadline
    afterwards: parsing an answer that is already buffered never yields to the event loop.
    Raises ValueError when it is not JSON.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    ex.answer_bytes += len(raw)
    try:
        value = jsonrpc.read_json(raw)
    except jsonrpc.JsonTooDeep as deep:
        raise CheckFailed(FailureKind.PROTOCOL, f"{what} {deep}") from None
    ex.conn.check_deadline()
    return value


def _response_from_json(ex: Exchange, body: bytes, request_id: int, method: str) -> JsonObject:
    if not body.strip():
        raise CheckFailed(FailureKind.PROTOCOL, f"The answer to {method} is empty")
    try:
        payload = read_answer(ex, body, f"The answer to {method}")
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


async def response_from_stream(ex: Exchange, events: EventReader, request_id: int, method: str) -> JsonObject:
    """Read the stream up to the response to ``request_id``; answer pings, skip everything else.

    A POST's stream is then finished: kept with its connection when the server ends it at
    once (as it should after the response), closed otherwise. The legacy GET stream stays open.
    """
    own_stream = ex.legacy is None or events is not ex.legacy.events
    try:
        while (event := await events.next()) is not None:
            if event.event != "message" or not event.data.strip():
                continue  # priming events, keep-alives and foreign event types
            for message in _messages_in_event(ex, event, method):
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


def _messages_in_event(ex: Exchange, event: SseEvent, method: str) -> list[JsonObject]:
    try:
        payload = read_answer(ex, event.data, f"An event in the stream for {method}")
    except ValueError:
        raise CheckFailed(
            FailureKind.PROTOCOL, f"The event stream for {method} carried an event that is not JSON"
        ) from None
    return jsonrpc.messages_in(payload)


async def _answer_ping(ex: Exchange, request_id: Any) -> None:
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
    headers = request_headers(ex, initialize=False)
    if ex.session_id is None and ex.pending_session and SESSION_ID.match(ex.pending_session):
        headers.append(("Mcp-Session-Id", ex.pending_session))
    with contextlib.suppress(CheckFailed):
        response = await ex.conn.send("POST", url, headers=headers, content=body)
        await ex.conn.discard(response)


def result_of(message: JsonObject, method: str) -> JsonObject:
    result = message.get("result")
    if not isinstance(result, dict):
        raise CheckFailed(FailureKind.PROTOCOL, f"The {method} response has no result object")
    return result


def error_in_body(body: bytes, method: str) -> RpcError | None:
    """Return the JSON-RPC error an error answer to ``method`` carries, or None (not JSON-RPC)."""
    try:
        payload = jsonrpc.read_json(body)
    except ValueError:
        return None
    except jsonrpc.JsonTooDeep as deep:
        raise CheckFailed(FailureKind.PROTOCOL, f"The error answer to {method} {deep}") from None
    for message in jsonrpc.messages_in(payload):
        error = jsonrpc.error_of(message)
        if error is not None:
            return error
    return None


def status_failure(answer: Answer, method: str) -> CheckFailed:
    error = error_in_body(answer.body, method) if answer.body else None
    if error is not None:
        detail = (
            f"{short(error.message, 200)} ({error.code})"
            if error.code is not None
            else short(error.message, 200)
        )
    else:
        detail = text_message(answer.body, answer.mtype)
    reason = f"HTTP {answer.status} on {method}" + (f": {detail}" if detail else "")
    return CheckFailed(FailureKind.HTTP_STATUS, reason, http_status=answer.status)


def rpc_failure(method: str, error: RpcError) -> CheckFailed:
    message = short(error.message, 200) or "no message"
    code = f" (code {error.code})" if error.code is not None else ""
    return CheckFailed(FailureKind.JSONRPC_ERROR, f"{method} failed: {message}{code}")


def short(value: object, limit: int = 60) -> str:
    return sanitize(value if isinstance(value, str) else repr(value), limit)
