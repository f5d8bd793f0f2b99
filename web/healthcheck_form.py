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
from probes.checks import CheckKind, UnknownCheckKind, check_kind, check_kinds
from probes.checks.form import ABSENT, FormField, Widget, config_value
from web.sealed_values import SealBroken, origin_of, seal, unseal

# The tab a new healthcheck opens on (and the one an unknown ?type= falls back to).
DEFAULT_TYPE = "mcp"
COMMON_NAMES = ("name", "interval", "recheck_count", "degraded_threshold_ms", "tags")
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
    "channels": "channels",
}


def kinds() -> list[CheckKind[Any]]:
    """Return the registered types in tab order: the default first, then by number."""
    every = check_kinds()
    return sorted(every, key=lambda kind: (kind.name != DEFAULT_TYPE, kind.number))


def type_names() -> tuple[str, ...]:
    """Return the names of the registered types, in tab order."""
    return tuple(kind.name for kind in kinds())


def kind_named(name: str) -> CheckKind[Any]:
    """Return the type named ``name``, or the default tab's type when no type has that name."""
    try:
        return check_kind(name) if name in type_names() else check_kind(DEFAULT_TYPE)
    except UnknownCheckKind:
        return kinds()[0]


def value_fields(kind: CheckKind[Any]) -> tuple[FormField, ...]:
    """Return the kind's fields that hold a typed value (the headers draw their own rows)."""
    return tuple(item for item in kind.form if item.widget is not Widget.HEADERS)


def shown_fields(kind: CheckKind[Any]) -> tuple[list[FormField], list[FormField]]:
    """Return the kind's fields in view and those under Advanced settings: from its headers on."""
    at = next((i for i, item in enumerate(kind.form) if item.widget is Widget.HEADERS), len(kind.form))
    return list(kind.form[:at]), list(kind.form[at:])


def _shown(item: FormField, value: object) -> str:
    if item.widget is Widget.CODES and isinstance(value, list):
        return ", ".join(str(part) for part in value)
    return item.shown(value)


def _default(kind: CheckKind[Any], item: FormField) -> object:
    return dict(kind.schema.get("properties", {}).get(item.key, {})).get("default")


def _type_values(chosen: CheckKind[Any], config: Mapping[str, Any]) -> dict[str, str]:
    """Return the text of every type's fields: the chosen type's from ``config``, the others' defaults."""
    values: dict[str, str] = {}
    for kind in [chosen, *kinds()]:
        for item in value_fields(kind):
            if item.name in values:
                continue
            if kind is chosen and item.key in config:
                values[item.name] = _shown(item, config[item.key])
            else:
                values[item.name] = _shown(item, _default(kind, item))
    return values


def _form_names() -> list[str]:
    names = dict.fromkeys(COMMON_NAMES)
    for kind in kinds():
        names.update(dict.fromkeys(item.name for item in value_fields(kind)))
    return list(names)


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
        of_config = {f"config.{item.key}": item.name for item in kind_named(self.type).form}
        first = next((item.name for item in value_fields(kind_named(self.type))), NON_FIELD)
        for key, messages in errors.items():
            target = FIELD_OF_ERROR.get(key) or of_config.get(key)
            if target is None:
                if key.startswith("config.headers"):
                    target = "headers"
                else:
                    target = first if key == "config" else NON_FIELD
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
    kind = kind_named(type_name)
    return HealthcheckForm(
        type=kind.name,
        values={
            "name": "",
            "interval": str(max(DEFAULT_INTERVAL_SECONDS, min_interval)),
            "recheck_count": "2",
            "degraded_threshold_ms": "",
            "tags": "",
            **_type_values(kind, {}),
        },
        regions=list(region_slugs),
        headers=[],
    )


def form_of(healthcheck: Healthcheck) -> HealthcheckForm:
    """Return the form of a stored healthcheck; header values come masked, as the API answers them."""
    config = healthcheck.config
    kind = kind_named(check_kind(healthcheck.type).name)
    return HealthcheckForm(
        type=kind.name,
        values={
            "name": healthcheck.name,
            "interval": str(healthcheck.interval_seconds),
            "recheck_count": str(healthcheck.recheck_count),
            "degraded_threshold_ms": ""
            if healthcheck.degraded_threshold_ms is None
            else str(healthcheck.degraded_threshold_ms),
            "tags": ", ".join(sorted(tag.name for tag in healthcheck.tag_rows.all())),
            **_type_values(kind, config),
        },
        regions=sorted(region.slug for region in healthcheck.regions.all()),
        headers=list(dict(config.get("headers", {})).items()),
    )


def posted_form(data: QueryDict, *, organization_id: str) -> HealthcheckForm:
    """Return the form as posted, values kept as typed so an error shows them again.

    A header value left as the mask beside a sealed one is the value typed before the last
    re-render; it opens only for the same organization and the URL's same origin.
    """
    type_name = data.get("type", DEFAULT_TYPE)
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
    names = _form_names()
    form = HealthcheckForm(
        type=kind_named(type_name).name,
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
    kind = kind_named(form.type)
    config: dict[str, Any] = {}
    for item in kind.form:
        if item.widget is Widget.HEADERS:
            headers: dict[str, str] = {}
            for name, value in form.headers:
                if name in headers:
                    form.errors.setdefault("headers", []).append(f"{name}: This header is given twice.")
                headers[name] = value
            config[item.key] = headers
            continue
        typed = config_value(item, values.get(item.name, ""))
        if typed is not ABSENT:
            config[item.key] = typed
    body: dict[str, Any] = {
        "name": values["name"].strip(),
        "type": form.type,
        "config": config,
        "tags": [tag.strip() for tag in values["tags"].split(",") if tag.strip()],
    }
    if not kind.active:
        # Nothing probes a passive type: interval, regions, rechecks and a response-time threshold
        # mean nothing for it, so its tab has none and whatever is posted for them is ignored.
        return body
    body["regions"] = form.regions
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
