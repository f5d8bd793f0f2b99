"""Speak HTTP/1.1 on one socket for one check: asyncio for the bytes, h11 for the framing.

This is the engine's whole HTTP client. A check sends a handful of requests on a connection it
opened itself, so the general-purpose layers above a socket (a client object per check, URL
and header models per request, pools behind locks, auth and redirect machinery, a timeout
scope per read) cost more CPU than the exchange itself; what is left is what a check needs:

- :class:`SocketStream`, an ``asyncio.BufferedProtocol`` that buffers what arrives and wakes
  one reader, with asyncio's own TLS (cheaper than a Python-level BIO);
- :class:`HttpConnection`, one h11 client connection: send a request, get the response head;
- :class:`Response`, the head plus a body read chunk by chunk; when the body ends cleanly the
  connection is ready for the next request, which is how a check uses one connection only.

There are no per-read timeouts: one deadline covers the whole check (``asyncio.timeout_at``
in the callers), so a slow drip cannot stretch it. Errors come out as :class:`WireError` with
a kind; ``probes.connection`` turns them into verdicts. Anything that can stand in for a
socket (``write``, ``read``, ``start_tls``, ``at_eof``, ``close``) can carry the exchange:
the unit tests replay respx routes through an in-memory stream.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from typing import Protocol

import h11

# The largest response head accepted (status line and headers), as httpcore allows.
MAX_HEAD_BYTES = 100 * 1024
# Stop reading from the socket while this much is buffered and not yet consumed.
_HIGH_WATER = 1024 * 1024
# The most one socket read takes. asyncio's plain Protocol path allocates 256 KiB per read
# (``recv(256 KiB)``, then shrunk), past glibc's mmap threshold: depending on the process's
# allocation history (importing pycares was enough to tip it) every read then costs an mmap,
# page faults, an mremap and a munmap, together over a tenth of a check's CPU. Reads land in
# one buffer per thread instead (the SocketStreams of that thread's loop take turns: asyncio
# fills it and hands it back within one call) and are copied out at their size.
_READ_BUFFER_BYTES = 64 * 1024
_read_buffers = threading.local()


def _thread_read_buffer() -> memoryview:
    """Return this thread's read buffer, made on first use."""
    try:
        buffer: memoryview = _read_buffers.buffer
    except AttributeError:
        buffer = _read_buffers.buffer = memoryview(bytearray(_READ_BUFFER_BYTES))
    return buffer


class WireError(Exception):
    """Report a failed exchange: ``kind`` is "closed" (no answer at all), "malformed" or "broken".

    ``unanswered`` says that not one byte of an answer arrived, so the server may not have
    seen the request at all (the race of reusing a connection the server is closing).
    """

    def __init__(self, kind: str, detail: str, *, unanswered: bool = False) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.unanswered = unanswered


class Stream(Protocol):
    """What an :class:`HttpConnection` needs from its transport."""

    def write(self, data: bytes) -> None: ...

    async def read(self) -> bytes:
        """Return what has arrived (waiting for something), or b"" once the peer has closed."""
        ...

    async def start_tls(self, context: ssl.SSLContext, server_hostname: str) -> None: ...

    def at_eof(self) -> bool:
        """Return whether the peer closed its side (an idle connection is then no longer usable)."""
        ...

    def close(self) -> None: ...


class SocketStream(asyncio.BufferedProtocol):
    """Carry bytes over an asyncio transport: a buffer, one waiting reader, write flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False
        self._error: OSError | None = None
        self._paused_reading = False
        self._read_buffer = _thread_read_buffer()

    # --- asyncio.BufferedProtocol ---

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read_buffer

    def buffer_updated(self, nbytes: int) -> None:
        # Copied out at once: the next read on this thread, any stream's, reuses the buffer.
        self._chunks.append(bytes(self._read_buffer[:nbytes]))
        self._buffered += nbytes
        if self._buffered > _HIGH_WATER and not self._paused_reading and self.transport is not None:
            self._paused_reading = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        if isinstance(exc, OSError):
            self._error = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    # --- Stream ---

    def write(self, data: bytes) -> None:
        # Requests are small: the transport buffers them whole, so there is nothing to drain.
        if self.transport is None or self.transport.is_closing():
            raise self._error or ConnectionResetError("the connection is closed")
        self.transport.write(data)

    async def read(self) -> bytes:
        while not self._chunks:
            if self._eof:
                if self._error is not None:
                    raise self._error
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        chunks = self._chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self._chunks = []
        self._buffered = 0
        if self._paused_reading and self.transport is not None:
            self._paused_reading = False
            self.transport.resume_reading()
        return data

    async def start_tls(self, context: ssl.SSLContext, server_hostname: str) -> None:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        transport = await loop.start_tls(self.transport, self, context, server_hostname=server_hostname)
        if transport is None:
            raise ConnectionResetError("the connection closed during the TLS handshake")
        self.transport = transport

    def at_eof(self) -> bool:
        return self._eof

    def close(self) -> None:
        # Abort rather than close: a monitor owes no TLS close_notify, and waiting for one
        # from a misbehaving peer would hold the connection past the check.
        if self.transport is not None:
            self.transport.abort()
        self._eof = True


async def open_tcp(address: str, port: int) -> SocketStream:
    """Connect to ``address`` (an IP literal, so asyncio does no lookup of its own) and ``port``."""
    loop = asyncio.get_running_loop()
    stream = SocketStream()
    await loop.create_connection(lambda: stream, address, port)
    return stream


class HttpConnection:
    """One HTTP/1.1 connection: requests go one after another; ``idle`` means ready for the next."""

    __slots__ = ("_h11", "closed", "idle", "origin", "stream")

    def __init__(self, stream: Stream, origin: tuple[str, str, int]) -> None:
        self.stream = stream
        self.origin = origin
        self.idle = False
        self.closed = False
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)

    def reusable(self) -> bool:
        return self.idle and not self.closed and not self.stream.at_eof()

    async def request(
        self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes | None
    ) -> h11.Response:
        """Send one request and return the response head (1xx answers are skipped)."""
        self.idle = False
        conn = self._h11
        try:
            data = conn.send(h11.Request(method=method, target=target, headers=headers))
            if body:
                data += conn.send(h11.Data(data=body))
            data += conn.send(h11.EndOfMessage())
        except h11.LocalProtocolError:
            self.close()
            raise  # our own request is malformed: a bug, not the server's behaviour
        assert data is not None
        try:
            self.stream.write(data)
        except OSError as exc:
            self.close()
            raise WireError("broken", os_error_words(exc), unanswered=True) from None
        got_bytes = False
        while True:
            try:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    chunk = await self.stream.read()
                    got_bytes = got_bytes or bool(chunk)
                    if not chunk and not got_bytes:
                        self.close()
                        raise WireError("closed", "closed the connection without answering", unanswered=True)
                    conn.receive_data(chunk)
                    continue
            except h11.RemoteProtocolError as exc:
                self.close()
                raise WireError("malformed", str(exc) or "a malformed response head") from None
            except OSError as exc:
                self.close()
                raise WireError("broken", os_error_words(exc), unanswered=not got_bytes) from None
            kind = type(event)
            if kind is h11.Response:
                return event  # type: ignore[return-value]
            if kind is h11.InformationalResponse:
                continue  # 100 Continue, 103 Early Hints: the answer follows
            self.close()
            if kind is h11.ConnectionClosed:
                raise WireError("closed", "closed the connection without answering")
            raise WireError("malformed", f"an unexpected {kind.__name__} instead of an answer")

    def pump(self) -> h11.Data | h11.EndOfMessage | None:
        """Return the current response's next Data or EndOfMessage from what is buffered, or None."""
        conn = self._h11
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            self.close()
            raise WireError("broken", str(exc) or "the answer was cut short") from None
        if event is h11.NEED_DATA:
            return None
        kind = type(event)
        if kind is h11.Data:
            return event  # type: ignore[return-value]
        if kind is h11.EndOfMessage:
            if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                conn.start_next_cycle()
                self.idle = True
            else:
                self.close()
            return event  # type: ignore[return-value]
        self.close()
        if kind is h11.ConnectionClosed:
            raise WireError("broken", "the connection closed before the answer ended")
        raise WireError("broken", f"an unexpected {kind.__name__} inside the answer")

    async def next_body_event(self) -> h11.Data | h11.EndOfMessage:
        """Return the current response's next Data or EndOfMessage, waiting for bytes as needed."""
        while (event := self.pump()) is None:
            try:
                data = await self.stream.read()
            except OSError as exc:
                self.close()
                raise WireError("broken", os_error_words(exc)) from None
            self._h11.receive_data(data)
        return event

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.idle = False
            self.stream.close()


class Headers:
    """Hold a response's header fields: names lower-cased, values decoded as Latin-1, in order."""

    __slots__ = ("items",)

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self.items = items

    def get(self, name: str, default: str | None = None) -> str | None:
        """Return the field's value (several fields of one name joined with ", "), or ``default``."""
        name = name.lower()
        values = [value for key, value in self.items if key == name]
        if not values:
            return default
        return values[0] if len(values) == 1 else ", ".join(values)

    def get_list(self, name: str) -> list[str]:
        name = name.lower()
        return [value for key, value in self.items if key == name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and any(key == name.lower() for key, _ in self.items)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value


class Response:
    """Hold one response: status, headers and the host asked; read the body with :meth:`read_chunk`."""

    __slots__ = ("_conn", "done", "headers", "host", "status_code")

    def __init__(self, conn: HttpConnection, head: h11.Response, host: str) -> None:
        self._conn = conn
        self.status_code: int = head.status_code
        # raw_items() is one list; iterating h11's Headers itself goes item by item through
        # Sequence.__iter__ and a Python __getitem__. Names lower-cased as h11 does (ASCII).
        self.headers = Headers(
            [
                (name.lower().decode("latin-1"), value.decode("latin-1"))
                for name, value in head.headers.raw_items()
            ]
        )
        self.host = host
        self.done = False

    async def read_chunk(self) -> bytes:
        """Return the next piece of the body, or b"" at its end. Raises :class:`WireError`."""
        if self.done:
            return b""
        while True:
            event = await self._conn.next_body_event()
            if type(event) is h11.Data:
                if event.data:
                    return event.data
                continue
            self.done = True
            return b""

    def finish_buffered(self) -> bool:
        """Consume the end of the body if it is already here (never waiting); return whether it ended.

        Body bytes still unread mean the caller stopped early: that is not an end.
        """
        if self.done:
            return True
        if self._conn.closed:
            return False
        try:
            event = self._conn.pump()
        except WireError:
            return False
        if type(event) is h11.EndOfMessage:
            self.done = True
            return True
        return False

    async def finish(self, budget: float, cap: int) -> None:
        """Read the rest of the body to keep the connection, if it ends within ``budget`` seconds
        and ``cap`` bytes; otherwise close the connection (an event stream may never end)."""
        if self.finish_buffered():
            return
        size = 0
        try:
            async with asyncio.timeout(budget):
                while chunk := await self.read_chunk():
                    size += len(chunk)
                    if size > cap:
                        break
        except (TimeoutError, WireError):
            pass
        if not self.done:
            self._conn.close()

    async def aclose(self) -> None:
        """Release the connection for the next request when the body has ended, else close it."""
        if not self.done and not self.finish_buffered():
            self._conn.close()


def os_error_words(exc: OSError) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by peer"
    return exc.strerror or str(exc) or type(exc).__name__
