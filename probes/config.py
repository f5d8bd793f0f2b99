"""Validate check configs as the API documents them and turn them into engine values.

One set of rules serves the REST API, the ``mcpcheck`` command and the worker, so a config
that was accepted once is always runnable. Errors name the field (``uri``,
``headers.X-Key``, ``requiredTools``) and say what is wrong in a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from probes.types import CheckType, Headers, HttpConfig, McpConfig, StatusRange

MAX_HEADERS = 50
MAX_HEADER_BYTES = 8 * 1024
MAX_REQUIRED_TOOLS = 200
MAX_TOOL_NAME = 128
MAX_URI = 2048
MAX_BODY_BYTES = 64 * 1024
MAX_KEYWORD = 1024
TIMEOUT_RANGE = (1, 60)
DEFAULT_TIMEOUT = 10
HTTP_METHODS = ("GET", "HEAD", "POST")

# RFC 9110 §5.6.2: a field name is a token.
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_STATUS_CLASS = re.compile(r"^([1-5])xx$", re.IGNORECASE)
_STATUS_RANGE = re.compile(r"^(\d{3})-(\d{3})$")

MCP_KEYS = frozenset({"uri", "headers", "requiredTools", "minTools", "timeout"})
HTTP_KEYS = frozenset(
    {
        "uri",
        "method",
        "headers",
        "body",
        "expectedStatus",
        "keyword",
        "keywordAbsent",
        "followRedirects",
        "timeout",
    }
)


class ConfigError(ValueError):
    """Carry every problem found in one config, keyed by the field's path."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(f"{key}: {message}" for key, message in self.errors.items()))


def parse_config(check_type: CheckType, raw: object) -> McpConfig | HttpConfig:
    """Return the engine config for ``check_type`` from an API-shaped mapping."""
    if check_type is CheckType.MCP:
        return parse_mcp_config(raw)
    return parse_http_config(raw)


def parse_mcp_config(raw: object) -> McpConfig:
    """Return an McpConfig from ``{"uri", "headers", "requiredTools", "minTools", "timeout"}``."""
    data, errors = _start(raw, MCP_KEYS)
    uri = _uri(data, errors)
    headers = _headers(data.get("headers"), errors)
    required = _required_tools(data.get("requiredTools", []), errors)
    min_tools = _min_tools(data.get("minTools", 0), errors)
    timeout = _timeout(data.get("timeout", DEFAULT_TIMEOUT), errors)
    if errors:
        raise ConfigError(errors)
    return McpConfig(uri=uri, headers=headers, required_tools=required, min_tools=min_tools, timeout=timeout)


def parse_http_config(raw: object) -> HttpConfig:
    """Return an HttpConfig from the HTTP check's API mapping."""
    data, errors = _start(raw, HTTP_KEYS)
    uri = _uri(data, errors)
    method = data.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in HTTP_METHODS:
        errors["method"] = f"Must be one of {', '.join(HTTP_METHODS)}."
        method = "GET"
    headers = _headers(data.get("headers"), errors)
    body = data.get("body", "")
    if body is None:
        body = ""
    if not isinstance(body, str):
        errors["body"] = "Must be a string."
        body = ""
    elif len(body.encode()) > MAX_BODY_BYTES:
        errors["body"] = f"Must be at most {MAX_BODY_BYTES // 1024} KiB."
    elif body and str(method).upper() != "POST":
        errors["body"] = "Only a POST check sends a body."
    expected = _expected_status(data.get("expectedStatus", ["2xx"]), errors)
    keyword = data.get("keyword")
    if keyword is not None and (not isinstance(keyword, str) or not keyword or len(keyword) > MAX_KEYWORD):
        errors["keyword"] = f"Must be a non-empty string of at most {MAX_KEYWORD} characters, or null."
        keyword = None
    keyword_absent = _boolean(data, "keywordAbsent", False, errors)
    if keyword_absent and keyword is None and "keyword" not in errors:
        errors["keywordAbsent"] = "Needs a keyword."
    follow = _boolean(data, "followRedirects", True, errors)
    timeout = _timeout(data.get("timeout", DEFAULT_TIMEOUT), errors)
    if errors:
        raise ConfigError(errors)
    return HttpConfig(
        uri=uri,
        method=str(method).upper(),
        headers=headers,
        body=body,
        expected_status=expected,
        keyword=keyword,
        keyword_absent=keyword_absent,
        follow_redirects=follow,
        timeout=timeout,
    )


def validate_uri(value: object) -> str:
    """Return ``value`` when it is an absolute http(s) URL without credentials; raise ValueError."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("Enter an absolute http:// or https:// URL.")
    value = value.strip()
    if len(value) > MAX_URI:
        raise ValueError(f"Must be at most {MAX_URI} characters.")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError("Must not contain spaces or control characters.")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"Not a valid URL ({exc}).") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError("Enter an absolute http:// or https:// URL.")
    if parts.username is not None or parts.password is not None:
        raise ValueError("Must not contain a user name or password; send credentials in headers.")
    if port == 0:
        raise ValueError("Port 0 is not a valid port.")
    if parts.fragment:
        raise ValueError("Must not contain a #fragment.")
    return value


def _start(raw: object, allowed: frozenset[str]) -> tuple[dict[str, Any], dict[str, str]]:
    errors: dict[str, str] = {}
    if not isinstance(raw, Mapping):
        raise ConfigError({"config": "Must be a JSON object."})
    data = dict(raw)
    for key in sorted(set(data) - allowed):
        errors[key] = f"Unknown field; allowed: {', '.join(sorted(allowed))}."
    return data, errors


def _uri(data: Mapping[str, Any], errors: dict[str, str]) -> str:
    if "uri" not in data:
        errors["uri"] = "This field is required."
        return ""
    try:
        return validate_uri(data["uri"])
    except ValueError as exc:
        errors["uri"] = str(exc)
        return ""


def _headers(raw: object, errors: dict[str, str]) -> Headers:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        errors["headers"] = 'Must be an object of header names to values, e.g. {"Authorization": "Bearer …"}.'
        return ()
    if len(raw) > MAX_HEADERS:
        errors["headers"] = f"At most {MAX_HEADERS} headers."
        return ()
    total = 0
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for name, value in raw.items():
        if not isinstance(name, str) or not _TOKEN.match(name):
            errors[f"headers.{name}"] = (
                "A header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)."
            )
            continue
        if name.lower() in seen:
            errors[f"headers.{name}"] = "Repeats a header name (names are case-insensitive)."
            continue
        seen.add(name.lower())
        if not isinstance(value, str):
            errors[f"headers.{name}"] = "A header value must be a string."
            continue
        if any(ch in value for ch in "\r\n\0"):
            # Never echo the value: it is a secret.
            errors[f"headers.{name}"] = "A header value must not contain CR, LF or NUL."
            continue
        total += len(name.encode()) + len(value.encode())
        out.append((name, value))
    if total > MAX_HEADER_BYTES:
        errors["headers"] = f"Headers must total at most {MAX_HEADER_BYTES // 1024} KiB."
    return tuple(out)


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
    if raw > 10_000:
        errors["minTools"] = "Must be at most 10000."
        return 0
    return raw


def _timeout(raw: object, errors: dict[str, str]) -> float:
    low, high = TIMEOUT_RANGE
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not low <= raw <= high:
        errors["timeout"] = f"Must be a number of seconds from {low} to {high}."
        return float(DEFAULT_TIMEOUT)
    return float(raw)


def _boolean(data: Mapping[str, Any], key: str, default: bool, errors: dict[str, str]) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        errors[key] = "Must be true or false."
        return default
    return value


def _expected_status(raw: object, errors: dict[str, str]) -> tuple[StatusRange, ...]:
    message = 'Must be a non-empty list of codes (200), classes ("2xx") or ranges ("200-299").'
    if not isinstance(raw, list) or not raw or len(raw) > 50:
        errors["expectedStatus"] = message
        return (StatusRange(200, 299),)
    ranges: list[StatusRange] = []
    for item in raw:
        parsed = _status_range(item)
        if parsed is None:
            errors["expectedStatus"] = f"{message} Got {item!r}."
            return (StatusRange(200, 299),)
        ranges.append(parsed)
    return tuple(ranges)


def _status_range(item: object) -> StatusRange | None:
    if isinstance(item, int) and not isinstance(item, bool):
        return StatusRange(item, item) if 100 <= item <= 599 else None
    if not isinstance(item, str):
        return None
    text = item.strip()
    if text.isdigit():
        return _status_range(int(text))
    if match := _STATUS_CLASS.match(text):
        low = int(match.group(1)) * 100
        return StatusRange(low, low + 99)
    if match := _STATUS_RANGE.match(text):
        low, high = int(match.group(1)), int(match.group(2))
        return StatusRange(low, high) if 100 <= low <= high <= 599 else None
    return None


def mcp_config_to_api(config: McpConfig) -> dict[str, Any]:
    """Return the API shape of ``config`` (header values included: callers mask them)."""
    return {
        "uri": config.uri,
        "headers": dict(config.headers),
        "requiredTools": list(config.required_tools),
        "minTools": config.min_tools,
        "timeout": config.timeout,
    }


def http_config_to_api(config: HttpConfig) -> dict[str, Any]:
    """Return the API shape of ``config`` (header values included: callers mask them)."""
    return {
        "uri": config.uri,
        "method": config.method,
        "headers": dict(config.headers),
        "body": config.body,
        "expectedStatus": [str(item) for item in config.expected_status],
        "keyword": config.keyword,
        "keywordAbsent": config.keyword_absent,
        "followRedirects": config.follow_redirects,
        "timeout": config.timeout,
    }


def config_to_api(config: McpConfig | HttpConfig) -> dict[str, Any]:
    if isinstance(config, McpConfig):
        return mcp_config_to_api(config)
    return http_config_to_api(config)
