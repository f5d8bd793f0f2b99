"""Turn the healthcheck form into the API's request body, and the API's errors back into field errors.

The form is a second face of ``POST /api/v1/healthchecks/``: what it posts becomes the same
body the API takes, validated by the API's own serializer and the same services, so every
rule and every message is the API's. Only the mapping of names lives here (``config.minTools``
is the form's ``min_tools``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.http import QueryDict

from monitors.models import Healthcheck
from monitors.secrets import MASK
from monitors.services.healthchecks import DEFAULT_INTERVAL_SECONDS
from probes.checks import check_kind
from probes.config import DEFAULT_TIMEOUT
from web.sealed_values import SealBroken, origin_of, seal, unseal

TYPES = ("mcp", "http")
HTTP_METHODS = ("GET", "HEAD", "POST")
# Empty header rows the form offers below the stored ones (no script needed to add one).
SPARE_HEADER_ROWS = 2
MAX_HEADER_ROWS = 50
NON_FIELD = "non_field_errors"

# The API's error keys (serializer fields, config.<key> from the check type's parser) → the form's fields.
FIELD_OF_ERROR = {
    "name": "name",
    "type": "type",
    "interval": "interval",
    "regions": "regions",
    "tags": "tags",
    "recheck_count": "recheck_count",
    "degraded_threshold_ms": "degraded_threshold_ms",
    "quorum": "regions",
    "config": "uri",
    "config.uri": "uri",
    "config.requiredTools": "required_tools",
    "config.minTools": "min_tools",
    "config.timeout": "timeout",
    "config.method": "method",
    "config.expectedStatus": "expected_status",
    "config.keyword": "keyword",
    "channels": "channels",
}


@dataclass
class HealthcheckForm:
    """Hold what the form shows: its values as typed, its header rows and the errors by field."""

    type: str
    values: dict[str, str]
    regions: list[str]
    headers: list[tuple[str, str]]
    errors: dict[str, list[str]] = field(default_factory=dict)
    # Public ids of the alert channels chosen; none: the organization's default policy.
    channels: list[str] = field(default_factory=list)

    def add_errors(self, errors: Mapping[str, Any]) -> None:
        """Put API-shaped errors (``{"config.minTools": ["…"]}``) next to the form's fields."""
        for key, messages in errors.items():
            target = FIELD_OF_ERROR.get(key, "headers" if key.startswith("config.headers") else NON_FIELD)
            for message in _messages(messages):
                # A header's error names the header: "X-Key: Send the value: …".
                if key.startswith("config.headers."):
                    message = f"{key.removeprefix('config.headers.')}: {message}"
                self.errors.setdefault(target, []).append(message)


@dataclass(frozen=True, slots=True)
class HeaderRow:
    """Say what one header row of the form shows: never a value typed in clear, only the mask."""

    index: int
    name: str
    shown: str  # "" or the mask
    sealed: str  # a typed value, sealed for the hidden field (web.sealed_values), or ""


def header_rows(form: HealthcheckForm, *, organization_id: str) -> list[HeaderRow]:
    """Return the form's header rows (and the spare empty ones) as the page shows them.

    A stored value comes as the mask already; a value typed in this form (shown again after Test
    now or an error) is shown as the mask too and travels sealed, so the page source never holds it.
    """
    origin = origin_of(form.values.get("uri", ""))
    rows = [*form.headers, *[("", "")] * SPARE_HEADER_ROWS][:MAX_HEADER_ROWS]
    shown = []
    for index, (name, value) in enumerate(rows):
        if value in ("", MASK):
            shown.append(HeaderRow(index=index, name=name, shown=value, sealed=""))
        else:
            token = seal(value, organization_id=organization_id, origin=origin)
            shown.append(HeaderRow(index=index, name=name, shown=MASK, sealed=token))
    return shown


def _messages(value: Any) -> Iterable[str]:
    """Flatten DRF's error shapes (a list, a dict by list index) into sentences."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _messages(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _messages(item)
    else:
        yield str(value)


def blank_form(type_name: str, *, region_slugs: list[str], min_interval: int) -> HealthcheckForm:
    """Return a new healthcheck's form: the API's defaults filled in."""
    return HealthcheckForm(
        type=type_name if type_name in TYPES else "mcp",
        values={
            "name": "",
            "uri": "",
            "interval": str(max(DEFAULT_INTERVAL_SECONDS, min_interval)),
            "timeout": str(DEFAULT_TIMEOUT),
            "min_tools": "0",
            "required_tools": "",
            "recheck_count": "2",
            "degraded_threshold_ms": "",
            "tags": "",
            "method": "GET",
            "expected_status": "2xx",
            "keyword": "",
        },
        regions=list(region_slugs),
        headers=[],
    )


def form_of(healthcheck: Healthcheck) -> HealthcheckForm:
    """Return the form of a stored healthcheck; header values come masked, as the API answers them."""
    config = healthcheck.config
    kind = check_kind(healthcheck.type).name
    return HealthcheckForm(
        type=kind if kind in TYPES else "mcp",
        values={
            "name": healthcheck.name,
            "uri": str(config.get("uri", "")),
            "interval": str(healthcheck.interval_seconds),
            "timeout": _number(config.get("timeout", DEFAULT_TIMEOUT)),
            "min_tools": str(config.get("minTools", 0)),
            "required_tools": "\n".join(config.get("requiredTools", [])),
            "recheck_count": str(healthcheck.recheck_count),
            "degraded_threshold_ms": ""
            if healthcheck.degraded_threshold_ms is None
            else str(healthcheck.degraded_threshold_ms),
            "tags": ", ".join(sorted(tag.name for tag in healthcheck.tag_rows.all())),
            "method": str(config.get("method", "GET")),
            "expected_status": ", ".join(str(item) for item in config.get("expectedStatus", ["2xx"])),
            "keyword": str(config.get("keyword") or ""),
        },
        regions=sorted(region.slug for region in healthcheck.regions.all()),
        headers=list(dict(config.get("headers", {})).items()),
    )


def posted_form(data: QueryDict, *, organization_id: str) -> HealthcheckForm:
    """Return the form as posted, values kept as typed so an error shows them again.

    A header value left as the mask beside a sealed one is the value typed before the last
    re-render; it opens only for the same organization and the URL's same origin.
    """
    type_name = data.get("type", "mcp")
    origin = origin_of(data.get("uri", ""))
    headers = []
    broken = []
    for index in range(MAX_HEADER_ROWS):
        name = data.get(f"header_name_{index}", "").strip()
        value = data.get(f"header_value_{index}", "")
        sealed = data.get(f"header_sealed_{index}", "")
        if value == MASK and sealed:
            try:
                value = unseal(sealed, organization_id=organization_id, origin=origin)
            except SealBroken:
                broken.append(name or f"Header {index + 1}")
                value = ""
        if name or value:
            headers.append((name, value))
    names = [
        "name",
        "uri",
        "interval",
        "timeout",
        "min_tools",
        "required_tools",
        "recheck_count",
        "degraded_threshold_ms",
        "tags",
        "method",
        "expected_status",
        "keyword",
    ]
    form = HealthcheckForm(
        type=type_name if type_name in TYPES else "mcp",
        values={name: data.get(name, "") for name in names},
        regions=data.getlist("regions"),
        headers=headers,
        channels=data.getlist("channels"),
    )
    for name in broken:
        form.errors.setdefault("headers", []).append(
            f"{name}: Type the value again: the form was left open too long or its URL's origin changed."
        )
    return form


def api_body(form: HealthcheckForm) -> dict[str, Any]:
    """Return the API's request body for the form: what ``POST /api/v1/healthchecks/`` would be sent.

    Numbers typed as numbers become numbers; anything else goes as typed, so the API's own
    validation answers it with the API's own message.
    """
    values = form.values
    config: dict[str, Any] = {"uri": values["uri"].strip(), "timeout": _typed(values["timeout"], float)}
    headers: dict[str, str] = {}
    for name, value in form.headers:
        if name in headers:
            form.errors.setdefault("headers", []).append(f"{name}: This header is given twice.")
        headers[name] = value
    config["headers"] = headers
    if form.type == "mcp":
        config["requiredTools"] = [
            line.strip() for line in values["required_tools"].splitlines() if line.strip()
        ]
        config["minTools"] = _typed(values["min_tools"], int) if values["min_tools"].strip() else 0
    else:
        config["method"] = values["method"]
        statuses = [item.strip() for item in values["expected_status"].split(",") if item.strip()]
        config["expectedStatus"] = [_typed(item, int) for item in statuses] or ["2xx"]
        config["keyword"] = values["keyword"] or None
    body: dict[str, Any] = {
        "name": values["name"].strip(),
        "type": form.type,
        "config": config,
        "regions": form.regions,
        "tags": [tag.strip() for tag in values["tags"].split(",") if tag.strip()],
    }
    for name in ("interval", "recheck_count"):
        if values[name].strip():
            body[name] = _typed(values[name], int)
    threshold = values["degraded_threshold_ms"].strip()
    body["degraded_threshold_ms"] = _typed(threshold, int) if threshold else None
    return body


_INTEGER = re.compile(r"^\s*-?\d+\s*$")
_DECIMAL = re.compile(r"^\s*-?(\d+(\.\d*)?|\.\d+)\s*$")


def _typed(text: str, kind: type[int] | type[float]) -> Any:
    """Return ``text`` as a number of ``kind`` when it is one, else as typed (the API then names the field)."""
    if kind is int and _INTEGER.match(text):
        return int(text)
    if kind is float and _DECIMAL.match(text):
        number = float(text)
        return int(number) if number.is_integer() else number
    return text


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
