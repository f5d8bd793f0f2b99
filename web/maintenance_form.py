"""Turn the maintenance window form into the API's request body (``POST``, or ``PUT …/{id}/`` for an edit).

The browser's date-and-time fields carry no zone: the times typed are read in the window's own
time zone, as a person planning "Sunday 02:00 in Paris" means them. Validation is the API's
serializer and the services' (monitors.maintenance), so every message is the API's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from monitors.models import MaintenanceWindow

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


def _local_text(moment: datetime) -> str:
    """Return a moment as a date-and-time field holds it: zone-less, to the minute unless it has seconds."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S" if moment.second else "%Y-%m-%dT%H:%M")


def values_of(window: MaintenanceWindow) -> dict[str, Any]:
    """Return a stored window as the form shows it: its start in its own zone, its length as a duration."""
    try:
        start = window.starts_at.astimezone(ZoneInfo(window.timezone))
    except ZoneInfoNotFoundError:  # a zone this machine lost since: shown in UTC, which the API then judges
        start = window.starts_at.astimezone(UTC)
    return {
        "name": window.name,
        "description": window.description,
        "starts_at": _local_text(start),
        "ends_at": "",
        "duration": str(int(window.duration.total_seconds())),
        "rrule": window.rrule,
        "timezone": window.timezone,
        "tags": ", ".join(sorted(tag.name for tag in window.tag_rows.all())),
        "healthchecks": [str(hc.public_id) for hc in window.healthchecks.all()],
    }


def edit_body(values: Mapping[str, Any], window: MaintenanceWindow) -> dict[str, Any]:
    """Return the API's body for a whole change (PUT): what the form leaves empty is cleared, not kept.

    A start left as shown stays the stored instant: a local time the clocks pass twice (the hour
    daylight saving time ends) can't say which of the two it is.
    """
    body = api_body(values)
    shown = values_of(window)
    if (values.get("starts_at"), values.get("timezone")) == (shown["starts_at"], shown["timezone"]):
        body["starts_at"] = window.starts_at.isoformat()
    body.setdefault("description", "")
    body.setdefault("rrule", "")
    body.setdefault("healthchecks", [])
    body.setdefault("tags", [])
    return body


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
