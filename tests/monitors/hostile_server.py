"""Serve hostile MCP targets on loopback, one per class of attack, for the worker's isolation tests.

Each path is a target built to hurt the check that visits it, or the batch around it:

- ``/poison/mcp``: an MCP server whose name, version, tool names and inputs carry NUL and lone
  surrogates (text a database refuses);
- ``/poison-error/mcp``: initialize answered with a JSON-RPC error whose message carries them;
- ``/flood/mcp``: tools/list pages of 9,000 tools each, without end;
- ``/deep/mcp``: an initialize answer nested 200,000 levels deep;
- ``/echo/mcp``: a 500 echoing the Authorization header it got, upper-cased, base64-encoded and
  straddling a cut;
- ``/redirect/mcp`` and ``/redirect/page``: a 307/302 to the *collector* (another port of this
  host), which records every Authorization and X-Api-Key header it is sent.

``silent_dns()`` serves DNS that answers ``healthy*`` names and never answers ``silent*`` ones.

Everything a check sends is recorded (``requests``) so a test can see what reached a target.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

POISON = "evil\u0000name\ud800"
# Each page is well under every per-answer cap; only the pages together are too many.
FLOOD_PAGE = 9_000
DEEP = 200_000


@dataclass
class Seen:
    """Hold what the targets were sent: (path, method, secret headers) per request."""

    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, path: str, method: str, headers: dict[str, str]) -> None:
        with self.lock:
            self.requests.append((path, method, headers))

    def secrets_sent_to(self, prefix: str) -> list[dict[str, str]]:
        with self.lock:
            return [
                headers for path, _method, headers in self.requests if path.startswith(prefix) and headers
            ]


def _init_result(name: str = "hostile", version: str = "1") -> dict[str, Any]:
    return {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": version},
    }


def _tool(name: str, *required: str) -> dict[str, Any]:
    return {
        "name": name,
        "inputSchema": {
            "type": "object",
            "properties": {r: {"type": "string"} for r in required},
            "required": list(required),
        },
    }


class _Handler(BaseHTTPRequestHandler):
    seen: Seen
    collector_url: str
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _record(self) -> None:
        secret = {
            k.lower(): v for k, v in self.headers.items() if k.lower() in ("authorization", "x-api-key")
        }
        self.seen.add(self.path, self.command, secret)

    def _send(self, status: int, body: bytes = b"", *, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, message_id: Any, result: Any = None, *, error: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id}
        message.update({"error": error} if error is not None else {"result": result})
        # ensure_ascii: a lone surrogate travels as its \ud800 escape, as a hostile server sends it.
        self._send(
            200,
            json.dumps(message).encode(),
            headers={"content-type": "application/json", "mcp-session-id": "s1"},
        )

    def do_GET(self) -> None:
        self._record()
        if self.path == "/redirect/page":
            self._send(302, headers={"location": self.collector_url + "/collected/page"})
            return
        if self.path.startswith("/collected"):
            self._send(200, b"collected", headers={"content-type": "text/plain"})
            return
        self._send(405)

    def do_DELETE(self) -> None:
        self._record()
        self._send(200)

    def do_POST(self) -> None:
        self._record()
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path == "/redirect/mcp":
            self._send(307, headers={"location": self.collector_url + "/collected/mcp"})
            return
        if self.path == "/echo/mcp":
            key = self.headers.get("authorization", "").removeprefix("Bearer ")
            echoed = " ".join((key.upper(), base64.b64encode(key.encode()).decode(), "x" * 190 + key))
            self._send(500, echoed.encode(), headers={"content-type": "text/plain"})
            return
        message = json.loads(body)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            self._send(202)
            return
        route = self.path.split("/")[1]
        if route == "deep" and method == "initialize":
            # Written out: json.dumps of the nesting would itself recurse too deep.
            text = (
                '{"jsonrpc":"2.0","id":'
                + json.dumps(message_id)
                + ',"result":'
                + "[" * DEEP
                + "]" * DEEP
                + "}"
            )
            self._send(200, text.encode(), headers={"content-type": "application/json"})
        elif route == "poison-error" and method == "initialize":
            self._json(message_id, error={"code": -32603, "message": f"broken {POISON}"})
        elif method == "initialize":
            self._json(message_id, _init_result(POISON, POISON) if route == "poison" else _init_result())
        elif route == "poison":
            self._json(message_id, {"tools": [_tool(POISON, POISON), _tool("ok\u0000"), _tool("\udfff")]})
        elif route == "flood":
            cursor = (message.get("params") or {}).get("cursor") or "0"
            page = int(cursor)
            tools = [_tool(f"t{page}_{index}") for index in range(FLOOD_PAGE)]
            self._json(message_id, {"tools": tools, "nextCursor": str(page + 1)})
        else:
            self._json(message_id, {"tools": [_tool("search", "q")]})


@contextmanager
def hostile_targets() -> Iterator[tuple[str, Seen]]:
    """Serve the targets and their collector on loopback; yield the targets' base URL and what was seen."""
    seen = Seen()
    servers = []
    collector = ThreadingHTTPServer(
        ("127.0.0.1", 0), type("Collector", (_Handler,), {"seen": seen, "collector_url": ""})
    )
    collector_url = f"http://127.0.0.1:{collector.server_address[1]}"
    handler = type("Targets", (_Handler,), {"seen": seen, "collector_url": collector_url})
    targets = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    for server in (collector, targets):
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    try:
        yield f"http://127.0.0.1:{targets.server_address[1]}", seen
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


class _Dns(threading.Thread):
    """Answer A queries for ``healthy*`` names with 127.0.0.1 and never answer ``silent*`` ones."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                data, peer = self.sock.recvfrom(512)
            except OSError:
                return
            answer = _dns_answer(data)
            if answer is not None:
                self.sock.sendto(answer, peer)

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()


def _dns_answer(query: bytes) -> bytes | None:
    """Return the answer to a one-question query, or None for a name that must never be answered."""
    labels, offset = [], 12
    while query[offset]:
        length = query[offset]
        labels.append(query[offset + 1 : offset + 1 + length].decode())
        offset += 1 + length
    qtype = struct.unpack("!H", query[offset + 1 : offset + 3])[0]
    question = query[12 : offset + 5]
    if labels[0].startswith("silent"):
        return None
    records = b""
    if qtype == 1 and labels[0].startswith("healthy"):  # A; AAAA and others: no data
        records = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton("127.0.0.1")
    header = query[:2] + struct.pack("!HHHHH", 0x8180, 1, 1 if records else 0, 0, 0)
    return header + question + records


@contextmanager
def silent_dns() -> Iterator[str]:
    """Serve DNS on loopback that answers ``healthy*`` names and never ``silent*`` ones; yield host:port."""
    server = _Dns()
    server.start()
    try:
        yield server.address
    finally:
        server.stop()
