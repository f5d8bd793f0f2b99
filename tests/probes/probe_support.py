"""Helpers for the check engine's tests: a scriptable fake MCP server for respx, real loopback
servers for sockets, TLS and time, a loop clock that can be frozen to move from timer to
timer, and certificates made on the spot.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import selectors
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import h11
import httpx
import respx

from probes.checks.http import HttpConfig
from probes.checks.mcp import McpConfig
from probes.runner import ProbeEnv, run_check
from probes.types import ProbeOutcome
from tests.clock import real_now

URL = "https://mcp.example.com/mcp"
PUBLIC_IP = "93.184.216.34"
TOOLS_CAP = {"tools": {"listChanged": True}}

# Tests about deadlines on real sockets wait on what the server sees (a request, the client
# closing), never on the wall clock; these bounds only turn a real hang into a failure, so a
# busy machine's stalls can't reach them.
HANG = 60.0  # seconds a loopback check may run before the test calls it hung
LONG_TIMEOUT = 30.0  # a check deadline that a check which must not wait for it never gets near

T = TypeVar("T")


# --- running checks --------------------------------------------------------------------------


def run(config: McpConfig | HttpConfig, env: ProbeEnv | None = None) -> ProbeOutcome:
    return asyncio.run(run_check(config, env or ProbeEnv()))


async def unless_hung(awaitable: Awaitable[T]) -> T:
    """Return what ``awaitable`` returns; fail if it still runs after HANG seconds (a real hang)."""
    guard = asyncio.timeout(HANG)
    try:
        async with guard:
            return await awaitable
    except TimeoutError:
        if guard.expired():
            raise AssertionError(f"still running after {HANG:g} s: the check hung") from None
        raise


class _JumpingSelector(selectors.BaseSelector):
    """Wait like the real selector, except on a frozen ControlledClockLoop: there, poll without
    blocking and, when nothing is ready, move the loop's clock to its next timer at once."""

    def __init__(self, loop: ControlledClockLoop) -> None:
        self._real = selectors.DefaultSelector()
        self._loop = loop

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def get_map(self) -> Any:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if not self._loop.frozen or timeout is None:  # no timer at all: only I/O can wake the loop
            return self._real.select(timeout)
        ready = self._real.select(0)
        if not ready and timeout > 0:
            self._loop.advance(timeout)
        return ready


class ControlledClockLoop(asyncio.SelectorEventLoop):
    """An event loop on the real clock until ``freeze()``; from then on ``time()`` moves only
    while the loop would wait, and then straight to its next timer.

    On a frozen clock, timers fire in the order of their deadlines and the loop's time counts
    only the time spent waiting on them, never CPU time or a busy machine's stalls. Freeze it
    only once no bytes in flight can change what is asserted: a jump to the next timer does not
    wait for them (a respx check has none; a loopback server can freeze it once the client is
    only waiting for an answer that will never come).
    """

    def __init__(self, *, frozen: bool = False) -> None:
        self._frozen_at: float | None = None
        super().__init__(_JumpingSelector(self))
        if frozen:
            self.freeze()

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def freeze(self) -> None:
        if self._frozen_at is None:
            self._frozen_at = time.monotonic()

    def advance(self, seconds: float) -> None:
        assert self._frozen_at is not None
        self._frozen_at += seconds

    def time(self) -> float:
        return time.monotonic() if self._frozen_at is None else self._frozen_at


def freeze_clock() -> None:
    """Freeze the running loop's clock (a ControlledClockLoop's): see ControlledClockLoop."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, ControlledClockLoop), "run the check on a ControlledClockLoop"
    loop.freeze()


def run_on_frozen_clock(
    config: McpConfig | HttpConfig, env: ProbeEnv | None = None
) -> tuple[ProbeOutcome, float]:
    """Run one respx check on a frozen ControlledClockLoop; return its outcome and the seconds it waited."""
    with asyncio.Runner(loop_factory=lambda: ControlledClockLoop(frozen=True)) as runner:
        loop = runner.get_loop()
        started = loop.time()
        outcome = runner.run(run_check(config, env or ProbeEnv()))
        return outcome, loop.time() - started


def mcp(uri: str = URL, **kwargs: Any) -> McpConfig:
    return McpConfig(uri=uri, **kwargs)


def sent_messages(router: respx.MockRouter) -> list[dict[str, Any]]:
    """Return every JSON-RPC message the checks POSTed through ``router``."""
    messages = []
    for call in router.calls:
        request = call.request
        if request.method == "POST" and request.content:
            try:
                payload = json.loads(request.content)
            except ValueError:
                continue
            if isinstance(payload, dict):
                messages.append(payload)
    return messages


# --- a scriptable MCP server for respx -------------------------------------------------------


def sse_event(message: dict[str, Any] | str, *, event: str | None = None, event_id: str | None = None) -> str:
    data = message if isinstance(message, str) else json.dumps(message)
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.extend(f"data: {line}" for line in data.split("\n"))
    return "\n".join(lines) + "\n\n"


def rpc_error(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def tool(name: str, *required: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "required": list(required)}}


@dataclass
class FakeMcp:
    """Answer MCP requests like a Streamable HTTP server; each knob is one behaviour under test."""

    tools: list[dict[str, Any]] = field(default_factory=lambda: [tool("search", "q"), tool("fetch", "url")])
    pages: list[list[dict[str, Any]]] | None = None
    cursors: list[str | None] | None = None
    capabilities: dict[str, Any] = field(default_factory=lambda: dict(TOOLS_CAP))
    protocol: str | None = None
    server_info: dict[str, Any] = field(default_factory=lambda: {"name": "acme-tools", "version": "3.2.0"})
    session: str | None = "sess-7c1e"
    sse: bool = False
    prelude: list[str] = field(default_factory=list)
    require_session: bool = False
    require_version: bool = False
    reject_versions: tuple[str, ...] = ()
    reject_with_supported: list[str] | None = None
    tools_list_status: int | None = None
    delete_status: int = 200
    # End the session (404 "Session not found", as SDK servers answer) at this method: the
    # first session only, or every session.
    expire_session_on: str | None = None
    expire_every_session: bool = False
    ended_sessions: set[str] = field(default_factory=set)
    negotiated: str | None = None
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "DELETE":
            return httpx.Response(self.delete_status)
        message = json.loads(request.content)
        method = message.get("method")
        if method != "initialize":
            refusal = self._session_refusal(request) or self._session_end(request, method)
            if refusal is not None:
                return refusal
        if method == "initialize":
            return self._initialize(message)
        if method is None or method.startswith("notifications/"):
            return httpx.Response(202)
        if method == "tools/list":
            if self.tools_list_status is not None:
                return httpx.Response(self.tools_list_status, headers={"www-authenticate": "Bearer"})
            return self._answer(message["id"], self._page(message.get("params") or {}))
        return self._answer(message["id"], error=rpc_error(-32601, "Method not found", message["id"]))

    def _session_refusal(self, request: httpx.Request) -> httpx.Response | None:
        if self.require_session and request.headers.get("mcp-session-id") != self.session:
            return httpx.Response(
                400, json=rpc_error(-32000, "Bad Request: Mcp-Session-Id header is required")
            )
        if self.require_version and request.headers.get("mcp-protocol-version") != self._version_for(None):
            return httpx.Response(400, json=rpc_error(-32000, "Bad Request: Unsupported protocol version"))
        return None

    def _session_end(self, request: httpx.Request, method: str | None) -> httpx.Response | None:
        sent = request.headers.get("mcp-session-id")
        ending = method == self.expire_session_on and (self.expire_every_session or not self.ended_sessions)
        if sent is not None and ending:
            self.ended_sessions.add(sent)
        if sent in self.ended_sessions:
            return httpx.Response(404, json=rpc_error(-32001, "Session not found"))
        return None

    def _version_for(self, asked: str | None) -> str:
        return self.protocol or self.negotiated or asked or "2025-11-25"

    def _initialize(self, message: dict[str, Any]) -> httpx.Response:
        asked = message["params"]["protocolVersion"]
        if asked in self.reject_versions:
            data = (
                {"supported": self.reject_with_supported, "requested": asked}
                if self.reject_with_supported
                else None
            )
            error = rpc_error(-32602, f"Unsupported protocol version: {asked}", message["id"], data)
            return self._answer(message["id"], error=error, headers={"mcp-session-id": "from-an-error"})
        self.negotiated = self.protocol or asked
        if self.session in self.ended_sessions:
            self.session = f"sess-{len(self.ended_sessions) + 1}"
        result = {
            "protocolVersion": self.negotiated,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        }
        headers = {"mcp-session-id": self.session} if self.session else {}
        return self._answer(message["id"], result, headers=headers)

    def _page(self, params: dict[str, Any]) -> dict[str, Any]:
        pages = self.pages or [self.tools]
        index = int(params["cursor"][1:]) if "cursor" in params else 0
        result: dict[str, Any] = {"tools": pages[index]}
        cursor = (
            self.cursors[index]
            if self.cursors is not None
            else (f"p{index + 1}" if index + 1 < len(pages) else None)
        )
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    def _answer(
        self,
        request_id: Any,
        result: dict[str, Any] | None = None,
        *,
        error: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        message = error if error is not None else {"jsonrpc": "2.0", "id": request_id, "result": result}
        if not self.sse:
            return httpx.Response(200, json=message, headers=headers)
        body = "".join(self.prelude) + sse_event(message)
        return httpx.Response(
            200, text=body, headers={"content-type": "text/event-stream", **(headers or {})}
        )

    def methods(self) -> list[str | None]:
        return [json.loads(r.content).get("method") if r.content else r.method for r in self.requests]


# --- respx behind the wire: the server side of a connection, in memory ----------------------


class RespxStream:
    """Play the server's side of one connection in memory, answering from a respx router.

    It stands in for the socket (``probes.connection.open_stream``), so a check runs its real
    HTTP/1.1 client: h11 here reads the bytes the check wrote, the router picks the answer, and
    h11 frames it back (a streamed body chunk by chunk, with chunked encoding when it has no
    length). Keep-alive, body framing and connection reuse are therefore the check's own.
    """

    def __init__(self, router: respx.MockRouter, address: str, port: int) -> None:
        self.router = router
        self.address = address
        self.port = port
        self.scheme = "http"
        self.server_hostname: str | None = None
        self.requests: list[httpx.Request] = []
        self.closed = False
        self._h11 = h11.Connection(h11.SERVER)
        self._body: AsyncIterator[bytes] | None = None

    def write(self, data: bytes) -> None:
        if self.closed:
            raise ConnectionResetError("closed")
        self._h11.receive_data(data)

    async def start_tls(self, context: ssl.SSLContext, server_hostname: str) -> None:
        self.scheme = "https"
        self.server_hostname = server_hostname

    def at_eof(self) -> bool:
        return self.closed or self._h11.our_state in (h11.MUST_CLOSE, h11.CLOSED)

    def close(self) -> None:
        self.closed = True
        self._body = None

    async def read(self) -> bytes:
        if self.closed or self._h11.our_state in (h11.MUST_CLOSE, h11.CLOSED):
            return b""
        if self._body is not None:
            chunk = await anext(self._body, None)
            if chunk is None:
                self._body = None
                return self._end()
            return self._send(h11.Data(data=chunk))
        request = self._request()
        response = await self.router.async_handler(request)
        head = self._send(
            h11.Response(
                status_code=response.status_code,
                headers=response.headers.raw,
                reason=response.reason_phrase.encode(),
            )
        )
        if request.method == "HEAD" or response.status_code in (204, 304):
            return head + self._end()
        try:
            content = response.content
        except httpx.ResponseNotRead:
            self._body = response.aiter_raw()
            return head
        body = self._send(h11.Data(data=content)) if content else b""
        return head + body + self._end()

    def _request(self) -> httpx.Request:
        method = target = b""
        headers: list[tuple[bytes, bytes]] = []
        body = b""
        while True:
            event = self._h11.next_event()
            if isinstance(event, h11.Request):
                method, target, headers = event.method, event.target, list(event.headers)
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
            else:
                raise AssertionError(f"the check read with no complete request written ({event!r})")
        host = next(value for name, value in headers if name == b"host").decode()
        url = f"{self.scheme}://{host}{target.decode()}"
        request = httpx.Request(method.decode(), url, headers=headers, content=body)
        self.requests.append(request)
        return request

    def _send(self, event: h11.Response | h11.Data | h11.EndOfMessage) -> bytes:
        return self._h11.send(event) or b""

    def _end(self) -> bytes:
        out = self._send(h11.EndOfMessage())
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
        return out


def respx_network(router: respx.MockRouter, streams: list[RespxStream]) -> Callable[..., Any]:
    """Return a replacement for ``probes.connection.open_stream`` that answers from ``router``."""

    async def open_stream(address: str, port: int) -> RespxStream:
        stream = RespxStream(router, address, port)
        streams.append(stream)
        return stream

    return open_stream


# --- real loopback servers -------------------------------------------------------------------


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    """Return (method, headers, body) of one HTTP/1.1 request."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method = lines[0].split(" ", 1)[0]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return method, headers, body


async def until_closed(reader: asyncio.StreamReader) -> None:
    """Read and drop whatever comes until the client closes the connection; never answer."""
    try:
        while await reader.read(65536):
            pass
    except ConnectionError:
        pass


def http_response(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X"]
    for name, value in {"content-length": str(len(body)), **(headers or {})}.items():
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def mcp_handler_listing(tools: list[dict[str, Any]]) -> Handler:
    """Return a tiny JSON-mode MCP server: initialize, initialized, one page of ``tools``, DELETE."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                method, _headers, body = await read_request(reader)
                if method == "DELETE":
                    writer.write(http_response(200))
                    continue
                message = json.loads(body)
                if "id" not in message:
                    writer.write(http_response(202))
                    continue
                if message["method"] == "initialize":
                    result: dict[str, Any] = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": TOOLS_CAP,
                        "serverInfo": {"name": "loopback", "version": "1"},
                    }
                else:
                    result = {"tools": tools}
                out = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                writer.write(
                    http_response(200, out, {"content-type": "application/json", "mcp-session-id": "s1"})
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return handler


mcp_handler = mcp_handler_listing([tool("ping_me")])


@asynccontextmanager
async def loopback(handler: Handler, *, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    """Serve ``handler`` on 127.0.0.1 for the duration of the block; yield the port."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port
    finally:
        server.close()


def free_port() -> int:
    """Return a loopback port with nothing listening on it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Certs:
    server: ssl.SSLContext
    client: ssl.SSLContext


def make_certs(tmp_path: Any, *, expired: bool = False, host: str = "localhost") -> Certs:
    """Return a server context with a self-signed cert for ``host`` and a client context trusting it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = real_now()  # OpenSSL judges the dates by the machine's clock, shifted run or not
    start, end = (
        (now - dt.timedelta(days=30), now - dt.timedelta(days=1))
        if expired
        # 90 days: past the HTTPS checks' 14-day certificate warning, so a valid cert is up.
        else (now, now + dt.timedelta(days=90))
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - dt.timedelta(minutes=5))
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = tmp_path / f"{host}-{expired}.pem"
    key_path = tmp_path / f"{host}-{expired}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_path, key_path)
    client = ssl.create_default_context(cafile=str(cert_path))
    return Certs(server=server, client=client)
