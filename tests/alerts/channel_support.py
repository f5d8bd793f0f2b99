"""Real parts for the channel tests: an HTTP receiver and an SMTP server on loopback, and alerts.

The receiver is a threaded HTTP server whose answers a test scripts (:class:`Reply`): a status,
headers and a body, a 10 MB body streamed, or no answer at all until the test ends. It keeps
every request it got, and :meth:`Receiver.wait` waits for the n-th one on an event, not a sleep.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from aiosmtpd.controller import Controller

import probes.connection
from alerts.channels import (
    Alert,
    Cause,
    EventType,
    HealthcheckRef,
    IncidentInfo,
    Notice,
    RegionFailure,
    ToolInputs,
    ToolsChange,
    channel_test_alert,
)
from probes.netguard import IPAddress, parse_ip
from tests.probes.probe_support import make_certs

OCCURRED = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Reply:
    """What the receiver answers: a status, headers, a body; ``stream_bytes`` sends that many instead."""

    status: int = 200
    body: bytes = b"ok"
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/plain"),)
    stream_bytes: int = 0
    hang: bool = False
    # A request header whose value opens the body: a receiver that quotes what it was sent.
    echo_header: str = ""


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A loopback HTTP receiver: scripted replies, recorded requests."""

    port: int = 0
    replies: list[Reply] = field(default_factory=list)
    default: Reply = field(default_factory=Reply)
    received: list[Received] = field(default_factory=list)
    # How many bytes of a streamed answer the receiver got out before the client went away.
    streamed: list[int] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def answer(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies`` in order, then with the default."""
        self.replies.extend(replies)

    def record(self, request: Received) -> Reply:
        with self._changed:
            self.received.append(request)
            reply = self.replies.pop(0) if self.replies else self.default
            self._changed.notify_all()
        return reply

    def wait_received(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` requests have arrived (woken by each arrival); return whether they did."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.received) >= count, timeout=timeout)

    def note_streamed(self, count: int) -> None:
        with self._changed:
            self.streamed.append(count)
            self._changed.notify_all()

    def wait_streamed(self) -> int:
        with self._changed:
            assert self._changed.wait_for(lambda: self.streamed, timeout=30)
            return self.streamed[0]


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = receiver.record(Received(self.command, self.path, headers, body))
            if reply.hang:
                receiver.released.wait(60)
                return
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            if reply.stream_bytes:
                self.send_header("Content-Length", str(reply.stream_bytes))
                self.end_headers()
                self._stream(reply.stream_bytes)
                return
            body = reply.body
            if reply.echo_header:
                body = f"{reply.echo_header}: {headers.get(reply.echo_header, '')}; ".encode() + body
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self, total: int) -> None:
            chunk = b"x" * 65536
            sent = 0
            try:
                while sent < total:
                    self.wfile.write(chunk[: total - sent])
                    sent += min(len(chunk), total - sent)
                self.wfile.flush()
            except OSError:
                pass
            finally:
                receiver.note_streamed(sent)

        do_POST = do_GET = do_PUT = _serve

    return Handler


@contextmanager
def serve(tls: ssl.SSLContext | None = None) -> Iterator[Receiver]:
    """Run a receiver until the generator is closed; with ``tls``, it speaks HTTPS."""
    state = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.released.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serve() as state:
        yield state


@dataclass
class Dns:
    """Fixed answers for names (``probes.connection.resolve_name`` replaced): no DNS in tests."""

    answers: dict[str, str] = field(default_factory=dict)


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Dns:
    table = Dns()

    async def resolve(host: str, port: int, nameservers: tuple[str, ...] = ()) -> list[IPAddress]:
        if host not in table.answers:
            raise socket.gaierror(-2, "the name does not exist")
        address = parse_ip(table.answers[host])
        assert address is not None
        return [address]

    monkeypatch.setattr(probes.connection, "resolve_name", resolve)
    return table


@dataclass
class TlsReceiver:
    receiver: Receiver
    client: ssl.SSLContext


@pytest.fixture
def tls_receiver(tmp_path, monkeypatch: pytest.MonkeyPatch, dns: Dns) -> Iterator[TlsReceiver]:
    """Return an HTTPS receiver for hooks.test (a self-signed certificate) and a client context trusting it."""
    certs = make_certs(tmp_path, host="hooks.test")
    dns.answers["hooks.test"] = "127.0.0.1"
    with serve(certs.server) as receiver:
        yield TlsReceiver(receiver, certs.client)


class _Collect:
    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.messages.append(
            (envelope.mail_from, list(envelope.rcpt_tos), envelope.content)  # type: ignore[attr-defined]
        )
        return "250 Message accepted for delivery"

    async def handle_RCPT(
        self, server: object, session: object, envelope: object, address: str, options: list[str]
    ) -> str:
        if address.startswith("bounce@"):
            return "550 No such user here"
        envelope.rcpt_tos.append(address)  # type: ignore[attr-defined]
        return "250 OK"


@dataclass
class SmtpServer:
    port: int
    handler: _Collect


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    handler = _Collect()
    controller = Controller(handler, hostname="127.0.0.1", port=_free_port())
    controller.start()
    yield SmtpServer(controller.port, handler)
    controller.stop()


def make_notice(
    *,
    name: str = "Docs MCP",
    status: str = "down",
    severity: str = "critical",
    incident_status: str = "open",
    resolved: bool = False,
    acknowledged_by: str = "",
) -> Notice:
    return Notice(
        healthcheck=HealthcheckRef(
            id="7b0c5f0e-0000-4000-8000-000000000001",
            name=name,
            status=status,
            link="https://app.uptimy.example/healthchecks/7b0c5f0e",
        ),
        incident=IncidentInfo(
            id="inc-4f6a2c1e-5e1b-4bb0-9d0b-000000000042",
            status=incident_status,
            severity=severity,
            opened_at=OCCURRED,
            acknowledged_at=OCCURRED if acknowledged_by else None,
            acknowledged_by=acknowledged_by,
            resolved_at=OCCURRED if resolved else None,
            resolution="recovered" if resolved else "",
            duration_seconds=754.0 if resolved else None,
        ),
        cause=Cause(
            kind="tools_missing",
            reason="Required tools missing: search_docs",
            regions=(RegionFailure("eu-west", "tools_missing"), RegionFailure("us-east", "timeout")),
            missing_tools=("search_docs",),
            since=OCCURRED,
        ),
        acknowledge_link="https://app.uptimy.example/ack/signed-token",
    )


def make_alert(
    event_type: EventType = EventType.INCIDENT_OPENED,
    *,
    notices: tuple[Notice, ...] | None = None,
    event_id: str = "evt_2b7c1f",
) -> Alert:
    if event_type is EventType.CHANNEL_TEST:
        return channel_test_alert(event_id=event_id, organization="Acme", occurred_at=OCCURRED)
    if notices is None:
        notices = (make_notice(),)
    return Alert(
        event_type=event_type,
        event_id=event_id,
        occurred_at=OCCURRED,
        organization="Acme",
        notices=notices,
        incidents_link="https://app.uptimy.example/incidents",
    )


def tools_alert() -> Alert:
    notice = Notice(
        healthcheck=HealthcheckRef("hc-1", "Docs MCP", "up", "https://app.uptimy.example/healthchecks/hc-1"),
        tools=ToolsChange(
            removed=("search_docs",), gained_required_inputs=(ToolInputs("create_issue", ("repo", "title")),)
        ),
    )
    return make_alert(EventType.TOOLS_CHANGED, notices=(notice,))


@pytest.fixture
def alert() -> Alert:
    return make_alert()
