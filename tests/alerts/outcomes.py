"""Probe outcomes the alert tests record: a tool list as an MCP check would read it, and its loss."""

from __future__ import annotations

from probes.types import Access, FailureKind, ProbeOutcome, Status, Timings, ToolInfo, Transport

SEARCH, READ = ToolInfo("search_docs", ("query",)), ToolInfo("read_page", ("url",))
TOOLS = (SEARCH, READ)


def listing(*tools: ToolInfo) -> ProbeOutcome:
    """Return an up outcome that listed ``tools``."""
    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(total_ms=80.0),
        access=Access.OPEN,
        tools=tools,
        tool_count=len(tools),
        tool_digest="d-" + "-".join(tool.name for tool in tools),
        transport=Transport.STREAMABLE_HTTP,
    )


def missing_search_docs() -> ProbeOutcome:
    """Return the down outcome of a check that requires search_docs once the server dropped it."""
    return ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.MISSING_TOOLS,
        reason="Required tools missing: search_docs",
        timings=Timings(total_ms=90.0),
        tools=(READ,),
        tool_count=1,
        tool_digest="d-read_page",
        missing_tools=("search_docs",),
    )
