"""The plain values the check engine takes and returns.

Everything here is a frozen dataclass or an enum, so outcomes cross thread, process and
Celery boundaries as data, and tests build them without a database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """Name the states a healthcheck (or one region of it) can be in; defined only here."""

    PENDING = "pending"
    UP = "up"
    DEGRADED = "degraded"
    DOWN = "down"
    PAUSED = "paused"


class FailureKind(StrEnum):
    """Name why a check failed; the API, alerts and status pages show these words."""

    NO_ENDPOINT = "no_endpoint"
    NOT_MCP = "not_mcp"
    JSONRPC_ERROR = "jsonrpc_error"
    SIGNIN_NOT_DISCOVERABLE = "signin_not_discoverable"
    # A keyless check met a 401 from a server that publishes no OAuth sign-in at all: it wants
    # credentials of its own (an API key, Basic), which the check can be given as a header.
    CREDENTIALS_REQUIRED = "credentials_required"
    KEY_REFUSED = "key_refused"
    MISSING_TOOLS = "missing_tools"
    TOO_FEW_TOOLS = "too_few_tools"
    TIMEOUT = "timeout"
    DNS = "dns"
    TLS = "tls"
    CONNECT = "connect"
    HTTP_STATUS = "http_status"
    PROTOCOL = "protocol"
    BLOCKED_ADDRESS = "blocked_address"
    REDIRECT_REFUSED = "redirect_refused"
    TOO_LARGE = "too_large"
    KEYWORD = "keyword"
    # HTTP assertions (type 1): a status, header, body, JSON path or time assertion did not hold.
    ASSERTION = "assertion"
    # TLS certificates: expiring within the warning window (a degraded run), or unusable
    # (expired, not yet valid, untrusted chain, wrong name: a down run).
    CERTIFICATE_EXPIRING = "certificate_expiring"
    CERTIFICATE = "certificate"
    # Domain registrations (RDAP): expiring within the warning window, or expired.
    DOMAIN_EXPIRING = "domain_expiring"
    DOMAIN_EXPIRED = "domain_expired"
    # TCP: the reply to the line sent did not match.
    TCP_REPLY = "tcp_reply"
    # DNS records: the answer lacks the expected values, or is not DNSSEC-validated.
    DNS_ANSWER = "dns_answer"
    # Ping: more packets lost than allowed (down), or round trips over the threshold (degraded).
    PACKET_LOSS = "packet_loss"
    SLOW_ROUND_TRIP = "slow_round_trip"
    # Heartbeats: no ping by the grace's end, the job said it failed, or it ran too long.
    HEARTBEAT_LATE = "heartbeat_late"
    JOB_FAILED = "job_failed"
    RUN_TOO_LONG = "run_too_long"
    # Uptimy can't run the check as stored: its settings no longer pass a rule tightened since
    # they were saved, or its header values can't be decrypted with the server's keys.
    CONFIG = "config"


class Access(StrEnum):
    """Say how an MCP check got in: an open server, a keyless OAuth sign-in check, or a key."""

    OPEN = "open"
    OAUTH = "oauth"
    KEY = "key"


class SigninDiscovery(StrEnum):
    """Say which rule found a keyless check's sign-in, so a result can point out the legacy one.

    RESOURCE_METADATA: the server's RFC 9728 protected resource metadata named the
    authorization server (the rule since 2025-06-18). LEGACY_FALLBACK: the server has no such
    metadata, and its own origin serves RFC 8414 / OpenID metadata (the 2025-03-26 rule, which
    the SDK clients still follow but strict 2025-06-18+ clients do not).
    """

    RESOURCE_METADATA = "2025-06-18+"
    LEGACY_FALLBACK = "2025-03-26-fallback"


class Transport(StrEnum):
    STREAMABLE_HTTP = "streamable-http"
    SSE = "sse"


Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Timings:
    """Break one request down as monitoring products do; None where a phase did not happen.

    ``dns_ms``, ``tcp_ms``, ``tls_ms`` and ``ttfb_ms`` describe the first request (initialize
    for MCP); ``total_ms`` is the whole exchange.
    """

    dns_ms: float | None = None
    tcp_ms: float | None = None
    tls_ms: float | None = None
    ttfb_ms: float | None = None
    total_ms: float | None = None


@dataclass(frozen=True, slots=True)
class ServerInfo:
    name: str
    version: str


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """Keep one listed tool: what tells a changed list (name, required inputs) and its details.

    The details are what the scorecard judges, kept as the server gave them but capped
    (``probes.mcp.tools``): ``description`` trimmed and clipped, None when absent or not a
    string; ``input_schema`` the compact JSON text of whatever ``inputSchema`` held (an object
    or not), None when absent; each hint the boolean the server declared in ``annotations``, None
    when absent or not a boolean. ``description_kept`` / ``schema_kept`` are False when that
    detail was over a cap and dropped (then it is None, which does not mean absent).
    """

    name: str
    required_inputs: tuple[str, ...] = ()
    description: str | None = None
    input_schema: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    description_kept: bool = True
    schema_kept: bool = True


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """Report one check run; ``kind`` and ``reason`` are set exactly when status is DOWN or DEGRADED.

    A DEGRADED run reached its target and found something to warn about (a certificate that
    expires soon, slow round trips): its region counts as up, and the rules make the check
    degraded when the quorum of regions warns (``monitors.rules``). ``details`` holds what a
    type found beyond the common fields, as JSON values (the certificate, a DNS answer, ping
    figures); the API shows it as the result's ``details``.
    """

    status: Status
    kind: FailureKind | None = None
    reason: str = ""
    timings: Timings = field(default_factory=Timings)
    http_status: int | None = None
    # MCP only.
    server: ServerInfo | None = None
    protocol: str | None = None
    access: Access | None = None
    signin_server: str | None = None
    # How signin_server was found; None unless a keyless check discovered a sign-in.
    signin_discovery: SigninDiscovery | None = None
    tools: tuple[ToolInfo, ...] = ()
    tool_count: int | None = None
    tool_digest: str | None = None
    # Changes with any kept detail (description, schema, hints), unlike tool_digest.
    tool_details_digest: str | None = None
    missing_tools: tuple[str, ...] = ()
    transport: Transport | None = None
    warnings: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self.tools)
