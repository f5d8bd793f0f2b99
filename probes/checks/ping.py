"""The ping check (type 5): ICMP echo to a host, packet loss and round-trip times.

Unprivileged: the echo goes through Linux's datagram ICMP sockets (icmplib with
``privileged=False``), which need no root and no capability, only the worker's group inside
``net.ipv4.ping_group_range``. Where the kernel forbids them the check says so, naming the
setting, instead of failing as if the host were down. The host is resolved and guarded by the
check's :class:`~probes.connection.Connection` like every other target, and the echo goes to
the address that was checked.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import icmplib

from probes.checks.form import FormField, Widget
from probes.checks.registry import CheckKind, register
from probes.config import (
    DEFAULT_TIMEOUT,
    TIMEOUT_SCHEMA,
    ConfigError,
    config_fields,
    host_field,
    timeout_field,
    whole_number,
)
from probes.connection import CheckFailed, Connection
from probes.types import FailureKind, Headers, ProbeOutcome, Status, Timings

CONFIG_KEYS = frozenset({"host", "count", "maxLossPercent", "degradedRttMs", "timeout"})
COUNT_RANGE = (1, 10)
DEFAULT_COUNT = 3
DEFAULT_MAX_LOSS = 50
# Between echoes: quick enough that 10 fit a short timeout, slow enough not to look like a flood.
INTERVAL_SECONDS = 0.2
PING_GROUP_WORDS = (
    "Ping needs unprivileged ICMP sockets, which this worker's kernel forbids: allow its group "
    'with sysctl net.ipv4.ping_group_range="0 2147483647" (see the ping check\'s page)'
)


@dataclass(frozen=True, slots=True)
class PingConfig:
    """Hold one ping check's settings, validated by :func:`parse_ping_config`."""

    # A host name or IP literal as typed; also the key of the batch's per-host cap.
    host: str
    count: int = DEFAULT_COUNT
    max_loss_percent: int = DEFAULT_MAX_LOSS
    degraded_rtt_ms: int | None = None
    timeout: float = float(DEFAULT_TIMEOUT)
    headers: Headers = ()

    @property
    def target(self) -> str:
        return self.host


def parse_ping_config(raw: object) -> PingConfig:
    """Return a PingConfig from ``{"host", "count", "maxLossPercent", "degradedRttMs", "timeout"}``."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    host = host_field(data, errors)
    count = _whole(data, "count", DEFAULT_COUNT, COUNT_RANGE, errors)
    max_loss = _whole(data, "maxLossPercent", DEFAULT_MAX_LOSS, (0, 99), errors)
    rtt = data.get("degradedRttMs")
    degraded_rtt = None if rtt is None else _whole(data, "degradedRttMs", 0, (1, 60_000), errors)
    timeout = timeout_field(data.get("timeout", DEFAULT_TIMEOUT), errors)
    if not errors and count * INTERVAL_SECONDS + 1 > timeout:
        errors["count"] = (
            f"{count} echoes take about {count * INTERVAL_SECONDS + 1:g} s: raise the timeout or send fewer."
        )
    if errors:
        raise ConfigError(errors)
    return PingConfig(
        host=host, count=count, max_loss_percent=max_loss, degraded_rtt_ms=degraded_rtt, timeout=timeout
    )


def _whole(
    data: dict[str, Any], key: str, default: int, bounds: tuple[int, int], errors: dict[str, str]
) -> int:
    value = whole_number(data.get(key, default), key, *bounds, errors)
    return default if value is None else value


def ping_config_to_api(config: PingConfig) -> dict[str, Any]:
    """Return the API shape of ``config``."""
    return {
        "host": config.host,
        "count": config.count,
        "maxLossPercent": config.max_loss_percent,
        "degradedRttMs": config.degraded_rtt_ms,
        "timeout": config.timeout,
    }


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "Ping check config (type 5)",
    "type": "object",
    "additionalProperties": False,
    "required": ["host"],
    "properties": {
        "host": {"type": "string", "description": "A host name or an IP address.", "example": "example.com"},
        "count": {
            "type": "integer",
            "minimum": COUNT_RANGE[0],
            "maximum": COUNT_RANGE[1],
            "default": DEFAULT_COUNT,
            "description": f"Echo requests per run, {INTERVAL_SECONDS:g} s apart.",
        },
        "maxLossPercent": {
            "type": "integer",
            "minimum": 0,
            "maximum": 99,
            "default": DEFAULT_MAX_LOSS,
            "description": "The run is down when more of the echoes than this are lost.",
        },
        "degradedRttMs": {
            "type": ["integer", "null"],
            "minimum": 1,
            "description": "The run is degraded when the average round trip is slower (null: never).",
        },
        "timeout": TIMEOUT_SCHEMA,
    },
}

FORM = (
    FormField("host", "host", "Host", Widget.TEXT, placeholder="example.com", required=True),
    FormField(
        "count", "count", "Echo requests", Widget.INTEGER, help=f"1 to 10, {INTERVAL_SECONDS:g} s apart."
    ),
    FormField(
        "maxLossPercent",
        "max_loss_percent",
        "Down above this loss (%)",
        Widget.INTEGER,
        help="The run is down when more of the echoes are lost (default 50).",
    ),
    FormField(
        "degradedRttMs",
        "degraded_rtt_ms",
        "Degraded above this round trip (ms)",
        Widget.INTEGER,
        help="Average round trip; empty: never.",
    ),
    FormField("timeout", "timeout", "Timeout (seconds)", Widget.NUMBER),
)


@dataclass(frozen=True, slots=True)
class Echoes:
    """What one run's echoes came back with: counts and round trips in milliseconds."""

    sent: int
    received: int
    min_ms: float
    avg_ms: float
    max_ms: float

    @property
    def loss_percent(self) -> float:
        return 100.0 * (self.sent - self.received) / self.sent if self.sent else 100.0


def judge(config: PingConfig, echoes: Echoes) -> tuple[Status, FailureKind | None, str]:
    """Return the run's status, kind and reason from its echoes (the rules, pure)."""
    loss = echoes.loss_percent
    if echoes.received == 0:
        return Status.DOWN, FailureKind.PACKET_LOSS, f"No echo reply from {config.host} ({echoes.sent} sent)"
    if loss > config.max_loss_percent:
        return (
            Status.DOWN,
            FailureKind.PACKET_LOSS,
            f"{loss:.0f}% packet loss to {config.host} (more than {config.max_loss_percent}% allowed)",
        )
    if config.degraded_rtt_ms is not None and echoes.avg_ms > config.degraded_rtt_ms:
        return (
            Status.DEGRADED,
            FailureKind.SLOW_ROUND_TRIP,
            f"Round trips to {config.host} average {echoes.avg_ms:.1f} ms (over {config.degraded_rtt_ms} ms)",
        )
    return Status.UP, None, ""


async def echo(address: str, *, count: int, timeout: float) -> Echoes:
    """Send ``count`` echo requests to ``address`` through an unprivileged ICMP socket.

    Tests replace this module attribute where the kernel would need a network namespace.
    """
    host = await icmplib.async_ping(
        address, count=count, interval=INTERVAL_SECONDS, timeout=timeout, privileged=False
    )
    return Echoes(host.packets_sent, host.packets_received, host.min_rtt, host.avg_rtt, host.max_rtt)


async def check_ping(config: PingConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one ping check; ``deadline`` is the loop time the whole check ends by."""
    started = time.perf_counter()
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(deadline):
            addresses = await conn.addresses(config.host)
            address = str(addresses[0])
            # Each echo waits for its reply (icmplib's timeout is per echo) at most its share
            # of what is left, so a host that never answers is told as loss, not as a timeout.
            share = (deadline - loop.time()) / config.count - INTERVAL_SECONDS
            echoes = await echo(address, count=config.count, timeout=max(0.1, min(2.0, share * 0.9)))
    except CheckFailed as failed:
        return conn.finished(
            started, ProbeOutcome(status=Status.DOWN, kind=failed.kind, reason=failed.reason)
        )
    except TimeoutError:
        reason = conn.timeout_words(config.timeout) or f"No answer within {config.timeout:g} s"
        return conn.finished(
            started, ProbeOutcome(status=Status.DOWN, kind=FailureKind.TIMEOUT, reason=reason)
        )
    except icmplib.SocketPermissionError:
        return conn.finished(
            started, ProbeOutcome(status=Status.DOWN, kind=FailureKind.CONFIG, reason=PING_GROUP_WORDS)
        )
    except icmplib.ICMPLibError as exc:
        reason = f"Ping to {config.host} failed: {exc}"
        return conn.finished(
            started, ProbeOutcome(status=Status.DOWN, kind=FailureKind.CONNECT, reason=reason)
        )
    status, kind, reason = judge(config, echoes)
    details = {
        "address": address,
        "sent": echoes.sent,
        "received": echoes.received,
        "loss_percent": round(echoes.loss_percent, 1),
        "rtt_min_ms": round(echoes.min_ms, 3) if echoes.received else None,
        "rtt_avg_ms": round(echoes.avg_ms, 3) if echoes.received else None,
        "rtt_max_ms": round(echoes.max_ms, 3) if echoes.received else None,
    }
    dns = conn.timings(None).dns_ms
    # The response time of a ping is its average round trip, not the run's length (which the
    # interval between echoes sets): that is what the chart and the degraded threshold read.
    timings = Timings(dns_ms=dns, total_ms=round(echoes.avg_ms, 3) if echoes.received else None)
    return ProbeOutcome(status=status, kind=kind, reason=reason, timings=timings, details=details)


PING = register(
    CheckKind(
        number=5,
        name="ping",
        title="Ping check",
        config_type=PingConfig,
        parse=parse_ping_config,
        to_api=ping_config_to_api,
        schema=CONFIG_SCHEMA,
        run=check_ping,
        form=FORM,
        address_fields=("host",),
    )
)
