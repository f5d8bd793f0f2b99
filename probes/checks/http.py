"""The HTTP check (type 1): expected status, keyword present or absent, assertions, redirects.

Everything the type is lives here: its config (:class:`HttpConfig`), the parser the API, the
worker and the commands validate it with, its API shape and JSON schema, and the check itself,
registered once as :data:`HTTP`. The assertions (status, header, body, JSON path, response
time) are parsed and judged in :mod:`probes.checks.http_assertions`. It shares the MCP check's connection layer: the same address
guard on the URL and on every redirect target, the same timings, the same failure kinds and
the same 5 MiB body cap.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import re
import time
from dataclasses import dataclass, replace
from typing import Any

import httpx

from probes.checks.form import CERTIFICATE_WARN_DAYS_FIELD, FormField, Widget
from probes.checks.http_assertions import (
    ASSERTIONS_SCHEMA,
    MAX_ASSERTIONS,
    Assertion,
    Seen,
    StatusRange,
    assertions_to_api,
    evaluate,
    failure_reason,
    has_status,
    judged_details,
    parse_assertions,
    reads_body,
    status_range,
)
from probes.checks.registry import CheckKind, register
from probes.config import (
    CERTIFICATE_WARN_DAYS_SCHEMA,
    DEFAULT_CERTIFICATE_WARN_DAYS,
    DEFAULT_TIMEOUT,
    TIMEOUT_SCHEMA,
    ConfigError,
    boolean_field,
    certificate_warn_days_field,
    config_fields,
    headers_field,
    headers_schema,
    text_problem,
    timeout_field,
    uri_field,
)
from probes.connection import (
    MAX_BODY_BYTES,
    REDIRECT_STATUSES,
    CheckFailed,
    Connection,
    media_type,
    redirect_target,
    same_origin,
    shown_url,
    text_message,
    uri_host,
    uri_target,
)
from probes.types import FailureKind, Headers, ProbeOutcome, Status
from probes.wire import Response, WireError

MAX_REDIRECTS = 5
MAX_REQUEST_BODY_BYTES = 64 * 1024
MAX_KEYWORD = 1024
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
MAX_CONTENT_TYPE = 200
# type/subtype, then parameters: RFC 9110 §8.3.1 (tokens; quoted parameter values allowed).
_MEDIA_TYPE = re.compile(
    r"^[!#$%&\'*+\-.^_`|~0-9A-Za-z]+/[!#$%&\'*+\-.^_`|~0-9A-Za-z]+"
    r'(\s*;\s*[!#$%&\'*+\-.^_`|~0-9A-Za-z]+=([!#$%&\'*+\-.^_`|~0-9A-Za-z]+|"[^"\\\x00-\x1f]*"))*$'
)
CONFIG_KEYS = frozenset(
    {
        "uri",
        "method",
        "headers",
        "body",
        "contentType",
        "assertions",
        "expectedStatus",
        "keyword",
        "keywordAbsent",
        "followRedirects",
        "timeout",
        "certificateWarnDays",
    }
)
__all__ = ["HTTP", "HttpConfig", "StatusRange", "check_http", "http_config_to_api", "parse_http_config"]


@dataclass(frozen=True, slots=True)
class HttpConfig:
    """Hold one HTTP check's settings, already validated by :func:`parse_http_config`."""

    uri: str
    method: str = "GET"
    headers: Headers = ()
    body: str = ""
    content_type: str | None = None
    # All must hold (probes.checks.http_assertions); a status assertion replaces expected_status.
    assertions: tuple[Assertion, ...] = ()
    expected_status: tuple[StatusRange, ...] = (StatusRange(200, 299),)
    keyword: str | None = None
    keyword_absent: bool = False
    follow_redirects: bool = True
    timeout: float = 10.0
    # HTTPS: degraded when the leaf certificate expires within this many days (0: never); probes.runner.
    certificate_warn_days: int = DEFAULT_CERTIFICATE_WARN_DAYS

    @property
    def target(self) -> str:
        return uri_target(self.uri)

    @property
    def host(self) -> str:
        return uri_host(self.uri)


# --- config: parse, API shape, schema ------------------------------------------------------


def parse_http_config(raw: object) -> HttpConfig:
    """Return an HttpConfig from the HTTP check's API mapping; raise ConfigError naming each bad field."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    uri = uri_field(data, errors)
    method = data.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in HTTP_METHODS:
        errors["method"] = f"Must be one of {', '.join(HTTP_METHODS)}."
        method = "GET"
    method = str(method).upper()
    headers = headers_field(data.get("headers"), errors)
    body, body_is_json = _body_field(data.get("body", ""), method, errors)
    content_type = _content_type_field(data.get("contentType"), body, headers, errors)
    if body_is_json and content_type is None and "contentType" not in errors:
        content_type = "application/json"
    assertions = parse_assertions(data.get("assertions"), errors)
    if method == "HEAD" and reads_body(assertions):
        errors.setdefault(
            "assertions", "A HEAD check reads no body: body and json assertions need another method."
        )
    expected = _expected_status(data.get("expectedStatus", ["2xx"]), errors)
    if has_status(assertions) and "expectedStatus" in data:
        errors.setdefault(
            "expectedStatus", "A status assertion decides which statuses are up; leave expectedStatus out."
        )
    keyword = data.get("keyword")
    if keyword is not None and (not isinstance(keyword, str) or not keyword or len(keyword) > MAX_KEYWORD):
        errors["keyword"] = f"Must be a non-empty string of at most {MAX_KEYWORD} characters, or null."
        keyword = None
    elif keyword is not None and (problem := text_problem(keyword, multiline=True)):
        errors["keyword"] = problem
        keyword = None
    keyword_absent = boolean_field(data, "keywordAbsent", False, errors)
    if keyword_absent and keyword is None and "keyword" not in errors:
        errors["keywordAbsent"] = "Needs a keyword."
    follow = boolean_field(data, "followRedirects", True, errors)
    timeout = timeout_field(data.get("timeout", DEFAULT_TIMEOUT), errors)
    warn_days = certificate_warn_days_field(data, errors)
    if errors:
        raise ConfigError(errors)
    return HttpConfig(
        uri=uri,
        method=method,
        headers=headers,
        body=body,
        content_type=content_type,
        assertions=assertions,
        expected_status=expected,
        keyword=keyword,
        keyword_absent=keyword_absent,
        follow_redirects=follow,
        timeout=timeout,
        certificate_warn_days=warn_days,
    )


def _body_field(raw: object, method: str, errors: dict[str, str]) -> tuple[str, bool]:
    """Return the body to send as text and whether it was given as JSON (an object or a list).

    A JSON body is kept as its compact text, so the API answers it (and the form shows it) as
    the text sent, with the content type application/json unless another was given.
    """
    if raw is None:
        return "", False
    is_json = isinstance(raw, dict | list)
    if is_json:
        try:
            body = json.dumps(raw, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (ValueError, RecursionError):
            errors["body"] = "Must be text, or a JSON object or list."
            return "", False
    elif isinstance(raw, str):
        body = raw
    else:
        errors["body"] = "Must be text, or a JSON object or list."
        return "", False
    if problem := text_problem(body, multiline=True):
        errors["body"] = problem
        return "", False
    if len(body.encode()) > MAX_REQUEST_BODY_BYTES:
        errors["body"] = f"Must be at most {MAX_REQUEST_BODY_BYTES // 1024} KiB."
    elif body and method not in BODY_METHODS:
        errors["body"] = f"A {method} check sends no body; use {', '.join(sorted(BODY_METHODS))}."
    return body, is_json


def _content_type_field(raw: object, body: str, headers: Headers, errors: dict[str, str]) -> str | None:
    """Return the body's media type: as given, application/json for a JSON body, else None."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str) or len(raw) > MAX_CONTENT_TYPE or not _MEDIA_TYPE.match(raw.strip()):
        errors["contentType"] = (
            'Must be a media type, e.g. "application/json" or "text/plain; charset=utf-8".'
        )
        return None
    if not body:
        errors["contentType"] = "Needs a body."
    elif any(name.lower() == "content-type" for name, _ in headers):
        errors["contentType"] = "Set the content type here or as a header, not both."
    return raw.strip()


def _expected_status(raw: object, errors: dict[str, str]) -> tuple[StatusRange, ...]:
    message = 'Must be a non-empty list of codes (200), classes ("2xx") or ranges ("200-299").'
    if not isinstance(raw, list) or not raw or len(raw) > 50:
        errors["expectedStatus"] = message
        return (StatusRange(200, 299),)
    ranges: list[StatusRange] = []
    for item in raw:
        parsed = status_range(item)
        if parsed is None:
            errors["expectedStatus"] = f"{message} Got {item!r}."
            return (StatusRange(200, 299),)
        ranges.append(parsed)
    return tuple(ranges)


def http_config_to_api(config: HttpConfig) -> dict[str, Any]:
    """Return the API shape of ``config`` (header values included: callers mask them).

    A config without assertions keeps the shape it always had; ``contentType``,
    ``assertions`` and ``certificateWarnDays`` appear when set (the last: when not the default),
    and ``expectedStatus`` goes when a status assertion replaces it.
    """
    shape: dict[str, Any] = {
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
    if config.content_type is not None:
        shape["contentType"] = config.content_type
    if config.certificate_warn_days != DEFAULT_CERTIFICATE_WARN_DAYS:
        shape["certificateWarnDays"] = config.certificate_warn_days
    if config.assertions:
        shape["assertions"] = assertions_to_api(config.assertions)
        if has_status(config.assertions):
            del shape["expectedStatus"]
    return shape


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "HTTP check config (type 1)",
    "type": "object",
    "additionalProperties": False,
    "required": ["uri"],
    "properties": {
        "uri": {"type": "string", "format": "uri", "description": "The URL to request."},
        "method": {"type": "string", "enum": list(HTTP_METHODS), "default": "GET"},
        "headers": headers_schema({"Accept": "text/html"}),
        "body": {
            "oneOf": [{"type": "string"}, {"type": "object"}, {"type": "array"}],
            "description": (
                "Request body, as text or a JSON value (sent as compact JSON); "
                "for POST, PUT, PATCH, DELETE and OPTIONS."
            ),
        },
        "contentType": {
            "type": "string",
            "description": (
                "The body's Content-Type; a body given as JSON gets application/json, text none unless set."
            ),
            "examples": ["application/json", "text/plain; charset=utf-8"],
        },
        "assertions": ASSERTIONS_SCHEMA,
        "expectedStatus": {
            "type": "array",
            "items": {"oneOf": [{"type": "integer", "minimum": 100, "maximum": 599}, {"type": "string"}]},
            "minItems": 1,
            "default": ["2xx"],
            "description": 'Statuses that count as up: codes (200), classes ("2xx") or ranges ("200-299").',
        },
        "keyword": {
            "type": ["string", "null"],
            "description": "Text that must appear in the body (or must not, with keywordAbsent).",
        },
        "keywordAbsent": {"type": "boolean", "default": False},
        "followRedirects": {"type": "boolean", "default": True},
        "timeout": TIMEOUT_SCHEMA,
        "certificateWarnDays": CERTIFICATE_WARN_DAYS_SCHEMA,
    },
}


FORM = (
    FormField("uri", "uri", "URL", Widget.URL, placeholder="https://example.com/health", required=True),
    FormField("method", "method", "Method", Widget.CHOICE, choices=HTTP_METHODS),
    FormField(
        "expectedStatus",
        "expected_status",
        "Expected status",
        Widget.CODES,
        help="Codes or ranges, comma-separated: 2xx, 301, 200-399.",
        placeholder="2xx",
    ),
    FormField(
        "keyword", "keyword", "Keyword", Widget.TEXT, help="The body must contain it; empty: not checked."
    ),
    FormField(
        "body",
        "body",
        "Request body",
        Widget.TEXTAREA,
        help="Sent with POST, PUT, PATCH, DELETE or OPTIONS; empty: no body.",
    ),
    FormField(
        "contentType",
        "content_type",
        "Content type",
        Widget.TEXT,
        help="The body's media type; empty: none.",
        placeholder="application/json",
    ),
    FormField(
        "assertions",
        "assertions",
        "Assertions",
        Widget.JSON,
        help=(
            f"Up to {MAX_ASSERTIONS} conditions as a JSON list; all must hold. Kinds: status, header, "
            "body, json (a JSONPath), response_time. See the HTTP check's documentation."
        ),
        placeholder='[{"type": "json", "path": "$.status", "op": "equals", "value": "ok"}]',
    ),
    FormField("headers", "headers", "Request headers", Widget.HEADERS),
    FormField("timeout", "timeout", "Timeout (seconds)", Widget.NUMBER),
    CERTIFICATE_WARN_DAYS_FIELD,
)


# --- the check -------------------------------------------------------------------------------


async def check_http(config: HttpConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one HTTP check; ``deadline`` is the loop time the whole check ends by."""
    started = time.perf_counter()
    phase = ["request"]
    try:
        async with asyncio.timeout_at(deadline):
            outcome = await _run(config, conn, phase, started)
    except CheckFailed as failed:
        outcome = ProbeOutcome(
            status=Status.DOWN, kind=failed.kind, reason=failed.reason, http_status=failed.http_status
        )
    except TimeoutError:
        reason = conn.timeout_words(config.timeout)
        outcome = ProbeOutcome(
            status=Status.DOWN,
            kind=FailureKind.TIMEOUT,
            reason=reason or f"No complete answer within {config.timeout:g} s (during the {phase[0]})",
        )
    total_ms = (time.perf_counter() - started) * 1000
    return replace(outcome, timings=conn.timings(total_ms))


async def _run(config: HttpConfig, conn: Connection, phase: list[str], started: float) -> ProbeOutcome:
    response, notes = await _fetch(config, conn)
    outcome = await _judge(config, conn, phase, response, started)
    return replace(outcome, warnings=notes + outcome.warnings) if notes else outcome


async def _judge(
    config: HttpConfig, conn: Connection, phase: list[str], response: Response, started: float
) -> ProbeOutcome:
    """Return the outcome the final response earns: its status, then the keyword rule, then the assertions.

    ``started`` is the perf_counter time the check began: a response_time assertion judges the
    time from then to the end of the final response's body (redirects included).
    """
    status = response.status_code
    if not has_status(config.assertions) and not any(
        status in expected for expected in config.expected_status
    ):
        phase[0] = "body"
        body = await _read_some(conn, response)
        return _down(
            FailureKind.HTTP_STATUS,
            _status_words(config, status, text_message(body, media_type(response))),
            status,
        )
    phase[0] = "body"
    text: str | None = None
    warnings: tuple[str, ...] = ()
    if config.method == "HEAD" or (config.keyword is None and not reads_body(config.assertions)):
        warnings = await _drain(conn, response)
    else:
        text = (await conn.read_body(response)).decode(_charset(response), errors="replace")
    if config.keyword is not None and text is not None:
        found = config.keyword in text
        if found and config.keyword_absent:
            return _down(
                FailureKind.KEYWORD,
                f"Keyword {config.keyword!r} is in the response; expected it absent",
                status,
            )
        if not found and not config.keyword_absent:
            return _down(FailureKind.KEYWORD, f"Keyword {config.keyword!r} is not in the response", status)
    if not config.assertions:
        return ProbeOutcome(status=Status.UP, http_status=status, warnings=warnings)
    elapsed_ms = (time.perf_counter() - started) * 1000
    judged = evaluate(config.assertions, Seen(status, response.headers.items, text, elapsed_ms))
    details = judged_details(judged)
    if reason := failure_reason(judged):
        return ProbeOutcome(
            status=Status.DOWN,
            kind=FailureKind.ASSERTION,
            reason=reason,
            http_status=status,
            warnings=warnings,
            details=details,
        )
    return ProbeOutcome(status=Status.UP, http_status=status, warnings=warnings, details=details)


def _charset(response: Response) -> str:
    """Return the charset the Content-Type names when Python knows it, else UTF-8."""
    for param in (response.headers.get("content-type") or "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"')
            try:
                return codecs.lookup(charset).name
            except LookupError:
                break
    return "utf-8"


def _down(kind: FailureKind, reason: str, status: int) -> ProbeOutcome:
    return ProbeOutcome(status=Status.DOWN, kind=kind, reason=reason, http_status=status)


def _status_words(config: HttpConfig, status: int, message: str) -> str:
    expected = ", ".join(str(item) for item in config.expected_status)
    return f"HTTP {status} (expected {expected})" + (f": {message}" if message else "")


async def _fetch(config: HttpConfig, conn: Connection) -> tuple[Response, tuple[str, ...]]:
    """Return the final response and notes on the way, following redirects through the guard when asked.

    The check's headers go only to the origin (scheme, host, port) they were configured for: a
    redirect elsewhere is followed without them, and the outcome says so.
    """
    origin = url = httpx.URL(config.uri)
    method = config.method
    body: bytes | None = config.body.encode() if config.body else None
    notes: tuple[str, ...] = ()
    for _hop in range(MAX_REDIRECTS + 1):
        headers = list(config.headers) if same_origin(url, origin) else []
        if body is not None and config.content_type:
            headers.append(("Content-Type", config.content_type))
        response = await conn.send(method, url, headers=headers, content=body)
        if not config.follow_redirects or response.status_code not in REDIRECT_STATUSES:
            return response, notes
        await conn.discard(response)
        target = redirect_target(url, response)
        if config.headers and not notes and not same_origin(target, origin):
            notes = (
                f"Redirected to another origin ({shown_url(target.copy_with(path='/', query=None))}); "
                "followed without this check's headers, which only go to the configured origin",
            )
        # Browsers turn 301/302 POSTs and every 303 into GETs; 307 and 308 keep the request.
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, body = ("HEAD" if method == "HEAD" else "GET"), None
        url = target
    raise CheckFailed(
        FailureKind.REDIRECT_REFUSED,
        f"Redirect refused: more than {MAX_REDIRECTS} redirects (next: {shown_url(url)})",
    )


async def _read_some(conn: Connection, response: Response) -> bytes:
    """Return up to 4 KiB of an error body for its message; a larger body is not worth waiting for."""
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := await response.read_chunk():
            chunks.append(chunk)
            size += len(chunk)
            if size >= 4096:
                break
    except WireError:
        pass
    finally:
        await response.aclose()
    return b"".join(chunks)


async def _drain(conn: Connection, response: Response) -> tuple[str, ...]:
    """Read the body to its end (so the total time includes it) up to the cap; past it, stop and warn."""
    size = 0
    try:
        while chunk := await response.read_chunk():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return ("The body is larger than 5 MiB; reading stopped at the cap",)
    except WireError as exc:
        raise CheckFailed(
            FailureKind.CONNECT, f"The connection broke while reading the body: {exc.detail}"
        ) from None
    finally:
        await response.aclose()
    return ()


HTTP = register(
    CheckKind(
        number=1,
        name="http",
        title="HTTP check",
        config_type=HttpConfig,
        parse=parse_http_config,
        to_api=http_config_to_api,
        schema=CONFIG_SCHEMA,
        run=check_http,
        form=FORM,
    )
)
