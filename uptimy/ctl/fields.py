"""Map a monitors file's fields to the API's, in one place.

The file speaks the product text's format: ``name``, ``type`` (a check type's name), ``target``
(the URL, which the API keeps as ``config.uri``), ``config`` (the check type's own keys, as the
API names them: ``requiredTools``, ``minTools``, ``headers``, ``timeout``, …), and the API's other
fields under the API's own names (``interval``, ``regions``, ``tags``, ``paused``,
``recheck_count``, ``recheck_delay_seconds``, ``quorum``, ``degraded_threshold_ms``). ``key`` is
the client's own: a monitor's API id, to match it by something other than its name. ``listing``
(MCP monitors only) is the check's own directory listing, a sub-resource of the API
(``/api/v1/healthchecks/{id}/listing/``, where it is written) that the healthcheck's answer
carries read-only, its keys the API's (``LISTING_FIELDS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# What a field's value must look like in the file; the API checks ranges and plan limits, and its
# 400 is mapped back to the field's line and column.
TEXT = "text"
TEXT_LIST = "text list"
WHOLE = "whole number"
WHOLE_OR_NULL = "whole number or null"
BOOLEAN = "true or false"
DURATION = "duration"
MAPPING = "mapping"
MAPPING_OR_NULL = "mapping or null"


@dataclass(frozen=True, slots=True)
class FileField:
    """One top-level field of a monitor entry: its file name, its API name (None: the client's own), its shape."""

    name: str
    api: str | None
    shape: str


FIELDS: tuple[FileField, ...] = (
    FileField("name", "name", TEXT),
    FileField("key", None, TEXT),
    FileField("type", "type", TEXT),
    FileField("target", "config.uri", TEXT),
    FileField("config", "config", MAPPING),
    FileField("interval", "interval", DURATION),
    FileField("regions", "regions", TEXT_LIST),
    FileField("tags", "tags", TEXT_LIST),
    FileField("paused", "paused", BOOLEAN),
    FileField("recheck_count", "recheck_count", WHOLE),
    FileField("recheck_delay_seconds", "recheck_delay_seconds", WHOLE),
    FileField("quorum", "quorum", WHOLE_OR_NULL),
    FileField("degraded_threshold_ms", "degraded_threshold_ms", WHOLE_OR_NULL),
    FileField("listing", "listing", MAPPING_OR_NULL),
)
BY_NAME = {field.name: field for field in FIELDS}
REQUIRED = ("name", "type")
# `target` is the API's config.uri, for the types whose config has a uri (required for those);
# a type without one (host and port, a name, nothing) writes every setting under `config:`.
TARGET = "target"
# The API fields a monitor entry sets besides name, type and config, compared and sent one by one.
PLAIN_API_FIELDS = tuple(
    field.api
    for field in FIELDS
    if field.api is not None and field.api not in ("name", "type", "config.uri", "config", "listing")
)
# Fields compared as sets: the API answers them sorted.
SET_FIELDS = frozenset({"regions", "tags"})
URI_KEY = "uri"


def has_target(kind: Any) -> bool:
    """Return whether a check type's config has a uri, which the file writes as the monitor's `target`."""
    return URI_KEY in dict(kind.schema).get("properties", {})


# The listing's fields as the API names them (its PUT body; the file writes the same keys), and
# the one check type that has a listing.
LISTING = "listing"
LISTING_FIELDS = ("namespace", "website_url", "repository_url", "pricing_url", "quote")
LISTING_REQUIRED = ("namespace",)
LISTING_TYPE = "mcp"

_DURATION = re.compile(r"^(\d+)\s*(s|m|h)$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(value: object) -> int | None:
    """Return seconds from 60, "60s", "5m" or "1h"; None when ``value`` is none of these."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and (match := _DURATION.match(value.strip())):
        return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return None


def file_entry(
    healthcheck: dict[str, Any], *, config: dict[str, Any], listing: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return a monitor entry in the file's format from an API healthcheck, its file-shaped ``config`` and listing."""
    entry: dict[str, Any] = {"name": healthcheck["name"], "type": healthcheck["type_name"]}
    if URI_KEY in healthcheck["config"]:
        entry[TARGET] = healthcheck["config"][URI_KEY]
    if config:
        entry["config"] = config
    for field in FIELDS:
        if field.api in PLAIN_API_FIELDS and field.api in healthcheck:
            entry[field.name] = healthcheck[field.api]
    if listing is not None:
        entry[LISTING] = listing_entry(listing)
    return entry


def listing_values(listing: dict[str, Any]) -> dict[str, str]:
    """Return a listing's five writable fields (the API's answer carries read-only ones too), "" for unset."""
    return {name: str(listing.get(name) or "") for name in LISTING_FIELDS}


def listing_entry(listing: dict[str, Any]) -> dict[str, str]:
    """Return a listing as a file writes it: the fields that are set (a key left out is empty)."""
    return {name: value for name, value in listing_values(listing).items() if value}
