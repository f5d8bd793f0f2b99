"""Send requests and notifications on an initialized session, whichever transport it runs on.

This sits above both transports so that the steps after initialize need not know which one the
server speaks, and it owns the one rule that holds only after initialize: a 404 to a request
that carried the session id means the server ended the session.
"""

from __future__ import annotations

from probes import jsonrpc
from probes.jsonrpc import JsonObject
from probes.mcp.exchange import Answer, Exchange, SessionExpired
from probes.mcp.legacy import legacy_call
from probes.mcp.transport import (
    answer_from_error,
    post,
    post_request,
    refused,
    result_of,
    rpc_failure,
    status_failure,
)


async def call(ex: Exchange, method: str, params: JsonObject | None) -> JsonObject:
    """Send a request on the session and return its result; errors become CheckFailed."""
    if ex.legacy is not None:
        return await legacy_call(ex, method, params)
    answer = await post_request(ex, method, params)
    if answer.message is None:
        raise _later_failure(ex, answer, method)
    error = jsonrpc.error_of(answer.message)
    if error is not None:
        raise rpc_failure(method, error)
    return result_of(answer.message, method)


async def notify(ex: Exchange, method: str) -> None:
    body = jsonrpc.encode_outgoing(jsonrpc.notification(method))
    url = ex.legacy.endpoint if ex.legacy is not None else ex.url
    response = await post(ex, url, body, initialize=False)
    if response.status_code in (401, 403):
        await ex.conn.discard(response)
        refused(ex, response, url)
    if not 200 <= response.status_code < 300:
        answer = await answer_from_error(ex, response)
        raise _later_failure(ex, answer, method)
    await ex.conn.discard(response)


def _later_failure(ex: Exchange, answer: Answer, method: str) -> Exception:
    """Return what to raise for a non-2xx answer after initialize: a 404 to a request that
    carried a session id means the session ended (spec: start a new one), else a failure."""
    failure = status_failure(answer, method)
    if answer.status == 404 and ex.session_id is not None and ex.legacy is None:
        return SessionExpired(method, failure)
    return failure
