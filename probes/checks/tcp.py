"""The TCP port check (type 3): connect to ``host:port``, optionally TLS, send a line, expect a reply.

Everything the type is lives here: its config (:class:`TcpConfig`), the parser the API, the
worker and the commands validate it with, its API shape, JSON schema and form, and the check
itself, registered once as :data:`TCP`. The connection is the engine's
(:meth:`~probes.connection.Connection.open_tcp`, ``start_tls``): the same address guard on
every address of the host, the same DNS, TCP and TLS timings.

The reply is hostile text: at most :data:`MAX_REPLY_BYTES` and :data:`MAX_REPLY_LINES` are
read, decoded as UTF-8 with replacement, and only a cleaned, clipped copy is kept. A banner
protocol (SMTP, SSH, FTP) needs ``expect`` and no ``send``: the server speaks first.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Any

from probes import wire
from probes.checks.form import FormField, Widget
from probes.checks.registry import CheckKind, register
from probes.config import (
    DEFAULT_TIMEOUT,
    TIMEOUT_SCHEMA,
    ConfigError,
    boolean_field,
    config_fields,
    host_field,
    text_problem,
    timeout_field,
    validate_host,
    whole_number,
)
from probes.connection import CheckFailed, Connection, sanitize
from probes.netguard import IPAddress
from probes.redact import clip
from probes.regex import Regex, RegexRefused, compile_regex
from probes.types import FailureKind, Headers, ProbeOutcome, Status

MAX_SEND_BYTES = 1024
MAX_EXPECT = 512
# What is read of a reply at most: the regex is matched against this much, never more.
MAX_REPLY_BYTES = 4096
MAX_REPLY_LINES = 50
# What a result keeps of the reply (details) and what a reason quotes of it and of the regex.
SHOWN_REPLY = 200
QUOTED_REPLY = 120
QUOTED_EXPECT = 100
LINE_ENDINGS = {"lf": "\n", "crlf": "\r\n", "none": ""}
CONFIG_KEYS = frozenset({"host", "port", "tls", "serverName", "send", "lineEnding", "expect", "timeout"})


@dataclass(frozen=True, slots=True)
class TcpConfig:
    """Hold one TCP check's settings, already validated by :func:`parse_tcp_config`.

    ``send`` is the line without its ending (``line_ending`` is one of :data:`LINE_ENDINGS`);
    ``expect`` is the regex compiled at parse (RE2, :mod:`probes.regex`: linear time), matched with ``search``.
    """

    host: str
    port: int
    tls: bool = False
    server_name: str | None = None
    send: str | None = None
    line_ending: str = "lf"
    expect: Regex | None = None
    timeout: float = float(DEFAULT_TIMEOUT)

    @property
    def target(self) -> str:
        return address_words(self.host, self.port)

    @property
    def headers(self) -> Headers:
        return ()

    @property
    def line(self) -> bytes | None:
        """Return the bytes sent, line ending included, or None when the check sends nothing."""
        if self.send is None:
            return None
        return (self.send + LINE_ENDINGS[self.line_ending]).encode()


def address_words(host: str, port: int | str) -> str:
    """Return ``host:port`` as people write it, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# --- config: parse, API shape, schema ------------------------------------------------------


def parse_tcp_config(raw: object) -> TcpConfig:
    """Return a TcpConfig from the TCP check's API mapping; raise ConfigError naming each bad field."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    host = host_field(data, errors)
    port = _port(data, errors)
    tls = boolean_field(data, "tls", False, errors)
    server_name = _server_name(data, tls, errors)
    send = _send(data.get("send"), errors)
    line_ending = data.get("lineEnding", "lf")
    if line_ending not in LINE_ENDINGS:
        errors["lineEnding"] = f"Must be one of {', '.join(LINE_ENDINGS)}."
        line_ending = "lf"
    expect = _expect(data.get("expect"), errors)
    timeout = timeout_field(data.get("timeout", DEFAULT_TIMEOUT), errors)
    if errors:
        raise ConfigError(errors)
    return TcpConfig(
        host=host,
        port=port,
        tls=tls,
        server_name=server_name,
        send=send,
        line_ending=str(line_ending),
        expect=expect,
        timeout=timeout,
    )


def _port(data: dict[str, Any], errors: dict[str, str]) -> int:
    if "port" not in data:
        errors["port"] = "This field is required."
        return 0
    port = whole_number(data["port"], "port", 1, 65535, errors)
    return 0 if port is None else port


def _server_name(data: dict[str, Any], tls: bool, errors: dict[str, str]) -> str | None:
    raw = data.get("serverName")
    if raw is None or raw == "":
        return None
    if not tls:
        errors["serverName"] = "Only a TLS check sends a server name; set tls to true or leave it out."
        return None
    try:
        return validate_host(raw)
    except ValueError as exc:
        errors["serverName"] = str(exc)
        return None


def _send(raw: object, errors: dict[str, str]) -> str | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        errors["send"] = "Must be a line of text, or null."
        return None
    # One line: a trailing line ending is the one the check sends anyway (lineEnding).
    line = raw.removesuffix("\n").removesuffix("\r")
    if problem := text_problem(line):
        errors["send"] = f"{problem} Send one line of printable text; its ending is lineEnding."
        return None
    if len(line.encode()) > MAX_SEND_BYTES:
        errors["send"] = f"Must be at most {MAX_SEND_BYTES // 1024} KiB."
        return None
    return line or None


def _expect(raw: object, errors: dict[str, str]) -> Regex | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str) or len(raw) > MAX_EXPECT:
        errors["expect"] = f"Must be a regular expression of at most {MAX_EXPECT} characters, or null."
        return None
    if problem := text_problem(raw):
        errors["expect"] = problem
        return None
    try:
        return compile_regex(raw)
    except RegexRefused as exc:
        errors["expect"] = str(exc)
        return None


def tcp_config_to_api(config: TcpConfig) -> dict[str, Any]:
    """Return the API shape of ``config`` (no ``headers``: a TCP check sends none, so holds no secret)."""
    return {
        "host": config.host,
        "port": config.port,
        "tls": config.tls,
        "serverName": config.server_name,
        "send": config.send,
        "lineEnding": config.line_ending,
        "expect": config.expect.pattern if config.expect is not None else None,
        "timeout": config.timeout,
    }


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "TCP port check config (type 3)",
    "type": "object",
    "additionalProperties": False,
    "required": ["host", "port"],
    "properties": {
        "host": {
            "type": "string",
            "description": "The host name or IP address to connect to (no scheme, no port).",
            "example": "mail.example.com",
        },
        "port": {"type": "integer", "minimum": 1, "maximum": 65535, "example": 25},
        "tls": {"type": "boolean", "default": False, "description": "Run a TLS handshake once connected."},
        "serverName": {
            "type": ["string", "null"],
            "description": "TLS only: the name sent as SNI and checked against the certificate (default: host).",
        },
        "send": {
            "type": ["string", "null"],
            "maxLength": MAX_SEND_BYTES,
            "description": "One line of printable text sent once connected (lineEnding is appended).",
        },
        "lineEnding": {"type": "string", "enum": list(LINE_ENDINGS), "default": "lf"},
        "expect": {
            "type": ["string", "null"],
            "maxLength": MAX_EXPECT,
            "description": (
                f"A regular expression (RE2 syntax: no backreferences or lookaround) the reply must match, searched in its first "
                f"{MAX_REPLY_BYTES // 1024} KiB and {MAX_REPLY_LINES} lines, read as UTF-8. "
                "Without send, the server's banner."
            ),
            "example": "^SSH-2\\.0-",
        },
        "timeout": TIMEOUT_SCHEMA,
    },
}


FORM = (
    FormField("host", "host", "Host", Widget.TEXT, placeholder="mail.example.com", required=True),
    FormField("port", "port", "Port", Widget.INTEGER, placeholder="25", required=True),
    FormField("tls", "tls", "TLS", Widget.CHECKBOX, help="Run a TLS handshake once connected."),
    FormField(
        "send",
        "send",
        "Send",
        Widget.TEXT,
        help="One line sent once connected (a line feed is added); empty: nothing is sent.",
        placeholder="PING",
    ),
    FormField(
        "expect",
        "expect",
        "Expect",
        Widget.TEXT,
        help="A regular expression the reply (or the banner) must match; empty: connecting is enough.",
        placeholder="^\\+PONG",
    ),
    FormField("timeout", "timeout", "Timeout (seconds)", Widget.NUMBER),
)


# --- the check -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Progress:
    """What the run has got to, for the sentence of a deadline that passes: phase, address, reply."""

    phase: str = "connect"
    address: str | None = None
    reply: bytes = b""


async def check_tcp(config: TcpConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one TCP check; ``deadline`` is the loop time the whole check ends by."""
    started = time.perf_counter()
    progress = _Progress()
    first_byte: list[float] = []
    try:
        async with asyncio.timeout_at(deadline):
            outcome = await _run(config, conn, progress, first_byte)
    except CheckFailed as failed:
        outcome = ProbeOutcome(status=Status.DOWN, kind=failed.kind, reason=failed.reason)
    except TimeoutError:
        outcome = _timed_out(config, conn, progress)
    if progress.address is not None and not outcome.details:
        outcome = replace(outcome, details=_details(progress))
    total_ms = (time.perf_counter() - started) * 1000
    timings = conn.timings(total_ms)
    if first_byte:
        timings = replace(timings, ttfb_ms=round(first_byte[0], 2))
    return replace(outcome, timings=timings)


async def _run(
    config: TcpConfig, conn: Connection, progress: _Progress, first_byte: list[float]
) -> ProbeOutcome:
    stream, address = await conn.open_tcp(config.host, config.port)
    progress.address = _address(address, config.port)
    try:
        if config.tls:
            progress.phase = "tls"
            await conn.start_tls(stream, config.server_name or config.host)
        line = config.line
        waited = time.perf_counter()
        if line is not None:
            progress.phase = "send"
            try:
                stream.write(line)
            except OSError as exc:
                raise CheckFailed(
                    FailureKind.CONNECT,
                    f"The connection to {config.target} broke while sending: {wire.os_error_words(exc)}",
                ) from None
        if config.expect is None:
            return ProbeOutcome(status=Status.UP)
        progress.phase = "reply"
        return await _read_reply(config, config.expect, stream, progress, waited, first_byte)
    finally:
        stream.close()


async def _read_reply(
    config: TcpConfig,
    expect: Regex,
    stream: wire.Stream,
    progress: _Progress,
    waited: float,
    first_byte: list[float],
) -> ProbeOutcome:
    """Read until ``expect`` matches the reply, or the reply ends, fills the caps, or the deadline passes."""
    while True:
        try:
            chunk = await stream.read()
        except OSError as exc:
            raise CheckFailed(
                FailureKind.CONNECT,
                f"The connection to {config.target} broke while reading the reply: {wire.os_error_words(exc)}",
            ) from None
        if chunk and not first_byte:
            first_byte.append((time.perf_counter() - waited) * 1000)
        room = MAX_REPLY_BYTES - len(progress.reply)
        progress.reply += chunk[:room]
        text = _reply_text(progress.reply)
        if expect.search(text):
            return ProbeOutcome(status=Status.UP, details=_details(progress))
        capped = len(progress.reply) >= MAX_REPLY_BYTES or progress.reply.count(b"\n") >= MAX_REPLY_LINES
        if not chunk or capped:
            return ProbeOutcome(
                status=Status.DOWN,
                kind=FailureKind.TCP_REPLY,
                reason=_mismatch_words(config, expect, progress, ended=not chunk),
                details=_details(progress),
            )


def _reply_text(reply: bytes) -> str:
    """Return the reply as the regex reads it: UTF-8 with replacement, cut to MAX_REPLY_LINES lines."""
    text = reply.decode("utf-8", errors="replace")
    lines = text.split("\n", MAX_REPLY_LINES)
    return "\n".join(lines[:MAX_REPLY_LINES]) if len(lines) > MAX_REPLY_LINES else text


def _mismatch_words(config: TcpConfig, expect: Regex, progress: _Progress, *, ended: bool) -> str:
    if not progress.reply:
        return f"{config.target} closed the connection without a reply (expected /{_shown_expect(expect)}/)"
    got = sanitize(_reply_text(progress.reply), QUOTED_REPLY)
    why = "" if ended else f" in its first {MAX_REPLY_BYTES // 1024} KiB or {MAX_REPLY_LINES} lines"
    return f'Reply did not match /{_shown_expect(expect)}/{why}: got "{got}"'


def _timed_out(config: TcpConfig, conn: Connection, progress: _Progress) -> ProbeOutcome:
    """Return the outcome of a deadline that passed: a reply that came but never matched is
    ``tcp_reply`` (what came is quoted); otherwise ``timeout``, naming the phase it ended."""
    seconds = f"{config.timeout:g} s"
    if progress.phase == "reply" and progress.reply and config.expect is not None:
        got = sanitize(_reply_text(progress.reply), QUOTED_REPLY)
        return ProbeOutcome(
            status=Status.DOWN,
            kind=FailureKind.TCP_REPLY,
            reason=f'Reply did not match /{_shown_expect(config.expect)}/ within {seconds}: got "{got}"',
        )
    if progress.phase == "connect":
        reason = conn.timeout_words(config.timeout) or f"No connection to {config.target} within {seconds}"
    elif progress.phase == "tls":
        reason = f"TLS handshake with {config.target} got no answer within {seconds}"
    elif progress.phase == "send":
        reason = f"Sending to {config.target} did not finish within {seconds}"
    else:
        expect = f" (expected /{_shown_expect(config.expect)}/)" if config.expect is not None else ""
        reason = f"No reply within {seconds}{expect}"
    return ProbeOutcome(status=Status.DOWN, kind=FailureKind.TIMEOUT, reason=reason)


def _shown_expect(expect: Regex) -> str:
    """Return the regex as a reason quotes it: the customer's own printable text (parse says so), clipped."""
    return clip(expect.pattern, QUOTED_EXPECT)


def _details(progress: _Progress) -> dict[str, Any]:
    details: dict[str, Any] = {"address": progress.address}
    if progress.reply:
        details["reply"] = sanitize(_reply_text(progress.reply), SHOWN_REPLY)
    return details


def _address(address: IPAddress, port: int) -> str:
    return address_words(str(address), port)


TCP = register(
    CheckKind(
        number=3,
        name="tcp",
        title="TCP port check",
        config_type=TcpConfig,
        parse=parse_tcp_config,
        to_api=tcp_config_to_api,
        schema=CONFIG_SCHEMA,
        run=check_tcp,
        form=FORM,
        address_fields=("host",),
    )
)
