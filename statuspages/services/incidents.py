"""Publish incidents on a page and add their updates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.db import transaction

from monitors.errors import ServiceError
from statuspages.cache import page_changed
from statuspages.models import Component, IncidentUpdate, PublishedIncident, StatusPage

Status = PublishedIncident.Status


def _components(page: StatusPage, public_ids: Iterable[Any]) -> list[Component]:
    wanted = set(public_ids)
    found = list(Component.objects.filter(page=page, public_id__in=wanted))
    if len(found) != len(wanted):
        raise ServiceError("components", "Every affected component must be a component of this page.")
    return found


def _set_status(incident: PublishedIncident, status: str, now: datetime) -> None:
    incident.status = status
    if status == Status.MONITORING and incident.monitoring_at is None:
        incident.monitoring_at = now
    # Resolved is when it was last said to be resolved; reopening clears it.
    incident.resolved_at = now if status == Status.RESOLVED else None


@transaction.atomic
def incident_create(
    *, page: StatusPage, changes: Mapping[str, Any], body: str, now: datetime
) -> PublishedIncident:
    """Publish an incident with its first update (``body``), at ``now``."""
    incident = PublishedIncident(
        page=page,
        title=changes["title"],
        impact=changes.get("impact", PublishedIncident.Impact.MINOR),
        created_at=now,
        updated_at=now,
    )
    _set_status(incident, changes.get("status", Status.INVESTIGATING), now)
    incident.save()
    if "components" in changes:
        incident.components.set(_components(page, changes["components"]))
    IncidentUpdate.objects.create(incident=incident, status=incident.status, body=body, created_at=now)
    page_changed(page.pk)
    return incident


@transaction.atomic
def incident_update(
    *, incident: PublishedIncident, changes: Mapping[str, Any], now: datetime
) -> PublishedIncident:
    """Change the title, impact, status or affected components (a status change without an update's words)."""
    for field in ("title", "impact"):
        if field in changes:
            setattr(incident, field, changes[field])
    if "status" in changes and changes["status"] != incident.status:
        _set_status(incident, changes["status"], now)
    if "components" in changes:
        incident.components.set(_components(incident.page, changes["components"]))
    incident.updated_at = now
    incident.save()
    page_changed(incident.page_id)
    return incident


@transaction.atomic
def incident_update_add(
    *, incident: PublishedIncident, status: str, body: str, now: datetime
) -> IncidentUpdate:
    """Add an update; the incident takes its status (``resolved`` resolves it)."""
    locked = PublishedIncident.objects.select_for_update().get(pk=incident.pk)
    _set_status(locked, status, now)
    locked.updated_at = now
    locked.save()
    page_changed(locked.page_id)
    return IncidentUpdate.objects.create(incident=locked, status=status, body=body, created_at=now)


def incident_delete(*, incident: PublishedIncident) -> None:
    page_changed(incident.page_id)
    incident.delete()


def incident_update_delete(*, update: IncidentUpdate) -> None:
    page_changed(update.incident.page_id)
    update.delete()
