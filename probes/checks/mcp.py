"""The MCP check (type 13): how its config is validated, shown and documented, and the run it starts.

The protocol itself (initialize, tools/list across pages, sign-in discovery, legacy SSE, the
end of the session) is the engine in ``probes.mcp``; this module is what makes it a check
type, registered once as :data:`MCP`.
"""

from __future__ import annotations

from typing import Any

from probes.checks.form import CERTIFICATE_WARN_DAYS_FIELD, FormField, Widget
from probes.checks.registry import CheckKind, register
from probes.config import (
    CERTIFICATE_WARN_DAYS_SCHEMA,
    DEFAULT_CERTIFICATE_WARN_DAYS,
    DEFAULT_TIMEOUT,
    TIMEOUT_SCHEMA,
    ConfigError,
    certificate_warn_days_field,
    config_fields,
    headers_field,
    headers_schema,
    text_problem,
    timeout_field,
    uri_field,
)
from probes.mcp import check_mcp

# Re-exported: the config type lives with the session code that reads it; callers may name it here.
from probes.mcp.config import McpConfig as McpConfig

MAX_REQUIRED_TOOLS = 200
MAX_TOOL_NAME = 128
MAX_MIN_TOOLS = 10_000
CONFIG_KEYS = frozenset({"uri", "headers", "requiredTools", "minTools", "timeout", "certificateWarnDays"})


def parse_mcp_config(raw: object) -> McpConfig:
    """Return an McpConfig from ``{"uri", "headers", "requiredTools", "minTools", "timeout", "certificateWarnDays"}``."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    uri = uri_field(data, errors)
    headers = headers_field(data.get("headers"), errors)
    required = _required_tools(data.get("requiredTools", []), errors)
    min_tools = _min_tools(data.get("minTools", 0), errors)
    timeout = timeout_field(data.get("timeout", DEFAULT_TIMEOUT), errors)
    warn_days = certificate_warn_days_field(data, errors)
    if errors:
        raise ConfigError(errors)
    return McpConfig(
        uri=uri,
        headers=headers,
        required_tools=required,
        min_tools=min_tools,
        timeout=timeout,
        certificate_warn_days=warn_days,
    )


def _required_tools(raw: object, errors: dict[str, str]) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors["requiredTools"] = "Must be a list of tool names."
        return ()
    if len(raw) > MAX_REQUIRED_TOOLS:
        errors["requiredTools"] = f"At most {MAX_REQUIRED_TOOLS} tool names."
        return ()
    if not all(isinstance(name, str) and name.strip() for name in raw):
        errors["requiredTools"] = "Each tool name must be a non-empty string."
        return ()
    if any(text_problem(name) for name in raw):
        errors["requiredTools"] = "Tool names must not contain control characters or invalid Unicode."
        return ()
    if any(len(name) > MAX_TOOL_NAME for name in raw):
        errors["requiredTools"] = f"Each tool name must be at most {MAX_TOOL_NAME} characters."
        return ()
    if len(set(raw)) != len(raw):
        duplicates = sorted({name for name in raw if raw.count(name) > 1})
        errors["requiredTools"] = f"Tool names must be unique; repeated: {', '.join(duplicates)}."
        return ()
    return tuple(raw)


def _min_tools(raw: object, errors: dict[str, str]) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        errors["minTools"] = "Must be a whole number of at least 0."
        return 0
    if raw > MAX_MIN_TOOLS:
        errors["minTools"] = f"Must be at most {MAX_MIN_TOOLS}."
        return 0
    return raw


def mcp_config_to_api(config: McpConfig) -> dict[str, Any]:
    """Return the API shape of ``config`` (header values included: callers mask them).

    ``certificateWarnDays`` appears when it is not the default, so existing checks keep their shape.
    """
    shape: dict[str, Any] = {
        "uri": config.uri,
        "headers": dict(config.headers),
        "requiredTools": list(config.required_tools),
        "minTools": config.min_tools,
        "timeout": config.timeout,
    }
    if config.certificate_warn_days != DEFAULT_CERTIFICATE_WARN_DAYS:
        shape["certificateWarnDays"] = config.certificate_warn_days
    return shape


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "MCP check config (type 13)",
    "type": "object",
    "additionalProperties": False,
    "required": ["uri"],
    "properties": {
        "uri": {
            "type": "string",
            "format": "uri",
            "description": "The MCP endpoint, Streamable HTTP or legacy SSE; it often ends in /mcp.",
            "example": "https://mcp.example.com/mcp",
        },
        "headers": headers_schema({"Authorization": "Bearer your-key"}),
        "requiredTools": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_TOOL_NAME},
            "uniqueItems": True,
            "maxItems": MAX_REQUIRED_TOOLS,
            "description": "Tool names that must be listed; the check is down naming the missing ones.",
            "example": ["search_docs", "read_page"],
        },
        "minTools": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_MIN_TOOLS,
            "default": 0,
            "description": "The check is down when fewer tools are listed.",
            "example": 2,
        },
        "timeout": TIMEOUT_SCHEMA,
        "certificateWarnDays": CERTIFICATE_WARN_DAYS_SCHEMA,
    },
}

FORM = (
    FormField(
        "uri",
        "uri",
        "Server URL",
        Widget.URL,
        placeholder="https://mcp.example.com/mcp",
        required=True,
        help="The MCP endpoint, Streamable HTTP or legacy SSE; it often ends in /mcp.",
    ),
    FormField("headers", "headers", "Request headers", Widget.HEADERS),
    FormField(
        "requiredTools",
        "required_tools",
        "Required tools",
        Widget.LINES,
        help="One tool name per line; the check is down naming the missing ones.",
    ),
    FormField("minTools", "min_tools", "At least this many tools", Widget.INTEGER),
    FormField("timeout", "timeout", "Timeout (seconds)", Widget.NUMBER),
    CERTIFICATE_WARN_DAYS_FIELD,
)

MCP = register(
    CheckKind(
        number=13,
        name="mcp",
        title="MCP check",
        config_type=McpConfig,
        parse=parse_mcp_config,
        to_api=mcp_config_to_api,
        schema=CONFIG_SCHEMA,
        run=check_mcp,
        form=FORM,
    )
)
