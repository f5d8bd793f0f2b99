"""List the server's tools page by page, without ever calling one.

The tool list is what the verdict is built on, and pagination is where servers go wrong (loops,
empty cursors, endless pages), so the listing is capped and each oddity becomes a warning rather
than a failure.
"""

from __future__ import annotations

from typing import Any

from probes.connection import CheckFailed
from probes.jsonrpc import JsonObject
from probes.mcp.calls import call
from probes.mcp.exchange import Exchange
from probes.mcp.transport import short
from probes.types import FailureKind, ToolInfo

MAX_PAGES = 10


async def list_tools(ex: Exchange) -> list[ToolInfo]:
    """Return the tools over at most MAX_PAGES pages; a repeated or empty cursor ends the list."""
    tools: dict[str, ToolInfo] = {}
    seen: set[str] = set()
    cursor: str | None = None
    for page in range(1, MAX_PAGES + 1):
        ex.phase = "tools/list" if page == 1 else f"tools/list page {page}"
        result = await call(ex, "tools/list", {"cursor": cursor} if cursor is not None else None)
        listed = result.get("tools")
        if not isinstance(listed, list):
            raise CheckFailed(FailureKind.PROTOCOL, f"The {ex.phase} result has no tools list")
        _collect_tools(ex, listed, tools)
        next_cursor = result.get("nextCursor")
        if next_cursor is None:
            break
        if not isinstance(next_cursor, str) or not next_cursor:
            ex.warnings.append("tools/list returned an empty nextCursor; treated as the end")
            break
        if next_cursor in seen:
            ex.warnings.append("tools/list pagination loops (a cursor repeated); stopped there")
            break
        seen.add(next_cursor)
        cursor = next_cursor
    else:
        ex.warnings.append(f"tools/list has more than {MAX_PAGES} pages; counted the first {MAX_PAGES}")
    return list(tools.values())


def _collect_tools(ex: Exchange, listed: list[Any], tools: dict[str, ToolInfo]) -> None:
    for item in listed:
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name:
            ex.warnings.append("tools/list returned a tool without a name")
            continue
        if name in tools:
            ex.warnings.append(f"tools/list lists {short(name)} twice")
            continue
        tools[name] = ToolInfo(name=name, required_inputs=_required_inputs(item))


def _required_inputs(tool: JsonObject) -> tuple[str, ...]:
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    if not isinstance(required, list):
        return ()
    return tuple(str(name) for name in required if isinstance(name, str))
