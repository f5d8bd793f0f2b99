"""List the server's tools page by page, without ever calling one.

The tool list is what the verdict is built on, and pagination is where servers go wrong (loops,
empty cursors, endless pages), so the listing is capped and each oddity becomes a warning rather
than a failure.
"""

from __future__ import annotations

from typing import Any

from probes.connection import MAX_BODY_BYTES, CheckFailed
from probes.jsonrpc import JsonObject
from probes.mcp.calls import call
from probes.mcp.exchange import Exchange
from probes.mcp.transport import short
from probes.types import FailureKind, ToolInfo

MAX_PAGES = 10
# The most tools a check reads across all pages. A real server lists tens, a large gateway a
# few thousand; more is a broken or hostile server, and each tool costs memory, CPU (the
# verdict, the digest) and a row's worth of storage downstream. It is also the ceiling of a
# check's ``minTools`` setting (probes.checks.mcp.MAX_MIN_TOOLS), so no valid config needs more.
MAX_TOOLS = 10_000
# The most bytes of tools/list answers a check reads across all pages: twice the one-answer
# cap, room for MAX_TOOLS tools with long descriptions and schemas, while 10 pages of 5 MiB
# each (50 MiB of JSON, over a gigabyte of Python objects) are refused. Checked after each
# page, so at most one more page (MAX_BODY_BYTES) is read and parsed past it.
MAX_TOOLS_LIST_BYTES = 2 * MAX_BODY_BYTES
TOOLS_LIST_BYTES_WORDS = f"{MAX_TOOLS_LIST_BYTES // (1024 * 1024)} MiB"
# Duplicate names are warned about one by one up to this many, then counted in one warning.
MAX_NAMED_DUPLICATES = 3


async def list_tools(ex: Exchange) -> list[ToolInfo]:
    """Return the tools over at most MAX_PAGES pages; a repeated or empty cursor ends the list."""
    tools: dict[str, ToolInfo] = {}
    seen: set[str] = set()
    cursor: str | None = None
    listed_count = 0
    duplicates = 0
    first_byte = ex.answer_bytes
    for page in range(1, MAX_PAGES + 1):
        ex.phase = "tools/list" if page == 1 else f"tools/list page {page}"
        result = await call(ex, "tools/list", {"cursor": cursor} if cursor is not None else None)
        if ex.answer_bytes - first_byte > MAX_TOOLS_LIST_BYTES:
            raise CheckFailed(
                FailureKind.TOO_LARGE,
                f"The tools/list answers are larger than the {TOOLS_LIST_BYTES_WORDS} cap for all pages "
                f"together (reached on page {page})",
            )
        listed = result.get("tools")
        if not isinstance(listed, list):
            raise CheckFailed(FailureKind.PROTOCOL, f"The {ex.phase} result has no tools list")
        listed_count += len(listed)
        if listed_count > MAX_TOOLS:
            # Refused before a ToolInfo is built for any of them.
            raise CheckFailed(
                FailureKind.TOO_LARGE,
                f"The server lists more than {MAX_TOOLS:,} tools, the most a check reads "
                f"({listed_count:,} by page {page})",
            )
        duplicates = _collect_tools(ex, listed, tools, duplicates)
        ex.conn.check_deadline()
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
    if duplicates > MAX_NAMED_DUPLICATES:
        ex.warnings.append(
            f"tools/list lists {duplicates - MAX_NAMED_DUPLICATES} more tool names more than once"
        )
    return list(tools.values())


def _collect_tools(ex: Exchange, listed: list[Any], tools: dict[str, ToolInfo], duplicates: int) -> int:
    """Add the page's tools to ``tools``; return the count of duplicate names met so far."""
    for item in listed:
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name:
            ex.warnings.append("tools/list returned a tool without a name")
            continue
        if name in tools:
            duplicates += 1
            if duplicates <= MAX_NAMED_DUPLICATES:
                ex.warnings.append(f"tools/list lists {short(name)} twice")
            continue
        tools[name] = ToolInfo(name=name, required_inputs=_required_inputs(item))
    return duplicates


def _required_inputs(tool: JsonObject) -> tuple[str, ...]:
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    if not isinstance(required, list):
        return ()
    return tuple(str(name) for name in required if isinstance(name, str))
