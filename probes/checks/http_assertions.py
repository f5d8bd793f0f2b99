"""HTTP assertions (type 1): parse a check's ``assertions`` and judge one response by them.

Pure: no I/O. :func:`parse_assertions` turns the API's list (at most :data:`MAX_ASSERTIONS`
objects) into frozen values, recording each problem under the key the API names
(``assertions[3].path``); :func:`evaluate` judges what the check saw (:class:`Seen`) and
returns one :class:`Judged` per assertion, in order, for the outcome's reason and details.

Kinds: ``status`` (in a set of codes, classes and ranges), ``header`` (equals, contains,
matches, absent), ``body`` (contains, not_contains, matches), ``json`` (a JSONPath through
python-jsonpath, RFC 9535: equals, contains, exists, lt, le, gt, ge) and ``response_time``
(``lt_ms``).

Regular expressions are compiled once, here, with RE2 (:mod:`probes.regex`): matching takes
time linear in the text whatever the pattern, so a hostile or unlucky body can't stall the
worker. A pattern is at most :data:`MAX_PATTERN` characters, and a body is matched on its first
:data:`MATCHED_TEXT_CHARS` characters only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonpath

from probes.jsonrpc import JsonTooDeep, read_json
from probes.regex import Regex, RegexRefused, compile_regex

MAX_ASSERTIONS = 10
MAX_PATTERN = 256
MAX_VALUE = 1024
MAX_STATUS_ITEMS = 50
MAX_LT_MS = 600_000
# Regular expressions see the first MiB of a body (characters): see the module docstring.
MATCHED_TEXT_CHARS = 1024 * 1024
# How much of a value seen a reason quotes, and how much the details keep.
REASON_CHARS = 60
DETAILS_CHARS = 200

HEADER_OPS = ("equals", "contains", "matches", "absent")
BODY_OPS = ("contains", "not_contains", "matches")
JSON_OPS = ("equals", "contains", "exists", "lt", "le", "gt", "ge")
_COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
TYPES = ("status", "header", "body", "json", "response_time")
_KEYS = {
    "status": frozenset({"type", "in"}),
    "header": frozenset({"type", "name", "op", "value"}),
    "body": frozenset({"type", "op", "value"}),
    "json": frozenset({"type", "path", "op", "value"}),
    "response_time": frozenset({"type", "lt_ms"}),
}
_STATUS_CLASS = re.compile(r"^([1-5])xx$", re.IGNORECASE)
_STATUS_RANGE = re.compile(r"^(\d{3})-(\d{3})$")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


@dataclass(frozen=True, slots=True)
class StatusRange:
    """Match HTTP status codes from ``low`` to ``high`` inclusive ("2xx" is 200–299)."""

    low: int
    high: int

    def __contains__(self, code: object) -> bool:
        return isinstance(code, int) and self.low <= code <= self.high

    def __str__(self) -> str:
        if self.low == self.high:
            return str(self.low)
        if self.low % 100 == 0 and self.high == self.low + 99:
            return f"{self.low // 100}xx"
        return f"{self.low}-{self.high}"

    def to_api(self) -> int | str:
        return self.low if self.low == self.high else str(self)


def status_range(item: object) -> StatusRange | None:
    """Return the range a code (200, "200"), class ("2xx") or range ("200-299") names, or None."""
    if isinstance(item, int) and not isinstance(item, bool):
        return StatusRange(item, item) if 100 <= item <= 599 else None
    if not isinstance(item, str):
        return None
    text = item.strip()
    if text.isascii() and text.isdigit():
        return status_range(int(text))
    if match := _STATUS_CLASS.match(text):
        low = int(match.group(1)) * 100
        return StatusRange(low, low + 99)
    if match := _STATUS_RANGE.match(text):
        low, high = int(match.group(1)), int(match.group(2))
        return StatusRange(low, high) if 100 <= low <= high <= 599 else None
    return None


# --- the assertions --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusAssertion:
    ranges: tuple[StatusRange, ...]

    @property
    def label(self) -> str:
        return f"status in {_ranges_words(self.ranges)}"

    def to_api(self) -> dict[str, Any]:
        return {"type": "status", "in": [item.to_api() for item in self.ranges]}


@dataclass(frozen=True, slots=True)
class HeaderAssertion:
    name: str
    op: str
    value: str = ""
    pattern: Regex | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        if self.op == "absent":
            return f"header {self.name} absent"
        return f"header {self.name} {self.op} {_quoted(self.value)}"

    def to_api(self) -> dict[str, Any]:
        shape: dict[str, Any] = {"type": "header", "name": self.name, "op": self.op}
        if self.op != "absent":
            shape["value"] = self.value
        return shape


@dataclass(frozen=True, slots=True)
class BodyAssertion:
    op: str
    value: str
    pattern: Regex | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return f"body {self.op.replace('_', ' ')} {_quoted(self.value)}"

    def to_api(self) -> dict[str, Any]:
        return {"type": "body", "op": self.op, "value": self.value}


@dataclass(frozen=True, slots=True)
class JsonAssertion:
    path: str
    op: str
    # The expected JSON value; for ``exists``, whether the path must select something.
    value: Any
    query: jsonpath.JSONPath | jsonpath.CompoundJSONPath = field(compare=False, repr=False)

    @property
    def label(self) -> str:
        if self.op == "exists":
            return f"{self.path} {'exists' if self.value else 'absent'}"
        if self.op in _COMPARISONS:
            return f"{self.path} {_COMPARISONS[self.op]} {_shown(self.value)}"
        return f"{self.path} {self.op} {_shown(self.value)}"

    def to_api(self) -> dict[str, Any]:
        return {"type": "json", "path": self.path, "op": self.op, "value": self.value}


@dataclass(frozen=True, slots=True)
class TimeAssertion:
    lt_ms: int

    @property
    def label(self) -> str:
        return f"response time < {self.lt_ms} ms"

    def to_api(self) -> dict[str, Any]:
        return {"type": "response_time", "lt_ms": self.lt_ms}


Assertion = StatusAssertion | HeaderAssertion | BodyAssertion | JsonAssertion | TimeAssertion


def reads_body(assertions: Sequence[Assertion]) -> bool:
    """Return whether judging ``assertions`` needs the response's body."""
    return any(isinstance(item, BodyAssertion | JsonAssertion) for item in assertions)


def has_status(assertions: Sequence[Assertion]) -> bool:
    """Return whether a status assertion decides the status (then ``expectedStatus`` does not)."""
    return any(isinstance(item, StatusAssertion) for item in assertions)


def assertions_to_api(assertions: Sequence[Assertion]) -> list[dict[str, Any]]:
    return [item.to_api() for item in assertions]


# --- parsing ---------------------------------------------------------------------------------


def parse_assertions(
    raw: object, errors: dict[str, str], *, key: str = "assertions"
) -> tuple[Assertion, ...]:
    """Return the assertions of the API's list ``raw``, recording each problem in ``errors``.

    Keys name the place: ``assertions`` for the list, ``assertions[3].op`` for a field.
    """
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors[key] = 'Must be a list of assertion objects, e.g. [{"type": "status", "in": ["2xx"]}].'
        return ()
    if len(raw) > MAX_ASSERTIONS:
        errors[key] = f"At most {MAX_ASSERTIONS} assertions (got {len(raw)})."
        return ()
    parsed: list[Assertion] = []
    for index, item in enumerate(raw):
        where = f"{key}[{index}]"
        before = len(errors)
        assertion = _parse_one(item, where, errors)
        if assertion is not None and len(errors) == before:
            parsed.append(assertion)
    return tuple(parsed)


def _parse_one(item: object, where: str, errors: dict[str, str]) -> Assertion | None:
    if not isinstance(item, Mapping):
        errors[where] = "Must be an object with a type."
        return None
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in _KEYS:
        errors[f"{where}.type"] = f"Must be one of {', '.join(TYPES)}."
        return None
    allowed = _KEYS[kind]
    for name in sorted(str(name) for name in item if name not in allowed):
        errors[f"{where}.{name}"] = (
            f"Unknown field for a {kind} assertion; allowed: {', '.join(sorted(allowed))}."
        )
    if kind == "status":
        return _parse_status(item, where, errors)
    if kind == "header":
        return _parse_header(item, where, errors)
    if kind == "body":
        return _parse_body(item, where, errors)
    if kind == "json":
        return _parse_json(item, where, errors)
    return _parse_time(item, where, errors)


def _parse_status(item: Mapping[str, Any], where: str, errors: dict[str, str]) -> StatusAssertion | None:
    raw = item.get("in")
    message = 'Must be a non-empty list of codes (200), classes ("2xx") or ranges ("200-299").'
    if not isinstance(raw, list) or not raw or len(raw) > MAX_STATUS_ITEMS:
        errors[f"{where}.in"] = message
        return None
    ranges = [status_range(value) for value in raw]
    bad = next((value for value, parsed in zip(raw, ranges, strict=True) if parsed is None), None)
    if bad is not None or None in ranges:
        errors[f"{where}.in"] = f"{message} Got {json.dumps(bad)[:40]}."
        return None
    return StatusAssertion(tuple(parsed for parsed in ranges if parsed is not None))


def _op(item: Mapping[str, Any], where: str, ops: tuple[str, ...], errors: dict[str, str]) -> str | None:
    op = item.get("op")
    if not isinstance(op, str) or op not in ops:
        errors[f"{where}.op"] = f"Must be one of {', '.join(ops)}."
        return None
    return op


def _text_value(item: Mapping[str, Any], where: str, errors: dict[str, str]) -> str | None:
    value = item.get("value")
    if not isinstance(value, str) or not value or len(value) > MAX_VALUE:
        errors[f"{where}.value"] = f"Must be a non-empty string of at most {MAX_VALUE} characters."
        return None
    if "\x00" in value or any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        errors[f"{where}.value"] = "Must not contain NUL or lone surrogates."
        return None
    return value


def _pattern(value: str, where: str, errors: dict[str, str]) -> Regex | None:
    if len(value) > MAX_PATTERN:
        errors[f"{where}.value"] = f"A regular expression is at most {MAX_PATTERN} characters."
        return None
    try:
        return compile_regex(value)
    except RegexRefused as exc:
        errors[f"{where}.value"] = str(exc)
        return None


def _parse_header(item: Mapping[str, Any], where: str, errors: dict[str, str]) -> HeaderAssertion | None:
    name = item.get("name")
    if not isinstance(name, str) or not _TOKEN.match(name) or len(name) > 200:
        errors[f"{where}.name"] = "Must be a header name (letters, digits and -)."
        name = None
    op = _op(item, where, HEADER_OPS, errors)
    if op == "absent":
        if "value" in item:
            errors[f"{where}.value"] = "An absent header takes no value."
        return HeaderAssertion(name, op) if name else None
    value = _text_value(item, where, errors)
    if name is None or op is None or value is None:
        return None
    pattern = _pattern(value, where, errors) if op == "matches" else None
    return HeaderAssertion(name, op, value, pattern)


def _parse_body(item: Mapping[str, Any], where: str, errors: dict[str, str]) -> BodyAssertion | None:
    op = _op(item, where, BODY_OPS, errors)
    value = _text_value(item, where, errors)
    if op is None or value is None:
        return None
    pattern = _pattern(value, where, errors) if op == "matches" else None
    return BodyAssertion(op, value, pattern)


def _parse_json(item: Mapping[str, Any], where: str, errors: dict[str, str]) -> JsonAssertion | None:
    path = item.get("path")
    query: jsonpath.JSONPath | jsonpath.CompoundJSONPath | None = None
    if not isinstance(path, str) or not path.strip() or len(path) > MAX_VALUE:
        errors[f"{where}.path"] = (
            f'Must be a JSONPath (RFC 9535) of at most {MAX_VALUE} characters, e.g. "$.status".'
        )
    else:
        try:
            query = jsonpath.compile(path)
        except (jsonpath.JSONPathError, RecursionError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            errors[f"{where}.path"] = f"Not a valid JSONPath ({first[:120]})."
    op = _op(item, where, JSON_OPS, errors)
    value = item.get("value")
    if op == "exists":
        if value is None:
            value = True
        elif not isinstance(value, bool):
            errors[f"{where}.value"] = (
                "Must be true (the path selects something) or false (nothing), or left out."
            )
    elif op in _COMPARISONS:
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            errors[f"{where}.value"] = "Must be a number."
    elif op is not None:
        if "value" not in item:
            errors[f"{where}.value"] = "This field is required."
        elif len(json.dumps(value)) > MAX_VALUE:
            errors[f"{where}.value"] = f"Must be at most {MAX_VALUE} characters as JSON."
    if query is None or op is None or not isinstance(path, str):
        return None
    return JsonAssertion(path, op, value, query)


def _parse_time(item: Mapping[str, Any], where: str, errors: dict[str, str]) -> TimeAssertion | None:
    limit = item.get("lt_ms")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LT_MS:
        errors[f"{where}.lt_ms"] = f"Must be a whole number of milliseconds from 1 to {MAX_LT_MS}."
        return None
    return TimeAssertion(limit)


# --- evaluation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seen:
    """What the check saw of the final response: ``body`` is None when it was not read."""

    status: int
    headers: Sequence[tuple[str, str]]  # names lower-cased, in order
    body: str | None
    elapsed_ms: float


@dataclass(frozen=True, slots=True)
class Judged:
    """One assertion's verdict: ``failure`` is the reason's sentence ("" when it held)."""

    label: str
    passed: bool
    seen: Any
    failure: str = ""


_MISSING = object()


class _Body:
    """Parse the body as JSON at most once for all JSON assertions."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self._value: Any = _MISSING
        self.problem = ""

    def json(self) -> Any:
        if self._value is _MISSING and not self.problem:
            if self.text is None:
                self.problem = "no body was read"
            else:
                try:
                    self._value = read_json(self.text)
                except JsonTooDeep as exc:
                    self.problem = f"the body {exc}"
                except ValueError as exc:
                    self.problem = f"the body is not JSON ({str(exc)[:80]})"
        return self._value


def evaluate(assertions: Sequence[Assertion], seen: Seen) -> tuple[Judged, ...]:
    """Return each assertion's verdict on ``seen``, in order."""
    body = _Body(seen.body)
    return tuple(_judge(item, seen, body) for item in assertions)


def failure_reason(judged: Sequence[Judged]) -> str:
    """Return the outcome's reason: every failing assertion with what was seen, "" if all held."""
    return "; ".join(item.failure for item in judged if not item.passed)


def judged_details(judged: Sequence[Judged]) -> dict[str, Any]:
    """Return the outcome's details: each assertion, whether it held and what was seen (capped)."""
    return {
        "assertions": [
            {"assertion": item.label, "passed": item.passed, "seen": _kept(item.seen)} for item in judged
        ]
    }


def _judge(item: Assertion, seen: Seen, body: _Body) -> Judged:
    if isinstance(item, StatusAssertion):
        passed = any(seen.status in expected for expected in item.ranges)
        return Judged(
            item.label,
            passed,
            seen.status,
            "" if passed else f"status was {seen.status}, expected {_ranges_words(item.ranges)}",
        )
    if isinstance(item, TimeAssertion):
        elapsed = round(seen.elapsed_ms)
        passed = seen.elapsed_ms < item.lt_ms
        failure = f"response time was {elapsed} ms, expected < {item.lt_ms} ms"
        return Judged(item.label, passed, elapsed, "" if passed else failure)
    if isinstance(item, HeaderAssertion):
        return _judge_header(item, seen)
    if isinstance(item, BodyAssertion):
        return _judge_body(item, body.text)
    return _judge_json(item, body)


def _judge_header(item: HeaderAssertion, seen: Seen) -> Judged:
    wanted = item.name.lower()
    values = [value for name, value in seen.headers if name == wanted]
    value = ", ".join(values) if values else None
    subject = f"header {item.name}"
    if item.op == "absent":
        passed = value is None
        return Judged(
            item.label, passed, value, "" if passed else f"{subject} was {_shown(value)}, expected absent"
        )
    expected = _expected_words(item.op, item.value)
    if value is None:
        return Judged(item.label, False, None, f"{subject} is missing, expected {expected}")
    if item.op == "equals":
        passed = value.strip() == item.value
    elif item.op == "contains":
        passed = item.value in value
    else:
        assert item.pattern is not None
        passed = item.pattern.search(value)
    return Judged(
        item.label, passed, value, "" if passed else f"{subject} was {_shown(value)}, expected {expected}"
    )


def _judge_body(item: BodyAssertion, text: str | None) -> Judged:
    if text is None:
        return Judged(item.label, False, None, "no body was read")
    shown = text[:DETAILS_CHARS]
    if item.op == "contains":
        passed = item.value in text
        failure = f"body does not contain {_quoted(item.value)}"
    elif item.op == "not_contains":
        passed = item.value not in text
        failure = f"body contains {_quoted(item.value)}, expected it absent"
    else:
        assert item.pattern is not None
        passed = item.pattern.search(text[:MATCHED_TEXT_CHARS])
        scope = " in its first MiB" if len(text) > MATCHED_TEXT_CHARS else ""
        failure = f"body does not match {_quoted(item.value)}{scope}"
    return Judged(item.label, passed, shown, "" if passed else failure)


def _judge_json(item: JsonAssertion, body: _Body) -> Judged:
    data = body.json()
    if body.problem:
        return Judged(item.label, False, None, f"{item.path}: {body.problem}")
    try:
        found = item.query.findall(data)
    except (jsonpath.JSONPathError, RecursionError) as exc:
        return Judged(item.label, False, None, f"{item.path}: {str(exc).splitlines()[0][:80]}")
    if item.op == "exists":
        passed = bool(found) is bool(item.value)
        value = found[0] if len(found) == 1 else (found or None)
        if passed:
            return Judged(item.label, True, value)
        if found:
            return Judged(item.label, False, value, f"{item.path} was {_shown(value)}, expected absent")
        return Judged(item.label, False, None, f"{item.path} is missing")
    expected = _expected_words(item.op, item.value)
    if not found:
        return Judged(item.label, False, None, f"{item.path} is missing, expected {expected}")
    value = found[0] if len(found) == 1 else list(found)
    if item.op == "equals":
        passed = _same(value, item.value)
    elif item.op == "contains":
        passed = _contains(value, item.value)
    else:
        passed = (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and _compare(item.op, value, item.value)
        )
        if not _is_number(value):
            expected = f"a number {expected}"
    return Judged(
        item.label, passed, value, "" if passed else f"{item.path} was {_shown(value)}, expected {expected}"
    )


def _compare(op: str, seen: float, limit: float) -> bool:
    if op == "lt":
        return seen < limit
    if op == "le":
        return seen <= limit
    if op == "gt":
        return seen > limit
    return seen >= limit


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(seen: Any, expected: Any) -> bool:
    """Return whether two JSON values are equal as JSON says (1 == 1.0; true is no number)."""
    if isinstance(seen, bool) or isinstance(expected, bool):
        return isinstance(seen, bool) and isinstance(expected, bool) and seen is expected
    if _is_number(seen) and _is_number(expected):
        return bool(seen == expected)
    if isinstance(seen, list) and isinstance(expected, list):
        return len(seen) == len(expected) and all(_same(a, b) for a, b in zip(seen, expected, strict=True))
    if isinstance(seen, dict) and isinstance(expected, dict):
        return seen.keys() == expected.keys() and all(_same(seen[key], expected[key]) for key in seen)
    return type(seen) is type(expected) and bool(seen == expected)


def _contains(seen: Any, expected: Any) -> bool:
    """A string contains a substring, a list an equal item, an object a key."""
    if isinstance(seen, str):
        return isinstance(expected, str) and expected in seen
    if isinstance(seen, list):
        return any(_same(item, expected) for item in seen)
    if isinstance(seen, dict):
        return isinstance(expected, str) and expected in seen
    return False


def _expected_words(op: str, value: Any) -> str:
    if op in _COMPARISONS:
        return f"{_COMPARISONS[op]} {_shown(value)}"
    if op == "contains":
        return f"to contain {_shown(value)}"
    if op == "matches":
        return f"to match {_shown(value)}"
    return _shown(value)


def _ranges_words(ranges: Sequence[StatusRange]) -> str:
    return ", ".join(str(item) for item in ranges)


def _quoted(text: str) -> str:
    return _shown(text)


def _shown(value: Any) -> str:
    """Return a JSON value as a reason quotes it: compact JSON, cut to REASON_CHARS."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def _kept(value: Any) -> Any:
    """Return ``value`` for the details when small, else its JSON text cut to DETAILS_CHARS."""
    if isinstance(value, str):
        return value if len(value) <= DETAILS_CHARS else value[: DETAILS_CHARS - 1] + "…"
    text = json.dumps(value, ensure_ascii=False)
    return value if len(text) <= DETAILS_CHARS else text[: DETAILS_CHARS - 1] + "…"


# --- JSON schema (OpenAPI) ------------------------------------------------------------------

_STATUS_ITEMS = {"oneOf": [{"type": "integer", "minimum": 100, "maximum": 599}, {"type": "string"}]}

ASSERTIONS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "maxItems": MAX_ASSERTIONS,
    "description": (
        "Conditions that must all hold for the check to be up; each failing one is named in the "
        "reason with the value seen. A status assertion replaces expectedStatus."
    ),
    "items": {
        "oneOf": [
            {
                "type": "object",
                "title": "status",
                "additionalProperties": False,
                "required": ["type", "in"],
                "properties": {
                    "type": {"const": "status"},
                    "in": {
                        "type": "array",
                        "items": _STATUS_ITEMS,
                        "minItems": 1,
                        "maxItems": MAX_STATUS_ITEMS,
                    },
                },
            },
            {
                "type": "object",
                "title": "header",
                "additionalProperties": False,
                "required": ["type", "name", "op"],
                "properties": {
                    "type": {"const": "header"},
                    "name": {"type": "string"},
                    "op": {"enum": list(HEADER_OPS)},
                    "value": {"type": "string", "maxLength": MAX_VALUE, "description": "Not for absent."},
                },
            },
            {
                "type": "object",
                "title": "body",
                "additionalProperties": False,
                "required": ["type", "op", "value"],
                "properties": {
                    "type": {"const": "body"},
                    "op": {"enum": list(BODY_OPS)},
                    "value": {"type": "string", "maxLength": MAX_VALUE},
                },
            },
            {
                "type": "object",
                "title": "json",
                "additionalProperties": False,
                "required": ["type", "path", "op"],
                "properties": {
                    "type": {"const": "json"},
                    "path": {"type": "string", "description": 'A JSONPath (RFC 9535), e.g. "$.status".'},
                    "op": {"enum": list(JSON_OPS)},
                    "value": {
                        "description": "Any JSON value; a number for lt/le/gt/ge; a boolean for exists."
                    },
                },
            },
            {
                "type": "object",
                "title": "response_time",
                "additionalProperties": False,
                "required": ["type", "lt_ms"],
                "properties": {
                    "type": {"const": "response_time"},
                    "lt_ms": {"type": "integer", "minimum": 1, "maximum": MAX_LT_MS},
                },
            },
        ]
    },
}
