"""Shape a page's public JSON exactly as Atlassian Statuspage's ``/api/v2`` does.

Bots, dashboards and status aggregators already parse Statuspage's answers, so each endpoint
here has its field names, nesting and value kinds: ``summary.json``, ``status.json``,
``components.json``, ``incidents.json``, ``incidents/unresolved.json`` and
``scheduled-maintenances.json`` (with ``upcoming`` and ``active``). Every list is present
even when empty, every id is a string, every ``null`` Statuspage sends is sent, and every time
is ISO 8601 with milliseconds in the page's time zone (``2026-03-29T03:00:00.000+02:00``;
``Z`` for a page kept in UTC, as Statuspage writes it).

The selectors fill the frozen dataclasses below; the functions return plain dicts for the
views to serialise with :func:`statuspages.render.etag.json_body`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from statuspages.render.vocabulary import ComponentStatus, Impact, PageStatus

# The most incidents incidents.json lists, newest first (Statuspage lists the last 50).
INCIDENTS_LIMIT = 50


class IncidentStatus(StrEnum):
    """Name a published incident's (or scheduled maintenance's) status, as Statuspage does."""

    INVESTIGATING = "investigating"
    IDENTIFIED = "identified"
    MONITORING = "monitoring"
    RESOLVED = "resolved"
    POSTMORTEM = "postmortem"
    SCHEDULED = "scheduled"
    IN_PROGRESS = "in_progress"
    VERIFYING = "verifying"
    COMPLETED = "completed"


UNRESOLVED = frozenset({IncidentStatus.INVESTIGATING, IncidentStatus.IDENTIFIED, IncidentStatus.MONITORING})
UPCOMING = frozenset({IncidentStatus.SCHEDULED})
ACTIVE = frozenset({IncidentStatus.IN_PROGRESS, IncidentStatus.VERIFYING})


@dataclass(frozen=True)
class Page:
    """Hold the page's header: its public id, name, URL, IANA time zone and last change."""

    id: str
    name: str
    url: str
    time_zone: str
    updated_at: datetime


@dataclass(frozen=True)
class Component:
    """Hold a component (or a group of them: ``group=True`` and its members' ids in ``components``)."""

    id: str
    name: str
    status: ComponentStatus
    created_at: datetime
    updated_at: datetime
    position: int
    description: str | None = None
    showcase: bool = True
    start_date: date | None = None
    group_id: str | None = None
    group: bool = False
    only_show_if_degraded: bool = False
    components: tuple[str, ...] = ()


@dataclass(frozen=True)
class AffectedComponent:
    """Hold one component's change of status that an incident update announced."""

    code: str
    name: str
    old_status: ComponentStatus
    new_status: ComponentStatus


@dataclass(frozen=True)
class IncidentUpdate:
    """Hold one update of a published incident: its status then and its text."""

    id: str
    status: IncidentStatus
    body: str
    created_at: datetime
    updated_at: datetime
    display_at: datetime
    affected_components: tuple[AffectedComponent, ...] | None = None
    deliver_notifications: bool = True


@dataclass(frozen=True)
class Incident:
    """Hold a published incident, or a scheduled maintenance when ``scheduled_for`` is set."""

    id: str
    name: str
    status: IncidentStatus
    impact: Impact
    created_at: datetime
    updated_at: datetime
    started_at: datetime
    shortlink: str
    monitoring_at: datetime | None = None
    resolved_at: datetime | None = None
    updates: tuple[IncidentUpdate, ...] = ()
    components: tuple[Component, ...] = ()
    scheduled_for: datetime | None = None
    scheduled_until: datetime | None = None

    @property
    def is_maintenance(self) -> bool:
        """Return whether this is a scheduled maintenance rather than an incident."""
        return self.scheduled_for is not None


@dataclass(frozen=True)
class PageContent:
    """Hold everything one page's endpoints answer from."""

    page: Page
    status: PageStatus
    components: tuple[Component, ...] = ()
    incidents: tuple[Incident, ...] = ()
    maintenances: tuple[Incident, ...] = ()


def iso_time(moment: datetime | None, time_zone: str) -> str | None:
    """Return ``moment`` as Statuspage writes times: milliseconds and the page's offset, ``Z`` in UTC."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        raise ValueError("times must be aware datetimes")
    local = moment.astimezone(ZoneInfo(time_zone))
    text = local.isoformat(timespec="milliseconds")
    # Rails (Statuspage) writes "Z" only for a zone that is UTC itself, "+00:00" for London in winter.
    if local.tzname() in ("UTC", "UCT"):
        return text.removesuffix("+00:00") + "Z"
    return text


def _page(page: Page) -> dict[str, Any]:
    return {
        "id": page.id,
        "name": page.name,
        "url": page.url,
        "time_zone": page.time_zone,
        "updated_at": iso_time(page.updated_at, page.time_zone),
    }


def _component(component: Component, page: Page) -> dict[str, Any]:
    shape: dict[str, Any] = {
        "id": component.id,
        "name": component.name,
        "status": component.status.value,
        "created_at": iso_time(component.created_at, page.time_zone),
        "updated_at": iso_time(component.updated_at, page.time_zone),
        "position": component.position,
        "description": component.description,
        "showcase": component.showcase,
        "start_date": component.start_date.isoformat() if component.start_date else None,
        "group_id": component.group_id,
        "page_id": page.id,
        "group": component.group,
        "only_show_if_degraded": component.only_show_if_degraded,
    }
    if component.group:
        shape["components"] = list(component.components)
    return shape


def _update(update: IncidentUpdate, incident_id: str, page: Page) -> dict[str, Any]:
    affected = (
        None
        if update.affected_components is None
        else [
            {
                "code": change.code,
                "name": change.name,
                "old_status": change.old_status.value,
                "new_status": change.new_status.value,
            }
            for change in update.affected_components
        ]
    )
    return {
        "id": update.id,
        "status": update.status.value,
        "body": update.body,
        "incident_id": incident_id,
        "created_at": iso_time(update.created_at, page.time_zone),
        "updated_at": iso_time(update.updated_at, page.time_zone),
        "display_at": iso_time(update.display_at, page.time_zone),
        "affected_components": affected,
        "deliver_notifications": update.deliver_notifications,
        "custom_tweet": None,
        "tweet_id": None,
    }


def _incident(incident: Incident, page: Page) -> dict[str, Any]:
    zone = page.time_zone
    updates = sorted(incident.updates, key=lambda u: (u.display_at, u.created_at, u.id), reverse=True)
    shape: dict[str, Any] = {
        "id": incident.id,
        "name": incident.name,
        "status": incident.status.value,
        "created_at": iso_time(incident.created_at, zone),
        "updated_at": iso_time(incident.updated_at, zone),
        "monitoring_at": iso_time(incident.monitoring_at, zone),
        "resolved_at": iso_time(incident.resolved_at, zone),
        "impact": incident.impact.value,
        "shortlink": incident.shortlink,
        "started_at": iso_time(incident.started_at, zone),
        "page_id": page.id,
        "incident_updates": [_update(update, incident.id, page) for update in updates],
        "components": [_component(component, page) for component in incident.components],
    }
    if incident.is_maintenance:
        shape["scheduled_for"] = iso_time(incident.scheduled_for, zone)
        shape["scheduled_until"] = iso_time(incident.scheduled_until, zone)
    return shape


def _newest_first(incidents: Iterable[Incident]) -> list[Incident]:
    return sorted(incidents, key=lambda i: (i.created_at, i.id), reverse=True)


def _by_position(components: Sequence[Component]) -> list[Component]:
    return sorted(components, key=lambda c: (c.position, c.name, c.id))


def _schedule_order(maintenances: Iterable[Incident]) -> list[Incident]:
    # Soonest first, as a reader plans around the next one; newest first among equals.
    return sorted(
        maintenances, key=lambda m: (m.scheduled_for or m.created_at, -m.created_at.timestamp(), m.id)
    )


def unresolved(incidents: Iterable[Incident]) -> list[Incident]:
    """Return the incidents not yet resolved, newest first."""
    return _newest_first(i for i in incidents if i.status in UNRESOLVED)


def upcoming(maintenances: Iterable[Incident]) -> list[Incident]:
    """Return the scheduled maintenances that have not started."""
    return _schedule_order(m for m in maintenances if m.status in UPCOMING)


def active(maintenances: Iterable[Incident]) -> list[Incident]:
    """Return the scheduled maintenances in progress or being verified."""
    return _schedule_order(m for m in maintenances if m.status in ACTIVE)


def status_json(content: PageContent) -> dict[str, Any]:
    """Return ``status.json``: the page and its indicator."""
    return {
        "page": _page(content.page),
        "status": {"indicator": content.status.indicator.value, "description": content.status.description},
    }


def components_json(content: PageContent) -> dict[str, Any]:
    """Return ``components.json``: every component and group, by position."""
    return {
        "page": _page(content.page),
        "components": [_component(c, content.page) for c in _by_position(content.components)],
    }


def incidents_json(content: PageContent) -> dict[str, Any]:
    """Return ``incidents.json``: the last :data:`INCIDENTS_LIMIT` incidents, newest first."""
    latest = _newest_first(content.incidents)[:INCIDENTS_LIMIT]
    return {"page": _page(content.page), "incidents": [_incident(i, content.page) for i in latest]}


def unresolved_incidents_json(content: PageContent) -> dict[str, Any]:
    """Return ``incidents/unresolved.json``: the incidents still open, newest first."""
    return {
        "page": _page(content.page),
        "incidents": [_incident(i, content.page) for i in unresolved(content.incidents)],
    }


def scheduled_maintenances_json(content: PageContent) -> dict[str, Any]:
    """Return ``scheduled-maintenances.json``: the last scheduled maintenances of any status, latest scheduled first."""
    latest = sorted(
        content.maintenances, key=lambda m: (m.scheduled_for or m.created_at, m.id), reverse=True
    )[:INCIDENTS_LIMIT]
    return {
        "page": _page(content.page),
        "scheduled_maintenances": [_incident(m, content.page) for m in latest],
    }


def upcoming_maintenances_json(content: PageContent) -> dict[str, Any]:
    """Return ``scheduled-maintenances/upcoming.json``: those not started yet, soonest first."""
    return {
        "page": _page(content.page),
        "scheduled_maintenances": [_incident(m, content.page) for m in upcoming(content.maintenances)],
    }


def active_maintenances_json(content: PageContent) -> dict[str, Any]:
    """Return ``scheduled-maintenances/active.json``: those in progress or verifying."""
    return {
        "page": _page(content.page),
        "scheduled_maintenances": [_incident(m, content.page) for m in active(content.maintenances)],
    }


def summary_json(content: PageContent) -> dict[str, Any]:
    """Return ``summary.json``: components, unresolved incidents, upcoming and active maintenances, status."""
    page = content.page
    ongoing = active(content.maintenances) + upcoming(content.maintenances)
    return {
        "page": _page(page),
        "components": [_component(c, page) for c in _by_position(content.components)],
        "incidents": [_incident(i, page) for i in unresolved(content.incidents)],
        "scheduled_maintenances": [_incident(m, page) for m in ongoing],
        "status": {"indicator": content.status.indicator.value, "description": content.status.description},
    }
