"""The TLS check (type 2): a server's certificate at ``host:port``, optionally after STARTTLS.

The check connects through the address guard (``Connection.open_tcp``), speaks just enough
SMTP, IMAP or POP3 to start TLS when asked, and runs the handshake with the caller's trust
store (``Connection.start_tls``). It is down when the certificate is expired, not yet valid,
its chain does not verify or its name does not match; degraded when it expires within
``warnDays``; up otherwise. When verification fails it connects once more without verifying
(within the same deadline) only to read the certificate and say what is wrong with it. The
reading and the judgement are ``probes.certificates``, which HTTPS and MCP checks share.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from dataclasses import dataclass, replace
from typing import Any

from probes import certificates
from probes.checks.form import FormField, Widget
from probes.checks.registry import CheckKind, register
from probes.config import (
    DEFAULT_TIMEOUT,
    TIMEOUT_SCHEMA,
    ConfigError,
    config_fields,
    timeout_field,
    validate_host,
    whole_number,
)
from probes.connection import CheckFailed, Connection, leaf_certificate, sanitize
from probes.types import FailureKind, Headers, ProbeOutcome, Status
from probes.wire import Stream

STARTTLS_PROTOCOLS = ("smtp", "imap", "pop3")
DEFAULT_PORTS = {None: 443, "smtp": 25, "imap": 143, "pop3": 110}
MAX_WARN_DAYS = 365
# What a STARTTLS dialog may read before the handshake: a line, the lines, the bytes in all.
MAX_LINE = 2048
MAX_LINES = 100
MAX_DIALOG_BYTES = 32 * 1024
EHLO_NAME = "uptimy.invalid"
CONFIG_KEYS = frozenset({"host", "port", "starttls", "serverName", "warnDays", "timeout"})


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """Hold one TLS check's settings, already validated by :func:`parse_tls_config`."""

    host: str
    port: int = 443
    starttls: str | None = None
    server_name: str | None = None
    warn_days: int = certificates.DEFAULT_WARN_DAYS
    timeout: float = 10.0

    @property
    def target(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def headers(self) -> Headers:
        return ()

    @property
    def sni(self) -> str:
        """Return the name sent as SNI and the certificate is checked against."""
        return self.server_name or self.host


# --- config: parse, API shape, schema ------------------------------------------------------


def _host_value(raw: object, key: str, errors: dict[str, str]) -> str:
    try:
        return validate_host(raw).rstrip(".")
    except ValueError as exc:
        errors[key] = str(exc)
        return ""


def parse_tls_config(raw: object) -> TlsConfig:
    """Return a TlsConfig from the TLS check's API mapping; raise ConfigError naming each bad field."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    host = _host_value(data.get("host"), "host", errors) if "host" in data else ""
    if "host" not in data:
        errors["host"] = "This field is required."
    starttls = data.get("starttls")
    if starttls == "":
        starttls = None
    if starttls is not None and starttls not in STARTTLS_PROTOCOLS:
        errors["starttls"] = f"Must be one of {', '.join(STARTTLS_PROTOCOLS)}, or null."
        starttls = None
    port = DEFAULT_PORTS[starttls]
    if data.get("port") is not None:
        port = whole_number(data["port"], "port", 1, 65535, errors) or port
    server_name = None
    if data.get("serverName") not in (None, ""):
        server_name = _host_value(data["serverName"], "serverName", errors) or None
    warn_days = whole_number(
        data.get("warnDays", certificates.DEFAULT_WARN_DAYS), "warnDays", 0, MAX_WARN_DAYS, errors
    )
    timeout = timeout_field(data.get("timeout", DEFAULT_TIMEOUT), errors)
    if errors:
        raise ConfigError(errors)
    return TlsConfig(
        host=host,
        port=port,
        starttls=starttls,
        server_name=server_name if server_name != host else None,
        warn_days=warn_days if warn_days is not None else certificates.DEFAULT_WARN_DAYS,
        timeout=timeout,
    )


def tls_config_to_api(config: TlsConfig) -> dict[str, Any]:
    """Return the API shape of ``config``."""
    return {
        "host": config.host,
        "port": config.port,
        "starttls": config.starttls,
        "serverName": config.server_name,
        "warnDays": config.warn_days,
        "timeout": config.timeout,
    }


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "TLS check config (type 2)",
    "type": "object",
    "additionalProperties": False,
    "required": ["host"],
    "properties": {
        "host": {
            "type": "string",
            "description": "The host name or IP address to connect to.",
            "example": "mail.example.com",
        },
        "port": {
            "type": "integer",
            "minimum": 1,
            "maximum": 65535,
            "description": "The port; default 443, or 25 / 143 / 110 with STARTTLS for SMTP / IMAP / POP3.",
            "example": 443,
        },
        "starttls": {
            "type": ["string", "null"],
            "enum": [*STARTTLS_PROTOCOLS, None],
            "default": None,
            "description": "Speak this protocol up to its STARTTLS command before the handshake.",
        },
        "serverName": {
            "type": ["string", "null"],
            "description": "The name sent as SNI and matched against the certificate; default: host.",
        },
        "warnDays": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_WARN_DAYS,
            "default": certificates.DEFAULT_WARN_DAYS,
            "description": "Degraded when the certificate expires within this many days (0: never).",
        },
        "timeout": TIMEOUT_SCHEMA,
    },
}

FORM = (
    FormField("host", "host", "Host", Widget.TEXT, placeholder="example.com", required=True),
    FormField("port", "port", "Port", Widget.INTEGER, help="Default 443 (25, 143, 110 with STARTTLS)."),
    FormField(
        "starttls",
        "starttls",
        "STARTTLS",
        Widget.CHOICE,
        choices=("", *STARTTLS_PROTOCOLS),
        help="Start TLS inside SMTP, IMAP or POP3; empty: TLS from the first byte.",
    ),
    FormField("serverName", "server_name", "Server name (SNI)", Widget.TEXT, help="Empty: the host."),
    FormField("warnDays", "warn_days", "Warn days before expiry", Widget.INTEGER, placeholder="14"),
    FormField("timeout", "timeout", "Timeout (seconds)", Widget.NUMBER),
)


# --- STARTTLS ----------------------------------------------------------------------------------


class _Lines:
    """Read a server's lines from a stream, capping each line, their number and the bytes in all."""

    def __init__(self, stream: Stream, protocol: str) -> None:
        self._stream = stream
        self._protocol = protocol.upper()
        self._buffer = b""
        self._lines = 0
        self._bytes = 0

    def _fail(self, words: str) -> CheckFailed:
        return CheckFailed(FailureKind.PROTOCOL, f"{self._protocol} before STARTTLS: {words}")

    async def line(self) -> str:
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE:
                raise self._fail(f"a line longer than {MAX_LINE} bytes")
            try:
                chunk = await self._stream.read()
            except OSError as exc:
                raise CheckFailed(
                    FailureKind.CONNECT, f"The connection broke during the {self._protocol} dialog: {exc}"
                ) from None
            if not chunk:
                raise self._fail("the server closed the connection")
            self._bytes += len(chunk)
            if self._bytes > MAX_DIALOG_BYTES:
                raise self._fail(f"more than {MAX_DIALOG_BYTES // 1024} KiB before the handshake")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\n")
        if len(raw) > MAX_LINE:
            raise self._fail(f"a line longer than {MAX_LINE} bytes")
        self._lines += 1
        if self._lines > MAX_LINES:
            raise self._fail(f"more than {MAX_LINES} lines")
        return raw.rstrip(b"\r").decode("utf-8", errors="replace")

    def unexpected(self, line: str, expected: str) -> CheckFailed:
        return self._fail(f"expected {expected}, got {sanitize(line, 120)!r}")

    def ready(self) -> None:
        """Refuse bytes sent after the go-ahead: they would be read as if they came over TLS."""
        if self._buffer:
            raise self._fail("the server sent data after its go-ahead (a STARTTLS injection)")


async def _smtp_reply(lines: _Lines) -> tuple[str, list[str]]:
    """Return an SMTP reply's code and its lines (a multi-line reply ends at "250 ", not "250-")."""
    texts: list[str] = []
    while True:
        line = await lines.line()
        if len(line) < 3 or not line[:3].isdigit() or line[3:4] not in ("", " ", "-"):
            raise lines.unexpected(line, "an SMTP reply")
        texts.append(line[4:])
        if line[3:4] != "-":
            return line[:3], texts


async def _smtp(stream: Stream, lines: _Lines) -> None:
    code, _ = await _smtp_reply(lines)
    if code != "220":
        raise lines.unexpected(code, "the 220 greeting")
    stream.write(f"EHLO {EHLO_NAME}\r\n".encode())
    code, texts = await _smtp_reply(lines)
    if code != "250":
        raise lines.unexpected(code, "250 to EHLO")
    if not any(text.upper().split(" ")[0] == "STARTTLS" for text in texts):
        raise CheckFailed(FailureKind.PROTOCOL, "The SMTP server does not offer STARTTLS")
    stream.write(b"STARTTLS\r\n")
    code, texts = await _smtp_reply(lines)
    if code != "220":
        raise CheckFailed(
            FailureKind.PROTOCOL, f"The SMTP server refused STARTTLS: {code} {sanitize(' '.join(texts), 120)}"
        )


async def _imap(stream: Stream, lines: _Lines) -> None:
    greeting = await lines.line()
    if not greeting.upper().startswith("* OK"):
        raise lines.unexpected(greeting, "the * OK greeting")
    stream.write(b"a1 STARTTLS\r\n")
    while True:
        line = await lines.line()
        if line.startswith("* "):
            continue
        if line.upper().startswith("A1 OK"):
            return
        if line.upper().startswith(("A1 NO", "A1 BAD")):
            raise CheckFailed(
                FailureKind.PROTOCOL, f"The IMAP server refused STARTTLS: {sanitize(line[3:], 120)}"
            )
        raise lines.unexpected(line, "a1 OK")


async def _pop3(stream: Stream, lines: _Lines) -> None:
    greeting = await lines.line()
    if not greeting.startswith("+OK"):
        raise lines.unexpected(greeting, "the +OK greeting")
    stream.write(b"STLS\r\n")
    line = await lines.line()
    if not line.startswith("+OK"):
        raise CheckFailed(FailureKind.PROTOCOL, f"The POP3 server refused STLS: {sanitize(line, 120)}")


_DIALOGS = {"smtp": _smtp, "imap": _imap, "pop3": _pop3}


async def _open(config: TlsConfig, conn: Connection) -> Stream:
    """Return a stream to the target, STARTTLS already agreed when the config asks for it."""
    stream, _ = await conn.open_tcp(config.host, config.port)
    if config.starttls is not None:
        lines = _Lines(stream, config.starttls)
        try:
            await _DIALOGS[config.starttls](stream, lines)
            lines.ready()
        except BaseException:
            stream.close()
            raise
    return stream


@functools.cache
def unverified_context() -> ssl.SSLContext:
    """Return the context that reads a certificate which did not verify (never used to trust one)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


async def _handshake(
    config: TlsConfig, conn: Connection, context: ssl.SSLContext | None = None
) -> bytes | None:
    stream = await _open(config, conn)
    try:
        await conn.start_tls(stream, config.sni, context=context)
        return leaf_certificate(stream)
    finally:
        stream.close()


# --- the check -------------------------------------------------------------------------------


async def check_tls(config: TlsConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one TLS check; ``deadline`` is the loop time the whole check ends by."""
    started = time.perf_counter()
    failure: certificates.Failure | None = None
    der: bytes | None = None
    try:
        async with asyncio.timeout_at(deadline):
            der = await _handshake(config, conn)
    except CheckFailed as failed:
        if failed.verify_code is None:
            outcome = ProbeOutcome(status=Status.DOWN, kind=failed.kind, reason=failed.reason)
            return _timed(outcome, conn, started)
        failure = certificates.Failure(failed.verify_code, failed.verify_message)
    except TimeoutError:
        reason = conn.timeout_words(config.timeout)
        outcome = ProbeOutcome(
            status=Status.DOWN,
            kind=FailureKind.TIMEOUT,
            reason=reason or f"No TLS handshake with {config.target} within {config.timeout:g} s",
        )
        return _timed(outcome, conn, started)
    if failure is not None:
        # Once more without verifying, only to read what the server sends; the verdict stays down.
        try:
            async with asyncio.timeout_at(deadline):
                der = await _handshake(config, conn, unverified_context())
        except (CheckFailed, TimeoutError):
            der = None
    certificate = certificates.parse(der) if der else None
    now = certificates.utc_now()
    verdict = certificates.judge(
        certificate, now=now, server_name=config.sni, warn_days=config.warn_days, failure=failure
    )
    details: dict[str, Any] = {}
    if certificate is not None:
        details["certificate"] = certificates.describe(
            certificate, now=now, server_name=config.sni, failure=failure
        )
    outcome = ProbeOutcome(status=verdict.status, kind=verdict.kind, reason=verdict.reason, details=details)
    return _timed(outcome, conn, started)


def _timed(outcome: ProbeOutcome, conn: Connection, started: float) -> ProbeOutcome:
    return replace(outcome, timings=conn.timings((time.perf_counter() - started) * 1000))


TLS = register(
    CheckKind(
        number=2,
        name="tls",
        title="TLS certificate check",
        config_type=TlsConfig,
        parse=parse_tls_config,
        to_api=tls_config_to_api,
        schema=CONFIG_SCHEMA,
        run=check_tls,
        form=FORM,
        # serverName is only sent (SNI), never connected to: host is the one address reached.
        address_fields=("host",),
    )
)
