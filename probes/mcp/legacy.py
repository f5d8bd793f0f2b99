"""Speak the legacy HTTP+SSE transport (2024-11-05): requests POSTed, answers on one GET stream.

Kept apart from Streamable HTTP because its shape differs: the stream has to be found first (an
``endpoint`` event naming where to POST, same origin only), each POST is merely acknowledged,
and every answer arrives on the one stream that stays open for the whole session.
"""

from __future__ import annotations

import httpx

from probes import jsonrpc
from probes.connection import CheckFailed, media_type, same_origin, shown_url
from probes.jsonrpc import JsonObject
from probes.mcp.events import EventReader
from probes.mcp.exchange import Exchange, Legacy, VersionRejected, rejects_version
from probes.mcp.transport import (
    answer_from_error,
    customer_headers,
    post,
    refused,
    response_from_stream,
    result_of,
    rpc_failure,
    status_failure,
)
from probes.types import FailureKind, Transport


async def open_legacy(ex: Exchange) -> bool:
    """Return whether a legacy HTTP+SSE server answers a GET of the URL with an ``endpoint`` event."""
    headers = customer_headers(ex)
    headers.append(("Accept", "text/event-stream"))
    response = await ex.conn.send("GET", ex.url, headers=headers)
    if response.status_code in (401, 403):
        await ex.conn.discard(response)
        refused(ex, response, ex.url)
    if response.status_code != 200 or media_type(response) != "text/event-stream":
        await response.aclose()
        return False
    events = EventReader(response)
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
    ex.legacy = Legacy(response=response, events=events, endpoint=endpoint)
    ex.transport = Transport.SSE
    return True


async def legacy_call(ex: Exchange, method: str, params: JsonObject | None) -> JsonObject:
    """POST a request to the legacy endpoint (answered 202) and read its response from the GET stream."""
    assert ex.legacy is not None
    request_id = ex.take_id()
    body = jsonrpc.encode_outgoing(jsonrpc.request(request_id, method, params))
    response = await post(ex, ex.legacy.endpoint, body, initialize=method == "initialize")
    if response.status_code in (401, 403):
        await ex.conn.discard(response)
        refused(ex, response, ex.url)
    if not 200 <= response.status_code < 300:
        answer = await answer_from_error(ex, response)
        raise status_failure(answer, method)
    await ex.conn.discard(response)
    message = await response_from_stream(ex, ex.legacy.events, request_id, method)
    error = jsonrpc.error_of(message)
    if error is not None:
        if method == "initialize" and rejects_version(error):
            raise VersionRejected(error)
        raise rpc_failure(method, error)
    return result_of(message, method)
