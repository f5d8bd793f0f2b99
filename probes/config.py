"""Validate the config fields every check type shares, and describe them in JSON schema.

One set of rules serves the REST API, the ``mcpcheck`` command and the worker, so a config
that was accepted once is always runnable. Each check type (``probes/checks/``) builds its
parser from these field readers; errors name the field (``uri``, ``headers.X-Key``,
``requiredTools``) and say what is wrong in a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from probes.types import Headers

MAX_HEADERS = 50
MAX_HEADER_BYTES = 8 * 1024
MAX_URI = 2048
TIMEOUT_RANGE = (1, 60)
DEFAULT_TIMEOUT = 10

# RFC 9110 §5.6.2: a field name is a token.
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


class ConfigError(ValueError):
    """Carry every problem found in one config, keyed by the field's path."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(f"{key}: {message}" for key, message in self.errors.items()))


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


def config_fields(raw: object, allowed: frozenset[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Return the config as a dict and the errors so far (unknown keys); raise ConfigError for a non-object."""
    errors: dict[str, str] = {}
    if not isinstance(raw, Mapping):
        raise ConfigError({"config": "Must be a JSON object."})
    data = dict(raw)
    for key in sorted(set(data) - allowed):
        errors[key] = f"Unknown field; allowed: {', '.join(sorted(allowed))}."
    return data, errors


def uri_field(data: Mapping[str, Any], errors: dict[str, str]) -> str:
    """Return the required ``uri``, or record why it is not acceptable."""
    if "uri" not in data:
        errors["uri"] = "This field is required."
        return ""
    try:
        return validate_uri(data["uri"])
    except ValueError as exc:
        errors["uri"] = str(exc)
        return ""


def headers_field(raw: object, errors: dict[str, str]) -> Headers:
    """Return the ``headers`` object as name/value pairs, recording each bad one without echoing its value."""
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


def timeout_field(raw: object, errors: dict[str, str]) -> float:
    """Return the ``timeout`` in seconds, or record why it is out of range."""
    low, high = TIMEOUT_RANGE
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not low <= raw <= high:
        errors["timeout"] = f"Must be a number of seconds from {low} to {high}."
        return float(DEFAULT_TIMEOUT)
    return float(raw)


def boolean_field(data: Mapping[str, Any], key: str, default: bool, errors: dict[str, str]) -> bool:
    """Return ``data[key]`` when it is a boolean (``default`` when absent), or record that it is not."""
    value = data.get(key, default)
    if not isinstance(value, bool):
        errors[key] = "Must be true or false."
        return default
    return value


HEADERS_HELP = (
    f"Request headers sent on every request, as names to values (at most {MAX_HEADERS}, 8 KiB in all). "
    'Values are secrets: stored encrypted and answered masked as "********"; send a masked value '
    "back to keep the stored one, leave `headers` out of an update to keep them all."
)


def headers_schema(example: dict[str, str]) -> dict[str, Any]:
    """Return the JSON schema of a ``headers`` field, with ``example`` shown in the docs."""
    return {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "maxProperties": MAX_HEADERS,
        "description": HEADERS_HELP,
        "example": example,
    }


TIMEOUT_SCHEMA: dict[str, Any] = {
    "type": "number",
    "minimum": TIMEOUT_RANGE[0],
    "maximum": TIMEOUT_RANGE[1],
    "default": DEFAULT_TIMEOUT,
    "description": "Seconds for the whole check, sign-in discovery and redirects included.",
}
