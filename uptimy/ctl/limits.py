"""Check a file's monitors against the limits the API publishes, before anything is sent.

The config rules are the check types' own parsers (``spec.py``); the other fields' limits are
the API's: read from its OpenAPI schema (``/api/v1/schema/``, the bounds its serializer
declares: ``recheck_count`` 0–5, at most 20 tags, a listing's text lengths, …) and from the organization's plan
(``/api/v1/organization/``: the shortest interval, the regions it allows, how many monitors).
Nothing here repeats a number the server holds; an API whose schema can't be read leaves those
checks to its 400s, which are shown at the field's line all the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from uptimy.ctl import fields as F
from uptimy.ctl.client import Api, ApiError
from uptimy.ctl.spec import Monitor, Problem

SCHEMA_PATH = "/api/v1/schema/?format=json"
REQUEST_SCHEMA = "HealthcheckRequest"
LISTING_SCHEMA = "HealthcheckListingRequest"


@dataclass(frozen=True)
class Limits:
    """The API's field limits (JSON schema per field) and the organization's plan."""

    fields: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    plan: Mapping[str, Any] = field(default_factory=dict)
    # The listing's fields (its PUT body), by name.
    listing_fields: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def fetch(cls, api: Api) -> Limits:
        """Read the limits from the API; what it doesn't publish is left to its answers."""
        try:
            schemas = api.request("GET", SCHEMA_PATH)["components"]["schemas"]
        except (ApiError, KeyError, TypeError):
            schemas = {}
        organization = api.organization()
        return cls(
            fields=_properties(schemas, REQUEST_SCHEMA),
            plan=organization.get("plan") or {},
            listing_fields=_properties(schemas, LISTING_SCHEMA),
        )

    def problems(self, monitors: list[Monitor]) -> list[Problem]:
        """Return what the API would refuse in ``monitors``' plain fields, at each field's place."""
        found: list[Problem] = []
        for monitor in monitors:
            for api_field, value in monitor.fields.items():
                if api_field in ("type", "config"):
                    continue
                for api_path, message in [
                    *_schema_faults(self.fields.get(api_field, {}), value, api_field),
                    *self._plan_faults(api_field, value),
                ]:
                    found.append(monitor.problem(api_path, message))
            for name, value in (monitor.listing or {}).items():
                for api_path, message in _schema_faults(
                    self.listing_fields.get(name, {}), value, f"{F.LISTING}.{name}"
                ):
                    found.append(monitor.problem(api_path, message))
        return found

    def _plan_faults(self, api_field: str, value: Any) -> list[tuple[str, str]]:
        name = self.plan.get("name", "organization's")
        minimum = self.plan.get("min_interval_seconds")
        if (
            api_field == "interval"
            and isinstance(minimum, int)
            and isinstance(value, int)
            and value < minimum
        ):
            return [(api_field, f"must be ≥ {minimum} seconds on the {name} plan")]
        allowed = self.plan.get("allowed_regions")
        if api_field == "regions" and isinstance(allowed, list) and isinstance(value, list):
            refused = [region for region in value if region not in allowed]
            if refused:
                return [
                    (
                        api_field,
                        f"the {name} plan doesn't allow {', '.join(refused)}; allowed: {', '.join(allowed)}",
                    )
                ]
        return []

    def count_problem(self, *, after: int) -> Problem | None:
        """Return a problem when the organization would hold more monitors than its plan allows."""
        most = self.plan.get("max_healthchecks")
        if isinstance(most, int) and after > most:
            return Problem(
                "monitors",
                f"the {self.plan.get('name', '')} plan allows {most} monitors; applying makes {after}",
            )
        return None


def _properties(schemas: Any, name: str) -> Mapping[str, Mapping[str, Any]]:
    """Return a schema component's properties; none when the API doesn't publish it."""
    try:
        return dict(schemas[name]["properties"])
    except (KeyError, TypeError):
        return {}


def _schema_faults(schema: Mapping[str, Any], value: Any, path: str) -> list[tuple[str, str]]:
    """Return (path, message) for each bound of the field's JSON schema that ``value`` breaks."""
    if value is None:
        types = schema.get("type")
        allows_null = schema.get("nullable") or (isinstance(types, list) and "null" in types)
        return [] if allows_null or not schema else [(path, "must not be null")]
    faults: list[tuple[str, str]] = []
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            faults.append((path, f"must be ≥ {schema['minimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            faults.append((path, f"must be ≤ {schema['maximum']}"))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            faults.append((path, f"must be at least {schema['minLength']} characters"))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            faults.append((path, f"must be at most {schema['maxLength']} characters"))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            faults.append((path, f"must match {schema['pattern']}"))
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            faults.append((path, f"at most {schema['maxItems']} items"))
        if "minItems" in schema and len(value) < schema["minItems"]:
            faults.append((path, f"at least {schema['minItems']} items"))
        item_schema = schema.get("items") or {}
        for index, item in enumerate(value):
            faults.extend(_schema_faults(item_schema, item, f"{path}.{index}"))
    return faults
