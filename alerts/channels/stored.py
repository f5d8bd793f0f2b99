"""Turn an :class:`Alert` into a JSON document and back, so a delivery keeps the alert it first carried.

The ledger builds a delivery's alert once, when it is first sent, and stores it; every retry
sends that stored alert again, so a receiver gets the same body on every attempt of one
``webhook-id`` (the acknowledge link signed once, the incident as it stood then). Pure: plain
JSON values in and out, times as ISO 8601 strings with their offset.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from alerts.channels.base import (
    Alert,
    Cause,
    EventType,
    HealthcheckRef,
    IncidentInfo,
    Notice,
    RegionFailure,
    ToolInputs,
    ToolsChange,
)

# Bumped when the document's shape changes in a way older documents can't be read by.
DOCUMENT_VERSION = 1


class StoredAlertUnreadable(ValueError):
    """A stored document is not an alert this version can read."""


def alert_document(alert: Alert) -> dict[str, Any]:
    """Return ``alert`` as a JSON-ready document that :func:`alert_from_document` reads back equal."""
    return {
        "version": DOCUMENT_VERSION,
        "event_type": alert.event_type.value,
        "event_id": alert.event_id,
        "occurred_at": _time(alert.occurred_at),
        "organization": alert.organization,
        "notices": [_notice_document(notice) for notice in alert.notices],
        "incidents_link": alert.incidents_link,
    }


def alert_from_document(document: Mapping[str, Any]) -> Alert:
    """Return the alert a document of :func:`alert_document` holds; raise StoredAlertUnreadable otherwise."""
    if document.get("version") != DOCUMENT_VERSION:
        raise StoredAlertUnreadable(
            f"stored alert version {document.get('version')!r} is not {DOCUMENT_VERSION}"
        )
    try:
        occurred_at = _moment(document["occurred_at"])
        assert occurred_at is not None
        return Alert(
            event_type=EventType(document["event_type"]),
            event_id=str(document["event_id"]),
            occurred_at=occurred_at,
            organization=str(document["organization"]),
            notices=tuple(_notice(item) for item in document["notices"]),
            incidents_link=str(document["incidents_link"]),
        )
    except (KeyError, TypeError, ValueError, AssertionError) as exc:
        raise StoredAlertUnreadable(f"stored alert can't be read: {type(exc).__name__}") from None


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _moment(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("a time is a string")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("a stored time has its offset")
    return moment


def _notice_document(notice: Notice) -> dict[str, Any]:
    hc = notice.healthcheck
    incident = notice.incident
    cause = notice.cause
    tools = notice.tools
    return {
        "healthcheck": {"id": hc.id, "name": hc.name, "status": hc.status, "link": hc.link},
        "incident": None
        if incident is None
        else {
            "id": incident.id,
            "status": incident.status,
            "severity": incident.severity,
            "opened_at": _time(incident.opened_at),
            "acknowledged_at": _time(incident.acknowledged_at),
            "acknowledged_by": incident.acknowledged_by,
            "resolved_at": _time(incident.resolved_at),
            "resolution": incident.resolution,
            "duration_seconds": incident.duration_seconds,
        },
        "cause": None
        if cause is None
        else {
            "kind": cause.kind,
            "reason": cause.reason,
            "regions": [[r.region, r.kind, r.reason] for r in cause.regions],
            "missing_tools": list(cause.missing_tools),
            "since": _time(cause.since),
        },
        "tools": None
        if tools is None
        else {
            "removed": list(tools.removed),
            "gained_required_inputs": [[t.tool, list(t.inputs)] for t in tools.gained_required_inputs],
        },
        "acknowledge_link": notice.acknowledge_link,
        "event": None if notice.event is None else notice.event.value,
    }


def _notice(item: Mapping[str, Any]) -> Notice:
    hc = item["healthcheck"]
    incident = item["incident"]
    cause = item["cause"]
    tools = item["tools"]
    opened_at = None if incident is None else _moment(incident["opened_at"])
    duration = None if incident is None else incident["duration_seconds"]
    return Notice(
        healthcheck=HealthcheckRef(str(hc["id"]), str(hc["name"]), str(hc["status"]), str(hc["link"])),
        incident=None
        if incident is None or opened_at is None
        else IncidentInfo(
            id=str(incident["id"]),
            status=str(incident["status"]),
            severity=str(incident["severity"]),
            opened_at=opened_at,
            acknowledged_at=_moment(incident["acknowledged_at"]),
            acknowledged_by=str(incident["acknowledged_by"]),
            resolved_at=_moment(incident["resolved_at"]),
            resolution=str(incident["resolution"]),
            duration_seconds=None if duration is None else float(duration),
        ),
        cause=None
        if cause is None
        else Cause(
            kind=str(cause["kind"]),
            reason=str(cause["reason"]),
            regions=tuple(RegionFailure(str(r), str(k), str(why)) for r, k, why in cause["regions"]),
            missing_tools=tuple(str(tool) for tool in cause["missing_tools"]),
            since=_moment(cause["since"]),
        ),
        tools=None
        if tools is None
        else ToolsChange(
            removed=tuple(str(tool) for tool in tools["removed"]),
            gained_required_inputs=tuple(
                ToolInputs(str(tool), tuple(str(name) for name in inputs))
                for tool, inputs in tools["gained_required_inputs"]
            ),
        ),
        acknowledge_link=str(item["acknowledge_link"]),
        # Absent from documents stored before digests named each entry's event.
        event=None if item.get("event") is None else EventType(item["event"]),
    )
