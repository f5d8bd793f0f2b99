"""Open guarded, timed HTTP connections for one check: the layer MCP and HTTP checks share.

Each check gets its own :class:`Connection` (its own small pool), so the DNS, TCP and TLS
figures of its first request are real rather than a warm pool's zeros; only the
``ssl.SSLContext`` is shared between checks, because building one costs tens of milliseconds.

Names are resolved here (:func:`resolve_name`, replaceable in tests), every address passes the
address guard, and the socket is opened to the address that was checked, while the Host header
and the TLS SNI and certificate check keep the host name. httpx still does the HTTP/1.1 work:
a custom httpcore network backend only decides where the socket goes. respx patches httpcore's
connection pool, so unit tests reach this module's pinning and guard but not its sockets.

The breakdown follows monitoring products: ``dns_ms``, ``tcp_ms`` and ``tls_ms`` are the phases
of the first request, and ``ttfb_ms`` is its wait, from the request being sent on the open
connection to the response headers (so the four add up to the first request's time).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import ssl
import time
from typing import Any

import httpcore
import httpx

from probes import netguard
from probes.netguard import IPAddress
from probes.types import FailureKind, Timings

MAX_BODY_BYTES = 5 * 1024 * 1024
DISCARD_BYTES = 64 * 1024
CAP_WORDS = "5 MiB"


class CheckFailed(Exception):
    """Carry a check's verdict out of deep code: a failure kind and the sentence users read."""

    def __init__(self, kind: FailureKind, reason: str, *, http_status: int | None = None) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.http_status = http_status


async def resolve_name(host: str, port: int) -> list[IPAddress]:
    """Return the addresses ``host`` resolves to, in the resolver's preference order.

    Tests replace this module attribute to give names fixed answers without DNS.
    """
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = netguard.parse_ip(str(sockaddr[0]))
        if address is not None and address not in addresses:
            addresses.append(address)
    return addresses


def host_of(url: httpx.URL) -> str:
    """Return the host as httpcore names it when connecting (IDNA-encoded, no brackets)."""
    return url.raw_host.decode("ascii").lower()


def same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, host_of(a), a.port or _default_port(a)) == (
        b.scheme,
        host_of(b),
        b.port or _default_port(b),
    )


def _default_port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


def media_type(response: httpx.Response) -> str:
    """Return the response's media type, lower-cased, without parameters ("" when absent)."""
    value: str = response.headers.get("content-type", "")
    return value.split(";", 1)[0].strip().lower()


_TAGS = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def sanitize(text: str, limit: int = 200) -> str:
    """Return ``text`` on one line, without control characters, cut to about ``limit`` characters."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text[: limit * 4])
    cleaned = _SPACE.sub(" ", cleaned).strip()
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned


def text_message(body: bytes, mtype: str) -> str:
    """Return the readable part of an error body: an HTML page's title or text, or the text itself."""
    if not body or not (mtype.startswith("text/") or "json" in mtype or "xml" in mtype or not mtype):
        return ""
    text = body[:4096].decode("utf-8", errors="replace")
    if "html" in mtype:
        title = _TITLE.search(text)
        text = title.group(1) if title else _TAGS.sub(" ", text)
    return sanitize(text)


class _Stream(httpcore.AsyncNetworkStream):
    """Carry bytes over asyncio streams; asyncio's own TLS is cheaper than a Python-level BIO."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, owner: Connection) -> None:
        self._reader = reader
        self._writer = writer
        self._owner = owner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return await self._reader.read(max_bytes)
        except OSError as exc:
            raise httpcore.ReadError(_os_error_words(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._writer.write(buffer)
            await self._writer.drain()
        except OSError as exc:
            raise httpcore.WriteError(_os_error_words(exc)) from exc

    async def aclose(self) -> None:
        # Abort rather than close: a monitor owes no TLS close_notify, and waiting for one
        # from a misbehaving peer would hold the connection past the check.
        self._writer.transport.abort()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        started = time.perf_counter()
        try:
            await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except ssl.SSLCertVerificationError as exc:
            self._writer.transport.abort()
            raise CheckFailed(
                FailureKind.TLS, f"TLS handshake failed: {exc.verify_message or exc.reason}"
            ) from None
        except (ssl.SSLError, OSError) as exc:
            self._writer.transport.abort()
            raise CheckFailed(FailureKind.TLS, f"TLS handshake failed: {_tls_words(exc)}") from None
        self._owner._record_tls(time.perf_counter() - started)
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._writer.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        if info == "socket":
            return self._writer.get_extra_info("socket")
        if info == "is_readable":
            # An idle connection with data or EOF waiting was closed by the server.
            return self._reader.at_eof()
        return None


class _Backend(httpcore.AsyncNetworkBackend):
    """Open sockets only to addresses the owning Connection resolved and checked."""

    def __init__(self, owner: Connection) -> None:
        self._owner = owner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = self._owner._pinned(host)
        failure: OSError | None = None
        for address in addresses:
            started = time.perf_counter()
            try:
                reader, writer = await asyncio.open_connection(str(address), port)
            except OSError as exc:
                failure = exc
                continue
            self._owner._record_tcp(time.perf_counter() - started)
            return _Stream(reader, writer, self._owner)
        shown = f"{host} ({addresses[0]})" if netguard.parse_ip(host) is None else host
        words = _os_error_words(failure) if failure else "no address to try"
        raise CheckFailed(FailureKind.CONNECT, f"Connection to {shown} port {port} failed: {words}")

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise CheckFailed(FailureKind.BLOCKED_ADDRESS, "Unix sockets are not checked")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class _Transport(httpx.AsyncHTTPTransport):
    """Reuse httpx's request/response mapping around our own pool (and its guarded backend)."""

    def __init__(self, pool: httpcore.AsyncConnectionPool) -> None:
        self._pool = pool


class Connection:
    """Send one check's requests: resolve, guard, connect, time the first request, cap bodies."""

    def __init__(self, *, allow_private: bool, user_agent: str, ssl_context: ssl.SSLContext) -> None:
        self.allow_private = allow_private
        self._pins: dict[str, list[IPAddress]] = {}
        self._dns_ms: float | None = None
        self._tcp_ms: float | None = None
        self._tls_ms: float | None = None
        self._ttfb_ms: float | None = None
        self._sent_first = False
        pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=8,
            http1=True,
            http2=False,
            retries=0,
            network_backend=_Backend(self),
        )
        self._client = httpx.AsyncClient(
            transport=_Transport(pool),
            headers={"User-Agent": user_agent, "Accept-Encoding": "identity"},
            follow_redirects=False,
            trust_env=False,
            # One deadline covers the whole check (asyncio.timeout_at in the callers); per-read
            # timeouts would let a slow drip stretch it.
            timeout=None,  # noqa: S113
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def send(
        self, method: str, url: httpx.URL, *, headers: list[tuple[str, str]], content: bytes | None = None
    ) -> httpx.Response:
        """Return the streamed response to one request; never follows redirects.

        Raises :class:`CheckFailed` for refused addresses and DNS, TCP, TLS or HTTP transport
        failures. The caller reads the body with :meth:`read_body` and closes the response.
        """
        await self.pin(url)
        first = not self._sent_first
        self._sent_first = True
        request = self._client.build_request(method, url, headers=headers, content=content)
        started = time.perf_counter()
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TransportError as exc:
            raise _transport_failure(exc, url) from None
        if first:
            elapsed = (time.perf_counter() - started) * 1000
            self._ttfb_ms = max(0.0, elapsed - (self._tcp_ms or 0.0) - (self._tls_ms or 0.0))
        return response

    async def pin(self, url: httpx.URL) -> None:
        """Resolve the URL's host once, refuse it when the guard says so, and remember the answer."""
        if url.scheme not in ("http", "https"):
            raise CheckFailed(FailureKind.BLOCKED_ADDRESS, f"{shown_url(url)} is not an http(s) URL")
        host = host_of(url)
        if host in self._pins:
            return
        literal = netguard.parse_ip(host)
        started = time.perf_counter()
        if literal is not None:
            addresses = [literal]
        else:
            try:
                addresses = await resolve_name(host, url.port or _default_port(url))
            except socket.gaierror as exc:
                raise CheckFailed(
                    FailureKind.DNS, f"DNS lookup of {host} failed: {exc.strerror or exc}"
                ) from None
            except UnicodeError:
                raise CheckFailed(
                    FailureKind.DNS, f"DNS lookup of {host} failed: not a valid host name"
                ) from None
            if self._dns_ms is None:
                self._dns_ms = (time.perf_counter() - started) * 1000
        if not addresses:
            raise CheckFailed(FailureKind.DNS, f"DNS lookup of {host} returned no addresses")
        if not self.allow_private:
            why = netguard.refusal(host, addresses)
            if why is not None:
                raise CheckFailed(FailureKind.BLOCKED_ADDRESS, why)
        self._pins[host] = addresses

    async def read_body(self, response: httpx.Response, cap: int = MAX_BODY_BYTES) -> bytes:
        """Return the whole body, refusing more than ``cap`` bytes before reading them all."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            await response.aclose()
            raise CheckFailed(FailureKind.TOO_LARGE, too_large_words(cap), http_status=response.status_code)
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > cap:
                    raise CheckFailed(
                        FailureKind.TOO_LARGE, too_large_words(cap), http_status=response.status_code
                    )
                chunks.append(chunk)
        except httpx.TransportError as exc:
            raise _transport_failure(exc, response.request.url, reading=True) from None
        finally:
            await response.aclose()
        return b"".join(chunks)

    async def discard(self, response: httpx.Response) -> None:
        """Read and drop a small body so the connection can carry the next request.

        Closing an unread response makes httpcore drop the connection, and a fresh one
        would cost a handshake; an event stream is closed instead, as it may never end.
        """
        if media_type(response) == "text/event-stream":
            await response.aclose()
            return
        with contextlib.suppress(CheckFailed):
            await self.read_body(response, DISCARD_BYTES)

    def timings(self, total_ms: float | None) -> Timings:
        return Timings(
            dns_ms=_round(self._dns_ms),
            tcp_ms=_round(self._tcp_ms),
            tls_ms=_round(self._tls_ms),
            ttfb_ms=_round(self._ttfb_ms),
            total_ms=_round(total_ms),
        )

    def _pinned(self, host: str) -> list[IPAddress]:
        addresses = self._pins.get(host.lower())
        if not addresses:
            # Every send pins first; reaching here means a request bypassed send(): refuse it.
            raise CheckFailed(FailureKind.BLOCKED_ADDRESS, f"{host} was not checked by the address guard")
        return addresses

    def _record_tcp(self, seconds: float) -> None:
        if self._tcp_ms is None:
            self._tcp_ms = seconds * 1000

    def _record_tls(self, seconds: float) -> None:
        if self._tls_ms is None:
            self._tls_ms = seconds * 1000


def too_large_words(cap: int) -> str:
    size = CAP_WORDS if cap == MAX_BODY_BYTES else f"{cap} bytes"
    return f"The answer is larger than the {size} cap"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def shown_url(url: httpx.URL) -> str:
    """Return the URL without its query: legacy endpoints carry session ids there."""
    return str(url.copy_with(query=None, fragment=None))


def _os_error_words(exc: OSError) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by peer"
    return exc.strerror or str(exc) or type(exc).__name__


def _tls_words(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return exc.reason.replace("_", " ").lower()
    if isinstance(exc, ConnectionResetError):
        return "the server reset the connection"
    return str(exc) or type(exc).__name__


def _transport_failure(exc: httpx.TransportError, url: httpx.URL, *, reading: bool = False) -> CheckFailed:
    """Return the verdict for an httpx transport error (our backend raises CheckFailed itself)."""
    if isinstance(exc, httpx.TimeoutException):
        return CheckFailed(FailureKind.TIMEOUT, f"Timed out talking to {host_of(url)}")
    if isinstance(exc, httpx.LocalProtocolError):
        # Our own request was malformed: a bug, not the server's behaviour.
        raise exc
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.RemoteProtocolError) and not reading and "disconnected" in detail.lower():
        return CheckFailed(FailureKind.CONNECT, f"{host_of(url)} closed the connection without answering")
    if reading:
        return CheckFailed(
            FailureKind.CONNECT, f"The connection to {host_of(url)} broke while reading the answer: {detail}"
        )
    if isinstance(exc, httpx.RemoteProtocolError):
        return CheckFailed(FailureKind.PROTOCOL, f"{host_of(url)} sent a malformed HTTP answer: {detail}")
    return CheckFailed(FailureKind.CONNECT, f"The connection to {host_of(url)} failed: {detail}")
