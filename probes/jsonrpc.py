"""Build the few JSON-RPC messages a check may send, and read the ones servers send back.

:func:`encode_outgoing` is the single gate every outgoing MCP message passes: a check sends
``initialize``, ``notifications/initialized``, ``tools/list`` and the empty answer to a server
``ping``, and nothing else, whatever a bug elsewhere asks for. Above all never ``tools/call``:
a monitor that calls tools would act on the customer's systems every minute.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from probes.redact import clip

ALLOWED_METHODS = frozenset({"initialize", "notifications/initialized", "tools/list"})

# The deepest nesting of arrays and objects a check parses. MCP answers and OAuth metadata
# nest a dozen levels at most (a tool's inputSchema is the deepest part); 64 leaves room for
# rich schemas while staying far below the ~1000 levels where Python's parser (and any code
# walking the result) hits the recursion limit and raises RecursionError.
MAX_JSON_DEPTH = 64
# Brackets outside strings, as +1 and -1 (signed bytes), everything else dropped.
_BRACKET_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")

JsonObject = dict[str, Any]
RequestId = int | str


class ForbiddenMessage(Exception):
    """Refuse a message outside the allowlist: trying to send one is always a bug."""


class JsonTooDeep(Exception):
    """Refuse JSON nested deeper than MAX_JSON_DEPTH; the message completes "The answer to X …".

    Not a ValueError on purpose: code that reads "not valid JSON" from a ValueError must not
    swallow this one and carry on with a body it never read.
    """

    def __init__(self) -> None:
        super().__init__(
            f"nests arrays and objects more than {MAX_JSON_DEPTH} levels deep, past the limit a check reads"
        )


def read_json(data: bytes | str) -> Any:
    """Return the value of a JSON text a server sent: every body the engine parses comes here.

    Raises ValueError when it is not JSON and :class:`JsonTooDeep` when it nests deeper than
    MAX_JSON_DEPTH, found by a scan that neither recurses nor builds anything, so hostile
    nesting (200,000 levels) never reaches the parser's recursion.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    # Fewer openers than the limit cannot nest past it: small answers skip the scan.
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH:
        encoding = json.detect_encoding(raw)
        if encoding not in ("utf-8", "utf-8-sig"):
            # UTF-16 or UTF-32 (as json.loads accepts): scan the text in UTF-8, where a
            # bracket or a quote is one byte and no other character contains that byte.
            raw = raw.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
        if _nesting(raw) > MAX_JSON_DEPTH:
            raise JsonTooDeep
    return json.loads(data)


def _nesting(raw: bytes) -> int:
    """Return how deep the arrays and objects of a UTF-8 JSON text nest (brackets in strings not counted)."""
    # Drop escape pairs first (left to right, as JSON pairs them), so the quotes left are the
    # ones that open and close strings; every other piece of the split is outside a string.
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])
    signs = outside.translate(_BRACKET_SIGNS, _NOT_BRACKETS)
    return max(itertools.accumulate(memoryview(signs).cast("b")), default=0)


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
