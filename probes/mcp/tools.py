"""List the server's tools page by page, without ever calling one.

The tool list is what the verdict is built on, and pagination is where servers go wrong (loops,
empty cursors, endless pages), so the listing is capped and each oddity becomes a warning rather
than a failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from probes.connection import MAX_BODY_BYTES, CheckFailed
from probes.jsonrpc import JsonObject
from probes.mcp.calls import call
from probes.mcp.exchange import Exchange
from probes.mcp.transport import short
from probes.redact import redact
from probes.text import json_text, storable, storable_json
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
# What is kept of each tool's details (ToolInfo), in characters. A description is trimmed and
# clipped (the scorecard asks for 20; real ones run to a few hundred, agent instructions to a
# few thousand). One inputSchema's compact JSON above the schema cap is dropped whole: a cut
# schema would be judged as another one. The details cap bounds one outcome's descriptions and
# schemas together, as MAX_TOOLS bounds its names: an outcome waits in memory with its batch's
# others until recorded, and each distinct list is stored. A tool whose details pass what is
# left keeps its name, required inputs and hints only.
MAX_TOOL_DESCRIPTION = 2_000
MAX_TOOL_SCHEMA = 64 * 1024
MAX_TOOL_DETAILS = 1024 * 1024


async def list_tools(ex: Exchange) -> list[ToolInfo]:
    """Return the tools over at most MAX_PAGES pages; a repeated or empty cursor ends the list."""
    tools: dict[str, ToolInfo] = {}
    budget = DetailsBudget()
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
        duplicates = _collect_tools(ex, listed, tools, duplicates, budget)
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


def _collect_tools(
    ex: Exchange, listed: list[Any], tools: dict[str, ToolInfo], duplicates: int, budget: DetailsBudget
) -> int:
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
        tools[name] = tool_info(name, item, budget)
    return duplicates


class DetailsBudget:
    """Count down the characters of descriptions and schemas one outcome may still keep."""

    __slots__ = ("left",)

    def __init__(self, left: int = MAX_TOOL_DETAILS) -> None:
        self.left = left

    def take(self, size: int) -> bool:
        """Return whether ``size`` more characters fit, taking them if so."""
        if size > self.left:
            return False
        self.left -= size
        return True


def tool_info(name: str, item: JsonObject, budget: DetailsBudget) -> ToolInfo:
    """Return what is kept of one listed tool (``name`` already checked), its details within ``budget``.

    Every text is redacted (a server may echo a check's key anywhere) and made storable here,
    as it is read, so a schema is walked once.
    """
    description = _description(item.get("description"))
    schema, schema_kept = _schema(item)
    annotations = item.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
    description_kept = budget.take(len(description or "") + len(schema or ""))
    if not description_kept:
        description = schema = None
        schema_kept = False
    return ToolInfo(
        name=name,
        required_inputs=_required_inputs(item),
        description=description,
        input_schema=schema,
        read_only_hint=_hint(annotations.get("readOnlyHint")),
        destructive_hint=_hint(annotations.get("destructiveHint")),
        description_kept=description_kept,
        schema_kept=schema_kept,
    )


def _description(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    # Trimmed before the cut, so leading padding cannot push the words out of what is kept.
    return storable(redact(value.strip()[: MAX_TOOL_DESCRIPTION * 2]), MAX_TOOL_DESCRIPTION).strip()


def _schema(tool: JsonObject) -> tuple[str | None, bool]:
    """Return the inputSchema's compact JSON text (None when absent) and whether it was kept."""
    if "inputSchema" not in tool:
        return None, True
    text = json_text(storable_json(tool["inputSchema"], _clean))
    if len(text) > MAX_TOOL_SCHEMA:
        return None, False
    return text, True


def _clean(text: str) -> str:
    return storable(redact(text))


def _hint(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _required_inputs(tool: JsonObject) -> tuple[str, ...]:
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    if not isinstance(required, list):
        return ()
    return tuple(str(name) for name in required if isinstance(name, str))


def storable_tool(tool: ToolInfo, clean: Callable[[str], str]) -> ToolInfo:
    """Return ``tool`` with ``clean`` applied to its every text, its schema's strings one by one.

    The schema is JSON text: cleaning its strings inside the JSON keeps it JSON, where a secret
    replaced in the raw text could split an escape.
    """
    schema = tool.input_schema
    if schema is not None:
        try:
            schema = json_text(storable_json(json.loads(schema), clean))
        except ValueError:
            schema = json_text(clean(schema))
    return replace(
        tool,
        name=clean(tool.name),
        required_inputs=tuple(clean(name) for name in tool.required_inputs),
        description=None if tool.description is None else clean(tool.description),
        input_schema=schema,
    )
