"""Cap what a result stores: every string a target sent made storable and cut to its column.

The recorder (``monitors.services.recording``) stores each outcome through :func:`storable_outcome`
(a check type's details through :func:`storable_details`),
as do the API's trial runs; the caps are read from the models' columns, so a migration that
widens one widens what is kept.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import models

from monitors.models import (
    MAX_STORED_TOOLS,
    MAX_TOOL_NAME,
    ProbeResult,
)
from probes.mcp.tools import (
    MAX_TOOL_DESCRIPTION,
    MAX_TOOL_DETAILS,
    MAX_TOOL_SCHEMA,
    DetailsBudget,
    storable_tool,
)
from probes.text import is_storable, storable
from probes.types import ProbeOutcome, ServerInfo, ToolInfo


# Column sizes, read from the models so a migration that widens one widens what is kept.
def _max_length(name: str) -> int:
    field = ProbeResult._meta.get_field(name)
    assert isinstance(field, models.CharField), name
    assert field.max_length is not None, name
    return field.max_length


_SERVER_NAME = _max_length("server_name")
_SERVER_VERSION = _max_length("server_version")
_PROTOCOL = _max_length("protocol")
_SIGNIN_SERVER = _max_length("signin_server")
_DIGEST = _max_length("tool_digest")
# reason is a text column: the cap bounds what one run stores (the engine's sentences are ~200).
MAX_REASON = 2000
MAX_WARNINGS = 20
MAX_REQUIRED_INPUTS = 100


def storable_outcome(outcome: ProbeOutcome) -> ProbeOutcome:
    """Return ``outcome`` with every string a target sent made storable and capped to its column.

    NUL dropped, lone surrogates replaced (probes.text.storable), lengths cut to the columns,
    the tool list cut to MAX_STORED_TOOLS tools. Returns the same object when nothing needs it,
    which is nearly always: one join and two C scans decide that.
    """
    server = outcome.server
    tools = outcome.tools
    names = [tool.name for tool in tools]
    inputs = [name for tool in tools for name in tool.required_inputs]
    texts = [
        outcome.reason,
        outcome.protocol or "",
        outcome.signin_server or "",
        outcome.tool_digest or "",
        *outcome.missing_tools,
        *outcome.warnings,
        *names,
        *inputs,
    ]
    if server is not None:
        texts += (server.name, server.version)
    blob = "".join(texts)
    if (
        blob.isascii()
        and "\x00" not in blob
        and len(tools) <= MAX_STORED_TOOLS
        and _fits(outcome, names, inputs)
        and _details_fit(tools)
    ):
        return outcome
    return dataclasses.replace(
        outcome,
        reason=storable(outcome.reason, MAX_REASON),
        server=None
        if server is None
        else ServerInfo(storable(server.name, _SERVER_NAME), storable(server.version, _SERVER_VERSION)),
        protocol=None if outcome.protocol is None else storable(outcome.protocol, _PROTOCOL),
        signin_server=None
        if outcome.signin_server is None
        else storable(outcome.signin_server, _SIGNIN_SERVER),
        tool_digest=None if outcome.tool_digest is None else storable(outcome.tool_digest, _DIGEST),
        tools=_storable_tools(tools[:MAX_STORED_TOOLS]),
        missing_tools=tuple(
            storable(name, MAX_TOOL_NAME) for name in outcome.missing_tools[:MAX_STORED_TOOLS]
        ),
        warnings=tuple(storable(warning, MAX_REASON) for warning in outcome.warnings[:MAX_WARNINGS]),
    )


def _details_fit(tools: Sequence[ToolInfo]) -> bool:
    """Return whether the tools' descriptions and schemas are storable and within the engine's caps."""
    details = [text for tool in tools for text in (tool.description, tool.input_schema) if text]
    return (
        is_storable("".join(details))
        and sum(map(len, details)) <= MAX_TOOL_DETAILS
        and all(len(tool.description or "") <= MAX_TOOL_DESCRIPTION for tool in tools)
        and all(len(tool.input_schema or "") <= MAX_TOOL_SCHEMA for tool in tools)
    )


def _storable_tools(tools: Sequence[ToolInfo]) -> tuple[ToolInfo, ...]:
    """Return the tools made storable, within the engine's caps per tool and per list."""
    budget = DetailsBudget()
    kept = []
    for tool in map(_storable_tool, tools):
        if not budget.take(len(tool.description or "") + len(tool.input_schema or "")):
            tool = dataclasses.replace(
                tool, description=None, input_schema=None, description_kept=False, schema_kept=False
            )
        kept.append(tool)
    return tuple(kept)


def _storable_tool(tool: ToolInfo) -> ToolInfo:
    """Return ``tool`` made storable and cut to the caps: a schema over its cap is dropped, never cut."""
    tool = storable_tool(tool, storable)
    schema_kept = tool.schema_kept and len(tool.input_schema or "") <= MAX_TOOL_SCHEMA
    return dataclasses.replace(
        tool,
        name=tool.name[:MAX_TOOL_NAME],
        required_inputs=tuple(name[:MAX_TOOL_NAME] for name in tool.required_inputs[:MAX_REQUIRED_INPUTS]),
        description=None if tool.description is None else tool.description[:MAX_TOOL_DESCRIPTION],
        input_schema=tool.input_schema if schema_kept else None,
        schema_kept=schema_kept,
    )


def _fits(outcome: ProbeOutcome, names: list[str], inputs: list[str]) -> bool:
    """Return whether every string is within its cap (the ASCII, NUL-free case: nothing else to fix)."""
    server = outcome.server
    return (
        len(outcome.reason) <= MAX_REASON
        and (server is None or (len(server.name) <= _SERVER_NAME and len(server.version) <= _SERVER_VERSION))
        and len(outcome.protocol or "") <= _PROTOCOL
        and len(outcome.signin_server or "") <= _SIGNIN_SERVER
        and len(outcome.tool_digest or "") <= _DIGEST
        and len(outcome.warnings) <= MAX_WARNINGS
        and all(len(warning) <= MAX_REASON for warning in outcome.warnings)
        and len(outcome.missing_tools) <= MAX_STORED_TOOLS
        and _names_fit(outcome.missing_tools)
        and _names_fit(names)
        and _names_fit(inputs)
        and (
            len(inputs) <= MAX_REQUIRED_INPUTS
            or all(len(tool.required_inputs) <= MAX_REQUIRED_INPUTS for tool in outcome.tools)
        )
    )


def _names_fit(names: Sequence[str]) -> bool:
    # Their total within the cap settles it for a typical list without a look at each name.
    return sum(map(len, names)) <= MAX_TOOL_NAME or max(map(len, names)) <= MAX_TOOL_NAME


# A result's details are a few hundred bytes (a certificate, a DNS answer); the cap bounds a
# hostile target's share of the table.
MAX_DETAILS_BYTES = 16 * 1024


def storable_details(details: Mapping[str, Any]) -> dict[str, Any]:
    """Return a check type's details as the column keeps them: texts storable, at most MAX_DETAILS_BYTES of JSON."""
    if not details:
        return {}
    cleaned: dict[str, Any] = _storable_json(details)
    size = len(json.dumps(cleaned, ensure_ascii=False, default=str).encode())
    if size > MAX_DETAILS_BYTES:
        return {"omitted": f"The details were {size} bytes, over the {MAX_DETAILS_BYTES // 1024} KiB kept"}
    return cleaned


def _storable_json(value: Any) -> Any:
    if isinstance(value, str):
        return storable(value, MAX_REASON)
    if isinstance(value, Mapping):
        return {storable(str(key), 200): _storable_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable_json(item) for item in value]
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    return storable(str(value), MAX_REASON)
