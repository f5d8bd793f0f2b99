"""Build the few JSON-RPC messages a check may send, and read the ones servers send back.

:func:`encode_outgoing` is the single gate every outgoing MCP message passes: a check sends
``initialize``, ``notifications/initialized``, ``tools/list`` and the empty answer to a server
``ping``, and nothing else, whatever a bug elsewhere asks for. Above all never ``tools/call``:
a monitor that calls tools would act on the customer's systems every minute.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from probes.redact import clip

ALLOWED_METHODS = frozenset({"initialize", "notifications/initialized", "tools/list"})

JsonObject = dict[str, Any]
RequestId = int | str


class ForbiddenMessage(Exception):
    """Refuse a message outside the allowlist: trying to send one is always a bug."""


def encode_outgoing(message: JsonObject) -> bytes:
    """Return the wire form of ``message`` after checking it against the allowlist."""
    method = message.get("method")
    if method is None:
        if message.get("result") != {} or "error" in message or "id" not in message:
            raise ForbiddenMessage("a check only answers server pings, with an empty result")
    elif method not in ALLOWED_METHODS:
        raise ForbiddenMessage(f"a check never sends {method!r}")
    return json.dumps(message, separators=(",", ":")).encode()


def request(request_id: int, method: str, params: JsonObject | None = None) -> JsonObject:
    """Return a JSON-RPC request object (checked only when it is encoded)."""
    message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str) -> JsonObject:
    return {"jsonrpc": "2.0", "method": method}


def ping_answer(request_id: RequestId) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "result": {}}


@dataclass(frozen=True, slots=True)
class RpcError:
    """Hold a JSON-RPC error object as the server sent it."""

    code: int | None
    message: str
    data: Any = None


def is_request(message: JsonObject) -> bool:
    return isinstance(message.get("method"), str) and "id" in message


def is_response(message: JsonObject) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def same_id(sent: int, received: object) -> bool:
    """Return whether ``received`` answers request ``sent`` (an id echoed as a string counts)."""
    if isinstance(received, bool):
        return False
    if received == sent:
        return True
    return isinstance(received, str) and received.strip() == str(sent)


def error_of(message: JsonObject) -> RpcError | None:
    """Return the error a response carries, or None for a success."""
    if "error" not in message:
        return None
    error = message["error"]
    if not isinstance(error, dict):
        return RpcError(None, clip(str(error), 200))
    code = error.get("code")
    raw_message = error.get("message")
    return RpcError(
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        raw_message if isinstance(raw_message, str) else "",
        error.get("data"),
    )


def messages_in(payload: object) -> list[JsonObject]:
    """Return the JSON-RPC objects in a parsed body: one object, or a 2025-03-26 batch array."""
    if isinstance(payload, dict):
        return [payload]
    if isinstance(payload, list):
        return [item for item in payload if isinstance(item, dict)]
    return []


def looks_like_jsonrpc(message: JsonObject) -> bool:
    return message.get("jsonrpc") == "2.0" or "result" in message or "error" in message or "method" in message
