"""Validate the config fields every check type shares, and describe them in JSON schema.

One set of rules serves the REST API, the ``mcpcheck`` command and the worker, so a config
that was accepted once is always runnable. Each check type (``probes/checks/``) builds its
parser from these field readers; errors name the field (``uri``, ``headers.X-Key``,
``requiredTools``) and say what is wrong in a sentence.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from probes import certificates
from probes.types import Headers

MAX_HEADERS = 50
MAX_HEADER_BYTES = 8 * 1024
MAX_URI = 2048
TIMEOUT_RANGE = (1, 60)
DEFAULT_TIMEOUT = 10

# RFC 9110 §5.6.2: a field name is a token.
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# Headers the engine's HTTP layer owns: hop-by-hop ones (RFC 9110 §7.6.1) and those that frame
# the message or name its target. A customer's copy would contradict the engine's own (a
# Transfer-Encoding next to its Content-Length) or a proxy's, so none can be configured.
FORBIDDEN_HEADERS = frozenset(
    {
        "connection",
        "content-length",
        "expect",
        "host",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
# A label of a host name as DNS knows it; international names are checked by IDNA (httpx).
_ASCII_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")
# WHATWG URL parsing reads a host whose last label is a number (decimal, 0x-hex or octal) as
# an IPv4 address ("0177.1" is 127.0.0.1 to a browser); only the canonical dotted quad is
# unambiguous, so every other numeric form is refused.
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


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
    if any(ch.isspace() for ch in value) or text_problem(value):
        raise ValueError("Must not contain spaces, control characters or invalid Unicode.")
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
    if port is not None and not parts.netloc.rpartition(":")[2].isascii():
        raise ValueError("Write the port in ASCII digits.")
    if parts.fragment:
        raise ValueError("Must not contain a #fragment.")
    _check_host(parts.hostname, bracketed=parts.netloc.startswith("[") or "@[" in parts.netloc)
    try:
        httpx.URL(value)
    except httpx.InvalidURL as exc:
        raise ValueError(f"Not a valid URL ({exc}).") from None
    return value


def validate_host(value: object) -> str:
    """Return ``value`` as a host name or IP literal (lower-case, no brackets) a connection can reach; raise ValueError.

    The rules are a URL's host rules (:func:`validate_uri`): a canonical IPv4 dotted quad, an
    IPv6 address (bare or in brackets, no zone), or a host name DNS can hold, IDNA included.
    Checks that name a host without a URL (TCP, TLS, DNS, ping) validate it here.
    """
    if not isinstance(value, str) or not value.strip():
        raise ValueError("Enter a host name or an IP address.")
    host = value.strip()
    if len(host) > 255:
        raise ValueError("Must be at most 253 characters.")
    if any(ch.isspace() for ch in host) or text_problem(host):
        raise ValueError("Must not contain spaces, control characters or invalid Unicode.")
    if any(ch in host for ch in "/?#@\\"):
        raise ValueError("Enter a host name or an IP address alone, without a scheme, path or user name.")
    bracketed = host.startswith("[") and host.endswith("]")
    if bracketed:
        host = host[1:-1]
    elif ":" in host:
        if host.count(":") == 1:
            raise ValueError("Enter the host without a port; the port is a field of its own.")
        bracketed = True  # a bare IPv6 address
    host = host.lower()
    _check_host(host, bracketed=bracketed)
    if not bracketed and not host.isascii():
        try:
            httpx.URL(f"http://{host}/")
        except (httpx.InvalidURL, UnicodeError) as exc:
            raise ValueError(f"Not a valid host name ({exc}).") from None
    return host


def _check_host(host: str, *, bracketed: bool) -> None:
    """Raise ValueError unless ``host`` is a canonical IP literal or a host name DNS can hold."""
    if bracketed:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError("The address in brackets is not an IPv6 address.") from None
        if "%" in host:
            raise ValueError("An IPv6 zone (%…) names an interface of one machine; use a routable address.")
        return
    labels = host.rstrip(".").split(".") if host != "." else [""]
    if _NUMERIC_LABEL.match(labels[-1]):
        try:
            canonical = str(ipaddress.IPv4Address(host))
        except ValueError:
            canonical = ""
        if canonical != host:
            raise ValueError(
                "Write an IPv4 address as four decimal numbers without leading zeros, e.g. 192.0.2.1."
            )
        return
    if len(host) > 253 or any(not label for label in labels):
        raise ValueError("Not a valid host name (an empty label, or longer than 253 characters).")
    if any(ch.isdigit() and not ch.isascii() for ch in host):
        raise ValueError("Write the host name's digits in ASCII.")
    for label in labels:
        if label.isascii() and not _ASCII_LABEL.match(label):
            raise ValueError(
                f"Not a valid host name: the label {label[:63]!r} has characters DNS names can't hold."
            )


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """Return why ``value`` can't be stored or sent (a control character, a lone surrogate), or None.

    ``multiline`` text (a request body) may hold tabs and line breaks; nothing may hold NUL.
    """
    for ch in value:
        code = ord(ch)
        if (code < 0x20 or 0x7F <= code < 0xA0) and not (multiline and ch in "\t\n\r"):
            return (
                "Must not contain NUL or other control characters."
                if multiline
                else "Must not contain control characters (NUL, line breaks, tabs)."
            )
        if 0xD800 <= code <= 0xDFFF:
            return "Must be valid Unicode (it contains a lone surrogate)."
    return None


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
        if name.lower() in FORBIDDEN_HEADERS:
            errors[f"headers.{name}"] = (
                "Uptimy sets this header itself (it frames the request or is hop-by-hop); it can't be configured."
            )
            continue
        if name.lower() in seen:
            errors[f"headers.{name}"] = "Repeats a header name (names are case-insensitive)."
            continue
        seen.add(name.lower())
        if not isinstance(value, str):
            errors[f"headers.{name}"] = "A header value must be a string."
            continue
        # Never echo the value in a message: it is a secret.
        if not all(0x20 <= ord(ch) <= 0x7E for ch in value):
            errors[f"headers.{name}"] = (
                "A header value must be printable ASCII: no control characters, line breaks or other text."
            )
            continue
        if value != value.strip():
            errors[f"headers.{name}"] = "A header value must not start or end with spaces."
            continue
        total += len(name.encode()) + len(value.encode())
        out.append((name, value))
    if total > MAX_HEADER_BYTES:
        errors["headers"] = f"Headers must total at most {MAX_HEADER_BYTES // 1024} KiB."
    return tuple(out)


def whole_number(
    raw: object, key: str, low: int, high: int, errors: dict[str, str], *, unit: str = ""
) -> int | None:
    """Return ``raw`` when it is a whole number from ``low`` to ``high`` (not a boolean), else record why and return None."""
    if isinstance(raw, bool) or not isinstance(raw, int) or not low <= raw <= high:
        errors[key] = f"Must be a whole number {f'of {unit} ' if unit else ''}from {low} to {high}."
        return None
    return raw


def host_field(data: Mapping[str, Any], errors: dict[str, str], key: str = "host") -> str:
    """Return the required host name or IP literal ``data[key]``, or record why it is not acceptable."""
    if key not in data:
        errors[key] = "This field is required."
        return ""
    try:
        return validate_host(data[key])
    except ValueError as exc:
        errors[key] = str(exc)
        return ""


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


# The HTTPS checks' certificate warning (HTTP and MCP: ``certificateWarnDays``); the TLS type has
# its own ``warnDays``, with the same default.
DEFAULT_CERTIFICATE_WARN_DAYS = certificates.DEFAULT_WARN_DAYS
MAX_CERTIFICATE_WARN_DAYS = 3650
CERTIFICATE_WARN_DAYS_SCHEMA: dict[str, Any] = {
    "type": "integer",
    "minimum": 0,
    "maximum": MAX_CERTIFICATE_WARN_DAYS,
    "default": DEFAULT_CERTIFICATE_WARN_DAYS,
    "description": (
        "HTTPS only: degraded when the server's certificate expires within this many days (0: never). "
        "An expired, not yet valid, untrusted or misnamed certificate is down whatever this says."
    ),
}


def certificate_warn_days_field(data: Mapping[str, Any], errors: dict[str, str]) -> int:
    """Return ``certificateWarnDays`` (default 14), or record why it is not a whole number 0..3650."""
    days = whole_number(
        data.get("certificateWarnDays", DEFAULT_CERTIFICATE_WARN_DAYS),
        "certificateWarnDays",
        0,
        MAX_CERTIFICATE_WARN_DAYS,
        errors,
    )
    return DEFAULT_CERTIFICATE_WARN_DAYS if days is None else days
