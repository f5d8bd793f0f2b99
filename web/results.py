"""Shape one check result for the page, the same way from a stored result and from a one-off run.

The names are the product text's: Server, Protocol, Access, Sign-in server, Tools, Missing
tools, Request breakdown. The breakdown is drawn as an SVG stacked bar (presentation
attributes, no inline style: the page's Content-Security-Policy allows none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from monitors.models import ProbeResult
from probes.types import Access, FailureKind, ProbeOutcome

ACCESS_WORDS = {Access.OPEN.value: "Open", Access.OAUTH.value: "OAuth sign-in", Access.KEY.value: "Key"}
# A keyless check of a server that wants credentials of its own: no way in was found.
CREDENTIALS_REQUIRED_WORDS = "Credentials required (no OAuth sign-in published)"
STATUS_WORDS = {
    "up": "Up",
    "down": "Down",
    "degraded": "Degraded",
    "pending": "Pending",
    "paused": "Paused",
}
# The phases of the first request, in the order they happen, as the breakdown names them.
PHASES = (("dns", "DNS"), ("tcp", "TCP"), ("tls", "TLS"), ("ttfb", "Time to first byte"))
BAR_WIDTH = 300.0
# Failures that end before a server answers anything: no response time to show, whatever was timed.
NEVER_CONNECTED = frozenset(
    {
        FailureKind.BLOCKED_ADDRESS.value,
        FailureKind.DNS.value,
        FailureKind.CONNECT.value,
        FailureKind.CONFIG.value,
    }
)


def response_time(ms: float | None, kind: str) -> float | None:
    """Return the response time to show for a run that failed with ``kind``: None when it never connected."""
    return None if kind in NEVER_CONNECTED else ms


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    required_inputs: tuple[str, ...] = ()
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    key: str
    label: str
    ms: float
    x: float
    width: float


@dataclass(frozen=True, slots=True)
class ResultView:
    """What one run found, with the product text's names."""

    status: str
    kind: str = ""
    reason: str = ""
    http_status: int | None = None
    server_name: str = ""
    server_version: str = ""
    protocol: str = ""
    access: str = ""
    signin_server: str = ""
    transport: str = ""
    tool_count: int | None = None
    tools: tuple[Tool, ...] = ()
    missing_tools: tuple[str, ...] = ()
    timings: dict[str, float | None] = field(default_factory=dict)
    total_ms: float | None = None
    region: str = ""
    details: tuple[tuple[str, str], ...] = ()

    @property
    def status_words(self) -> str:
        return STATUS_WORDS.get(self.status, self.status)

    @property
    def access_words(self) -> str:
        if not self.access and self.kind == FailureKind.CREDENTIALS_REQUIRED.value:
            return CREDENTIALS_REQUIRED_WORDS
        return ACCESS_WORDS.get(self.access, self.access) or "—"

    @property
    def is_mcp(self) -> bool:
        return bool(
            self.protocol
            or self.server_name
            or self.access
            or self.tool_count is not None
            or self.kind == FailureKind.CREDENTIALS_REQUIRED.value
        )

    @property
    def response_ms(self) -> float | None:
        return response_time(self.total_ms, self.kind)

    @property
    def breakdown(self) -> list[Segment]:
        return breakdown(self.timings)


def breakdown(timings: dict[str, float | None]) -> list[Segment]:
    """Return the stacked bar's segments: each phase's share of the bar's width, in order."""
    phases = [(key, label, timings.get(key)) for key, label in PHASES]
    measured = [(key, label, ms) for key, label, ms in phases if ms is not None and ms >= 0]
    total = sum(ms for _, _, ms in measured)
    segments: list[Segment] = []
    x = 0.0
    for key, label, ms in measured:
        width = BAR_WIDTH * ms / total if total else 0.0
        segments.append(Segment(key=key, label=label, ms=ms, x=round(x, 2), width=round(width, 2)))
        x += width
    return segments


def view_of_outcome(outcome: ProbeOutcome) -> ResultView:
    """Return a one-off run's outcome (the form's "Test now") as the page shows results."""
    timings = outcome.timings
    return ResultView(
        status=outcome.status.value,
        kind=outcome.kind.value if outcome.kind else "",
        reason=outcome.reason,
        http_status=outcome.http_status,
        server_name=outcome.server.name if outcome.server else "",
        server_version=outcome.server.version if outcome.server else "",
        protocol=outcome.protocol or "",
        access=outcome.access.value if outcome.access else "",
        signin_server=outcome.signin_server or "",
        transport=outcome.transport.value if outcome.transport else "",
        tool_count=outcome.tool_count,
        tools=tuple(Tool(tool.name, tool.required_inputs, tool.description) for tool in outcome.tools),
        missing_tools=outcome.missing_tools,
        timings={
            "dns": timings.dns_ms,
            "tcp": timings.tcp_ms,
            "tls": timings.tls_ms,
            "ttfb": timings.ttfb_ms,
        },
        total_ms=timings.total_ms,
        details=detail_rows(outcome.details),
    )


# What a row of details shows at the most: a hostile answer has a column cap already, a page a smaller one.
MAX_DETAIL_ROWS = 40
MAX_DETAIL_TEXT = 500


def detail_rows(details: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Return a type's details as labelled rows: nested objects name their parent, lists are joined.

    ``{"certificate": {"days_left": 3}}`` is the row ("Certificate: days left", "3"); the page
    draws any type's details this way, so no type needs a template of its own.
    """
    rows: list[tuple[str, str]] = []

    def add(label: str, value: Any) -> None:
        if len(rows) >= MAX_DETAIL_ROWS:
            return
        if isinstance(value, Mapping):
            for key, item in value.items():
                add(f"{label}: {_words(str(key))}" if label else _words(str(key)).capitalize(), item)
            return
        rows.append((label, _shown(value)[:MAX_DETAIL_TEXT]))

    add("", details)
    return tuple(rows)


def _words(key: str) -> str:
    """Return a details key as words: ``days_left`` and ``daysLeft`` are "days left"."""
    spaced = "".join(f" {char.lower()}" if char.isupper() else char for char in key)
    return spaced.replace("_", " ").strip()


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={_shown(item)}" for key, item in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_shown(item) for item in value)
    return str(value)


def view_of_result(
    result: ProbeResult,
    tools: Sequence[Mapping[str, Any]] = (),
    descriptions: Mapping[str, str | None] | None = None,
) -> ResultView:
    """Return a stored result as the page shows it; ``tools`` is its tool list (ToolList.tools).

    ``descriptions`` are the tools' descriptions by name, from the check's current tool list
    version (the stored result keeps names and required inputs only).
    """
    return ResultView(
        status=result.status,
        kind=result.kind,
        reason=result.reason,
        http_status=result.http_status,
        server_name=result.server_name,
        server_version=result.server_version,
        protocol=result.protocol,
        access=result.access,
        signin_server=result.signin_server,
        transport=result.transport,
        tool_count=result.tool_count,
        tools=tuple(_tool(tool, descriptions or {}) for tool in tools),
        missing_tools=tuple(result.missing_tools or ()),
        timings={"dns": result.dns_ms, "tcp": result.tcp_ms, "tls": result.tls_ms, "ttfb": result.ttfb_ms},
        total_ms=result.total_ms,
        region=result.region.slug,
        details=detail_rows(result.details or {}),
    )


def _tool(stored: Mapping[str, Any], descriptions: Mapping[str, str | None]) -> Tool:
    """Return one tool of a stored tool list (``{"name": …, "required_inputs": […]}``) with its description."""
    inputs = stored.get("required_inputs") or []
    name = str(stored.get("name", ""))
    return Tool(name, tuple(str(item) for item in inputs), descriptions.get(name))
