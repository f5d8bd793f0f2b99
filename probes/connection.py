"""Open guarded, timed HTTP connections for one check: the layer MCP and HTTP checks share.

Each check gets its own :class:`Connection` (its own small pool), so the DNS, TCP and TLS
figures of its first request are real rather than a warm pool's zeros; only the
``ssl.SSLContext`` is shared between checks, because building one costs tens of milliseconds.

Names are resolved here (:func:`resolve_name`, replaceable in tests), every address passes the
address guard, and the socket is opened to the address that was checked, while the Host header
and the TLS SNI and certificate check keep the host name. The HTTP/1.1 work is
``probes.wire`` (h11 over an asyncio protocol); httpx only parses URLs. The unit
tests replace :func:`open_stream` with an in-memory server that answers from respx routes, so
they exercise everything here and in ``probes.wire`` but the socket itself.

The breakdown follows monitoring products: ``dns_ms``, ``tcp_ms`` and ``tls_ms`` are the phases
of the first request, and ``ttfb_ms`` is its wait, from the request being sent on the open
connection to the response headers (so the four add up to the first request's time).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import re
import socket
import ssl
import time
from dataclasses import replace

import httpx

from probes import netguard, resolver, wire
from probes.netguard import IPAddress
from probes.redact import clip
from probes.types import FailureKind, ProbeOutcome, Timings
from probes.wire import Response

MAX_BODY_BYTES = 5 * 1024 * 1024
DISCARD_BYTES = 64 * 1024
CAP_WORDS = "5 MiB"
# How long to wait for the end of an event stream whose answer has been read: servers end it
# at once, and waiting that long is cheaper than a new connection (and its TLS handshake).
SSE_END_BUDGET = 0.05
_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
# The statuses every check treats as a redirect (each decides which of them it follows).
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_BASE_NAMES = frozenset({"host", "user-agent", "accept-encoding"})


class CheckFailed(Exception):
    """Carry a check's verdict out of deep code: a failure kind and the sentence users read."""

    def __init__(
        self,
        kind: FailureKind,
        reason: str,
        *,
        http_status: int | None = None,
        verify_code: int | None = None,
        verify_message: str = "",
    ) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.http_status = http_status
        # Set when a TLS handshake's certificate verification failed: OpenSSL's code and words.
        self.verify_code = verify_code
        self.verify_message = verify_message


async def resolve_name(host: str, port: int, nameservers: resolver.Nameservers = ()) -> list[IPAddress]:
    """Return the addresses ``host`` resolves to, in the resolver's preference order.

    Resolved by c-ares (``probes.resolver``), never by the event loop's thread pool, which a
    few names whose DNS never answers would exhaust for every other check of the process.
    ``nameservers`` replaces the system's DNS servers (empty: resolv.conf's). Tests replace
    this module attribute to give names fixed answers without DNS.
    """
    addresses: list[IPAddress] = []
    for text in await resolver.resolve(host, port, nameservers):
        address = netguard.parse_ip(text)
        if address is not None and address not in addresses:
            addresses.append(address)
    return addresses


def host_of(url: httpx.URL) -> str:
    """Return the host as a connection names it (IDNA-encoded, lower-case, no brackets)."""
    return url.raw_host.decode("ascii").lower()


Origin = tuple[str, str, int]


def origin_of(url: httpx.URL) -> Origin:
    """Return the URL's origin: scheme, host as a connection names it, port (defaulted by scheme)."""
    return (url.scheme, host_of(url), _port(url))


def origin_of_uri(uri: str) -> Origin | None:
    """Return the origin of a URI given as text, or None when it does not parse as a URL with a host."""
    try:
        url = httpx.URL(uri)
    except (httpx.InvalidURL, UnicodeError):
        return None
    return origin_of(url) if url.host else None


def ascii_host(host: str) -> str:
    """Return a host as a connection names it: an IP literal lower-cased, a name IDNA-encoded, lower-case."""
    if ":" in host or netguard.parse_ip(host) is not None:
        return host.lower()
    try:
        return host_of(httpx.URL(f"http://{host}/"))
    except (httpx.InvalidURL, UnicodeError):
        return host.lower()


def uri_host(uri: str) -> str:
    """Return the host of a URI given as text as a connection names it, or the text itself when it is no URL."""
    try:
        return host_of(httpx.URL(uri))
    except (httpx.InvalidURL, UnicodeError):
        return uri


def uri_target(uri: str) -> str:
    """Return scheme, host and path of a URI given as text: what logs and lists show (queries may carry tokens)."""
    try:
        url = httpx.URL(uri)
    except (httpx.InvalidURL, UnicodeError):
        return "(an invalid URL)"
    return str(url.copy_with(query=None, fragment=None))


def same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    """Return whether two URLs share scheme, host and port: the unit a customer's headers are given for."""
    return origin_of(a) == origin_of(b)


def _port(url: httpx.URL) -> int:
    """Return the URL's port, or its scheme's default (80 for anything but https)."""
    return url.port or _DEFAULT_PORTS.get(url.scheme, 80)


def media_type(response: Response) -> str:
    """Return the response's media type, lower-cased, without parameters ("" when absent)."""
    value = response.headers.get("content-type") or ""
    return value.split(";", 1)[0].strip().lower()


_TAGS = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def sanitize(text: str, limit: int = 200) -> str:
    """Return ``text`` on one line, without control characters and the check's secrets, cut to ``limit``."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text[: limit * 4])
    return clip(_SPACE.sub(" ", cleaned).strip(), limit)


def text_message(body: bytes, mtype: str) -> str:
    """Return the readable part of an error body: an HTML page's title or text, or the text itself."""
    if not body or not (mtype.startswith("text/") or "json" in mtype or "xml" in mtype or not mtype):
        return ""
    text = body[:4096].decode("utf-8", errors="replace")
    if "html" in mtype:
        title = _TITLE.search(text)
        text = title.group(1) if title else _TAGS.sub(" ", text)
    return sanitize(text)


def _connect_failure_words(
    host: str,
    port: int,
    addresses: list[IPAddress],
    attempts: list[tuple[IPAddress, OSError]],
    *,
    timed_out: float | None = None,
) -> str:
    """Return why no connection to ``host`` opened, naming each of its addresses and what it answered.

    One address keeps the short form ("Connection to example.com (192.0.2.1) port 443 failed:
    connection refused"); several are listed in the order tried ("Connection to localhost port
    8080 failed: ::1 refused, 127.0.0.1 timed out"), so a fallback that also failed is not
    mistaken for the first address alone. ``timed_out`` is the check's timeout when its deadline
    ended the attempt after ``attempts``; the addresses after it are "not tried".
    """
    if not addresses:
        return f"Connection to {host} port {port} failed: no address to try"
    if len(addresses) == 1:
        shown = host if netguard.parse_ip(host) is not None else f"{host} ({addresses[0]})"
        words = wire.os_error_words(attempts[0][1]) if attempts else f"no answer within {timed_out:g} s"
        return f"Connection to {shown} port {port} failed: {words}"
    answers = [f"{address} {_attempt_words(error)}" for address, error in attempts]
    rest = addresses[len(attempts) :]
    if timed_out is not None and rest:
        answers.append(f"{rest[0]} timed out")
        rest = rest[1:]
    answers += [f"{address} not tried" for address in rest]
    ending = f" (the check's {timed_out:g} s ran out)" if timed_out is not None else ""
    return f"Connection to {host} port {port} failed: {', '.join(answers)}{ending}"


def _attempt_words(error: OSError) -> str:
    """Return what one address answered, in a word or two ("refused", "unreachable")."""
    if isinstance(error, ConnectionRefusedError):
        return "refused"
    if isinstance(error, ConnectionResetError):
        return "reset the connection"
    if isinstance(error, TimeoutError):
        return "timed out"
    if error.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return "unreachable"
    if error.errno == errno.EADDRNOTAVAIL:
        return "not available on this machine"
    return wire.os_error_words(error)


async def open_stream(address: str, port: int) -> wire.Stream:
    """Open a TCP connection to a checked address.

    Tests replace this module attribute to carry the exchange over something else (the respx
    bridge in tests/probes), after the name was resolved and guarded as usual.
    """
    return await wire.open_tcp(address, port)


class Connection:
    """Send one check's requests: resolve, guard, connect, time the first request, cap bodies.

    It keeps the connections it opened and reuses an idle one of the same origin, so a check
    whose answers all end cleanly runs on a single connection.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        user_agent: str,
        ssl_context: ssl.SSLContext,
        nameservers: resolver.Nameservers = (),
        deadline: float | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.deadline = deadline
        # The check's loop, taken on first need: each get_running_loop() is a getpid() syscall.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nameservers = nameservers
        # The host whose lookup is under way: a check that runs out of time then says so.
        self._resolving: str | None = None
        # The connection attempts under way (host, port, its addresses, the failures so far).
        self._connecting: tuple[str, int, list[IPAddress], list[tuple[IPAddress, OSError]]] | None = None
        self._ssl_context = ssl_context
        self._base_headers = [(b"User-Agent", user_agent.encode()), (b"Accept-Encoding", b"identity")]
        self._pins: dict[str, list[IPAddress]] = {}
        self._conns: list[wire.HttpConnection] = []
        self._dns_ms: float | None = None
        self._tcp_ms: float | None = None
        self._tls_ms: float | None = None
        self._ttfb_ms: float | None = None
        self._sent_first = False
        # The DER leaf certificate of the first TLS handshake that verified (HTTPS, MCP, TLS).
        self._peer_certificate: bytes | None = None
        self._peer_name = ""

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """Return the context handshakes verify with (the caller's trust store)."""
        return self._ssl_context

    @property
    def peer_certificate(self) -> tuple[bytes, str] | None:
        """Return the DER leaf certificate of the check's first verified TLS handshake and the
        name it was verified for, or None when no handshake verified."""
        if self._peer_certificate is None:
            return None
        return self._peer_certificate, self._peer_name

    @property
    def nameservers(self) -> resolver.Nameservers:
        """Return the DNS servers this check resolves with ("ip" or "ip:port"; empty: resolv.conf's)."""
        return self._nameservers

    def check_deadline(self) -> None:
        """Raise TimeoutError when the check's deadline has passed.

        Call it after CPU-bound work such as parsing an answer: reading an answer that is
        already buffered never yields to the event loop, so ``asyncio.timeout_at`` alone
        notices a deadline only at the next real wait, and a check that parses its way past
        it and then returns would end ``up`` late instead of ``timeout``.
        """
        if self.deadline is None:
            return
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        if self._loop.time() >= self.deadline:
            raise TimeoutError

    def dns_timeout_words(self, timeout: float) -> str | None:
        """Return the sentence for a check whose deadline passed during a DNS lookup, else None."""
        if self._resolving is None:
            return None
        return f"DNS lookup of {self._resolving} got no answer within {timeout:g} s"

    def timeout_words(self, timeout: float) -> str | None:
        """Return the sentence for a check whose deadline passed during a DNS lookup or a connection attempt, else None.

        A deadline that passed while connecting names every address of the host: what each
        tried one answered, the one that was waited on, the ones never reached.
        """
        dns = self.dns_timeout_words(timeout)
        if dns is not None or self._connecting is None:
            return dns
        host, port, addresses, attempts = self._connecting
        return _connect_failure_words(host, port, addresses, attempts, timed_out=timeout)

    async def aclose(self) -> None:
        for conn in self._conns:
            conn.close()
        self._conns.clear()

    async def send(
        self, method: str, url: httpx.URL, *, headers: list[tuple[str, str]], content: bytes | None = None
    ) -> Response:
        """Return the response to one request, its body not yet read; never follows redirects.

        Raises :class:`CheckFailed` for refused addresses and DNS, TCP, TLS or HTTP transport
        failures. The caller reads the body (:meth:`read_body`, :meth:`discard` or
        ``read_chunk``) and closes the response, which keeps the connection when the body ended.
        """
        host = host_of(url)
        if host not in self._pins or url.scheme not in _SCHEMES:
            await self.pin(url)
        scheme = url.scheme
        port = _port(url)
        origin = (scheme, host, port)
        first = not self._sent_first
        self._sent_first = True
        started = time.perf_counter()
        wire_headers = [(b"Host", url.netloc), *self._base_headers]
        if headers:
            wire_headers = _merge_headers(wire_headers, headers)
        if content is not None or method in _BODY_METHODS:
            wire_headers.append((b"Content-Length", str(len(content or b"")).encode()))
        raw_method, target = method.encode(), url.raw_path
        conn = next((c for c in self._conns if c.origin == origin and c.reusable()), None)
        if conn is not None:
            try:
                return Response(conn, await conn.request(raw_method, target, wire_headers, content), host)
            except wire.WireError as exc:
                if not exc.unanswered:
                    raise _wire_failure(exc, host, reading=False) from None
                # No byte of an answer: the server closed the kept connection as the request
                # went out (an idle timeout racing us), so send it once on a new connection.
        conn = await self._open(origin)
        try:
            head = await conn.request(raw_method, target, wire_headers, content)
        except wire.WireError as exc:
            raise _wire_failure(exc, host, reading=False) from None
        if first:
            elapsed = (time.perf_counter() - started) * 1000
            self._ttfb_ms = max(0.0, elapsed - (self._tcp_ms or 0.0) - (self._tls_ms or 0.0))
        return Response(conn, head, host)

    async def _open(self, origin: tuple[str, str, int]) -> wire.HttpConnection:
        scheme, host, port = origin
        stream, _ = await self._connect(host, port)
        conn = wire.HttpConnection(stream, origin)
        self._conns.append(conn)
        if scheme == "https":
            await self.start_tls(conn.stream, host)
        return conn

    async def _connect(self, host: str, port: int) -> tuple[wire.Stream, IPAddress]:
        addresses = self._pinned(host)
        attempts: list[tuple[IPAddress, OSError]] = []
        for address in addresses:
            started = time.perf_counter()
            # Left set when the deadline cancels the attempt, so the timeout names every address.
            self._connecting = (host, port, addresses, attempts)
            try:
                stream = await open_stream(str(address), port)
            except OSError as exc:
                self._connecting = None
                attempts.append((address, exc))
                continue
            self._connecting = None
            if self._tcp_ms is None:
                self._tcp_ms = (time.perf_counter() - started) * 1000
            return stream, address
        raise CheckFailed(FailureKind.CONNECT, _connect_failure_words(host, port, addresses, attempts))

    async def pin(self, url: httpx.URL) -> None:
        """Resolve the URL's host once, refuse it when the guard says so, and remember the answer."""
        if url.scheme not in _SCHEMES:
            raise CheckFailed(FailureKind.BLOCKED_ADDRESS, f"{shown_url(url)} is not an http(s) URL")
        await self.pin_host(host_of(url), _port(url))

    async def addresses(self, host: str, port: int = 0) -> list[IPAddress]:
        """Return the guarded addresses of ``host`` (resolved once per check), in the resolver's order.

        Raises :class:`CheckFailed` (``dns`` or ``blocked_address``) as :meth:`send` does: checks of
        other protocols (ping, a nameserver's address) guard what they reach through this.
        """
        host = ascii_host(host)
        await self.pin_host(host, port)
        return list(self._pins[host])

    async def open_tcp(self, host: str, port: int) -> tuple[wire.Stream, IPAddress]:
        """Return a TCP stream to ``host``:``port`` and the address it reached, trying each guarded address.

        The DNS and TCP phases are timed as for an HTTP request; a failure is :class:`CheckFailed`
        naming each address tried (``connect``), and a deadline that passes meanwhile is told
        by :meth:`timeout_words`.
        """
        host = ascii_host(host)
        await self.pin_host(host, port)
        return await self._connect(host, port)

    async def start_tls(
        self, stream: wire.Stream, host: str, *, context: ssl.SSLContext | None = None
    ) -> None:
        """Run the TLS handshake on ``stream`` for ``host`` (SNI and name check), timed; a failure is ``tls``."""
        started = time.perf_counter()
        try:
            await stream.start_tls(context or self._ssl_context, server_hostname=host)
        except ssl.SSLCertVerificationError as exc:
            stream.close()
            message = exc.verify_message or exc.reason or ""
            raise CheckFailed(
                FailureKind.TLS,
                f"TLS handshake failed: {message}",
                verify_code=exc.verify_code,
                verify_message=message,
            ) from None
        except (ssl.SSLError, OSError) as exc:
            stream.close()
            raise CheckFailed(FailureKind.TLS, f"TLS handshake failed: {_tls_words(exc)}") from None
        if self._tls_ms is None:
            self._tls_ms = (time.perf_counter() - started) * 1000
        if self._peer_certificate is None and (context or self._ssl_context).verify_mode != ssl.CERT_NONE:
            self._peer_certificate, self._peer_name = leaf_certificate(stream), host

    async def pin_host(self, host: str, port: int) -> None:
        """Resolve ``host`` once, refuse it when the guard says so, and remember the answer."""
        if host in self._pins:
            return
        literal = netguard.parse_ip(host)
        started = time.perf_counter()
        if literal is not None:
            addresses = [literal]
        else:
            # Left set when the deadline cancels the lookup, so the timeout names it.
            self._resolving = host
            try:
                addresses = await resolve_name(host, port, self._nameservers)
            except socket.gaierror as exc:
                self._resolving = None
                raise CheckFailed(
                    FailureKind.DNS, f"DNS lookup of {host} failed: {exc.strerror or exc}"
                ) from None
            except UnicodeError:
                self._resolving = None
                raise CheckFailed(
                    FailureKind.DNS, f"DNS lookup of {host} failed: not a valid host name"
                ) from None
            self._resolving = None
            if self._dns_ms is None:
                self._dns_ms = (time.perf_counter() - started) * 1000
        if not addresses:
            raise CheckFailed(FailureKind.DNS, f"DNS lookup of {host} returned no addresses")
        if not self.allow_private:
            why = netguard.refusal(host, addresses)
            if why is not None:
                raise CheckFailed(FailureKind.BLOCKED_ADDRESS, why)
        self._pins[host] = addresses

    async def read_body(self, response: Response, cap: int = MAX_BODY_BYTES) -> bytes:
        """Return the whole body, refusing more than ``cap`` bytes before reading them all."""
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            await response.aclose()
            raise CheckFailed(FailureKind.TOO_LARGE, too_large_words(cap), http_status=response.status_code)
        chunks: list[bytes] = []
        size = 0
        try:
            while chunk := await response.read_chunk():
                size += len(chunk)
                if size > cap:
                    raise CheckFailed(
                        FailureKind.TOO_LARGE, too_large_words(cap), http_status=response.status_code
                    )
                chunks.append(chunk)
        except wire.WireError as exc:
            raise _wire_failure(exc, response.host, reading=True) from None
        finally:
            await response.aclose()
        return b"".join(chunks)

    async def discard(self, response: Response) -> None:
        """Read and drop a small body so the connection can carry the next request.

        An event stream that has not already ended is closed instead (with its connection),
        as it may never end.
        """
        if media_type(response) == "text/event-stream":
            await response.aclose()
            return
        with contextlib.suppress(CheckFailed):
            await self.read_body(response, DISCARD_BYTES)

    async def finish(self, response: Response) -> None:
        """Keep the connection of an event stream that was read as far as needed, when the
        server ends the stream at once (within SSE_END_BUDGET seconds); otherwise close it."""
        await response.finish(SSE_END_BUDGET, DISCARD_BYTES)

    def finished(self, started: float, outcome: ProbeOutcome) -> ProbeOutcome:
        """Return ``outcome`` with this check's timings, the total from ``started`` (``time.perf_counter()``)."""
        return replace(outcome, timings=self.timings((time.perf_counter() - started) * 1000))

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


def _merge_headers(
    base: list[tuple[bytes, bytes]], extra: list[tuple[str, str]]
) -> list[tuple[bytes, bytes]]:
    """Return ``base`` followed by ``extra``; a field in ``extra`` replaces the base field of its name."""
    names = {name.lower() for name, _ in extra}
    merged = (
        [(name, value) for name, value in base if name.decode().lower() not in names]
        if names & _BASE_NAMES
        else base
    )
    merged.extend((name.encode(), value.encode()) for name, value in extra)
    return merged


def too_large_words(cap: int) -> str:
    size = CAP_WORDS if cap == MAX_BODY_BYTES else f"{cap} bytes"
    return f"The answer is larger than the {size} cap"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def shown_url(url: httpx.URL) -> str:
    """Return the URL without its query: legacy endpoints carry session ids there."""
    return str(url.copy_with(query=None, fragment=None))


def leaf_certificate(stream: wire.Stream) -> bytes | None:
    """Return the DER certificate the peer of a TLS stream sent, or None (a stream without a socket)."""
    transport = getattr(stream, "transport", None)
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if not isinstance(ssl_object, ssl.SSLObject):
        return None
    der = ssl_object.getpeercert(binary_form=True)
    return der or None


def _tls_words(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return exc.reason.replace("_", " ").lower()
    if isinstance(exc, ConnectionResetError):
        return "the server reset the connection"
    return str(exc) or type(exc).__name__


def _wire_failure(exc: wire.WireError, host: str, *, reading: bool) -> CheckFailed:
    """Return the verdict for a failed exchange with ``host``."""
    if reading:
        return CheckFailed(
            FailureKind.CONNECT, f"The connection to {host} broke while reading the answer: {exc.detail}"
        )
    if exc.kind == "closed":
        return CheckFailed(FailureKind.CONNECT, f"{host} closed the connection without answering")
    if exc.kind == "malformed":
        return CheckFailed(FailureKind.PROTOCOL, f"{host} sent a malformed HTTP answer: {exc.detail}")
    return CheckFailed(FailureKind.CONNECT, f"The connection to {host} failed: {exc.detail}")


def redirect_target(url: httpx.URL, response: Response) -> httpx.URL:
    """Return where a redirect points, refusing a missing Location and any https-to-http step."""
    status = response.status_code
    location = response.headers.get("location", "")
    try:
        target = url.join(location) if location else None
    except httpx.InvalidURL:
        target = None
    if target is None:
        raise CheckFailed(
            FailureKind.HTTP_STATUS, f"HTTP {status} without a usable Location", http_status=status
        )
    if url.scheme == "https" and target.scheme != "https":
        raise CheckFailed(
            FailureKind.REDIRECT_REFUSED,
            f"Redirect from https to http refused: {shown_url(target)}",
            http_status=status,
        )
    return target
