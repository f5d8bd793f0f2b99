"""Turn the maintenance window form into the API's request body (``POST /api/v1/maintenance-windows/``).

The browser's date-and-time fields carry no zone: the times typed are read in the window's own
time zone, as a person planning "Sunday 02:00 in Paris" means them. Validation is the API's
serializer and the services' (monitors.maintenance), so every message is the API's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

FIELDS = ("name", "description", "starts_at", "ends_at", "duration", "rrule", "timezone", "tags")


def typed(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return what the form holds, as typed (to show it again next to its errors)."""
    values: dict[str, Any] = {name: str(data.get(name, "")).strip() for name in FIELDS}
    getlist = getattr(data, "getlist", None)
    values["healthchecks"] = list(getlist("healthchecks")) if getlist else list(data.get("healthchecks", []))
    return values


def _in_zone(local: str, zone: str) -> str:
    """Return a zone-less ``YYYY-MM-DDTHH:MM`` as ISO 8601 in ``zone``; anything else unchanged for the API to judge."""
    try:
        moment = datetime.fromisoformat(local)
        return moment.replace(tzinfo=ZoneInfo(zone)).isoformat() if moment.tzinfo is None else local
    except (ValueError, ZoneInfoNotFoundError):
        return local


def api_body(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return the API's body: empty optional fields left out, tags split on commas."""
    zone = values.get("timezone") or "UTC"
    body: dict[str, Any] = {"name": values.get("name", ""), "timezone": zone}
    if values.get("description"):
        body["description"] = values["description"]
    body["starts_at"] = _in_zone(values.get("starts_at", ""), zone) if values.get("starts_at") else None
    if values.get("ends_at"):
        body["ends_at"] = _in_zone(values["ends_at"], zone)
    if values.get("duration"):
        body["duration"] = values["duration"]
    if values.get("rrule"):
        body["rrule"] = values["rrule"]
    tags = [tag.strip() for tag in str(values.get("tags", "")).split(",") if tag.strip()]
    if tags:
        body["tags"] = tags
    if values.get("healthchecks"):
        body["healthchecks"] = list(values["healthchecks"])
    return body
