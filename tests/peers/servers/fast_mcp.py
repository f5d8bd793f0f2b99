"""Serve a minimal, cheap MCP endpoint for the client benchmark (``python tests/bench/engine.py``).

The official SDK server spends 5-7 ms of CPU on every check, more than the client under test,
so it cannot feed a benchmark of the client. This server is raw asyncio with a hand-written
HTTP/1.1 parser and pre-encoded answers: about a tenth of that per check. It speaks the
Streamable HTTP transport in JSON-response mode (``--sse`` answers as text/event-stream
instead, with a priming event as 2025-11-25 servers send): initialize assigns a session,
notifications get 202, tools/list answers a fixed list of ``--tools`` tools, DELETE ends the
session, GET gets 405. It is a benchmark fixture, not a conformant server: no sessions are
kept, and every request on ``/mcp`` is answered.

Usage: ``python tests/peers/servers/fast_mcp.py [--host 127.0.0.1] [--port 0] [--sse]
[--tools 8]``; prints "http://HOST:PORT/mcp" on its first stdout line, then serves until killed.
Pin it to its own core (``taskset -c 1``) so the benchmark's process CPU is the client's alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import socket

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MAX_HEAD = 16 * 1024
MAX_BODY = 1024 * 1024


def _tools(count: int) -> list[dict[str, object]]:
    return [
        {
            "name": f"tool_{index}",
            "description": f"Benchmark tool number {index}.",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            "annotations": {"readOnlyHint": True},
        }
        for index in range(count)
    ]


class Answers:
    """Pre-encode everything but the request id, so a request costs one json.loads."""

    def __init__(self, tools: int, sse: bool) -> None:
        self.sse = sse
        self.content_type = b"text/event-stream" if sse else b"application/json"
        self.tools = json.dumps({"tools": _tools(tools)}, separators=(",", ":")).encode()
        self.init = {
            version: json.dumps(
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "uptimy-fast-mcp", "version": "1.0"},
                },
                separators=(",", ":"),
            ).encode()
            for version in VERSIONS
        }
        self.sessions = itertools.count(1)

    def result(self, request_id: object, result: bytes) -> bytes:
        body = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":' + result + b"}"
        if self.sse:
            return b"id: 0\ndata:\n\nevent: message\ndata: " + body + b"\n\n"
        return body


def _response(status: bytes, headers: list[bytes], body: bytes, keep_alive: bool) -> bytes:
    head = [b"HTTP/1.1 " + status, b"content-length: " + str(len(body)).encode(), *headers]
    if not keep_alive:
        head.append(b"connection: close")
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class McpProtocol(asyncio.Protocol):
    def __init__(self, answers: Answers) -> None:
        self.answers = answers
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.transport is not None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    self._close()
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            try:
                method, path, version = head[0].split(" ", 2)
            except ValueError:
                self._close()
                return
            headers = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0") or 0)
            if length > MAX_BODY:
                self._close()
                return
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            keep_alive = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
            self.transport.write(self.answer(method, path.split("?", 1)[0], body, keep_alive))
            if not keep_alive:
                self._close()

    def answer(self, method: str, path: str, body: bytes, keep_alive: bool) -> bytes:
        answers = self.answers
        if path != "/mcp":
            return _response(b"404 Not Found", [], b"", keep_alive)
        if method == "DELETE":
            return _response(b"200 OK", [], b"", keep_alive)
        if method != "POST":
            return _response(b"405 Method Not Allowed", [b"allow: POST, DELETE"], b"", keep_alive)
        try:
            message = json.loads(body)
        except ValueError:
            return _response(b"400 Bad Request", [], b"", keep_alive)
        rpc = message.get("method") if isinstance(message, dict) else None
        if "id" not in message or rpc is None:
            return _response(b"202 Accepted", [], b"", keep_alive)
        content_type = b"content-type: " + answers.content_type
        if rpc == "initialize":
            asked = (message.get("params") or {}).get("protocolVersion")
            result = answers.init.get(asked, answers.init[VERSIONS[0]])
            session = b"mcp-session-id: fast%032x" % next(answers.sessions)
            return _response(
                b"200 OK", [content_type, session], answers.result(message["id"], result), keep_alive
            )
        if rpc == "tools/list":
            return _response(
                b"200 OK", [content_type], answers.result(message["id"], answers.tools), keep_alive
            )
        error = json.dumps(
            {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        ).encode()
        return _response(b"200 OK", [b"content-type: application/json"], error, keep_alive)

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve(host: str, port: int, answers: Answers) -> None:
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(4096)
    server = await loop.create_server(lambda: McpProtocol(answers), sock=sock, backlog=4096)
    print(f"http://{host}:{sock.getsockname()[1]}/mcp", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tools", type=int, default=8)
    parser.add_argument("--sse", action="store_true", help="answer requests as text/event-stream")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.host, args.port, Answers(args.tools, args.sse)))


if __name__ == "__main__":
    main()
