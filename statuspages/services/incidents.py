"""Publish incidents on a page and add their updates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.db import transaction

from monitors.errors import ServiceError
from statuspages.cache import page_changed
from statuspages.models import (
    AffectedComponent,
    Component,
    ComponentStatus,
    IncidentUpdate,
    Notice,
    PublishedIncident,
    StatusPage,
)
from statuspages.selectors import shown_statuses
from statuspages.services.audit import audited, incident_snapshot, incident_update_snapshot
from statuspages.services.notices import incident_notice

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
    """Publish an incident with its first update (``body``), at ``now``; ``draft`` keeps it for the owners only.

    A published one is told to the page's subscribers (``incident.created``).
    """
    draft = bool(changes.get("draft", False))
    incident = PublishedIncident(
        page=page,
        title=changes["title"],
        impact=changes.get("impact", PublishedIncident.Impact.MINOR),
        created_at=now,
        updated_at=now,
        draft=draft,
        published_at=None if draft else now,
    )
    _set_status(incident, changes.get("status", Status.INVESTIGATING), now)
    incident.save()
    if "components" in changes:
        incident.components.set(_components(page, changes["components"]))
    update = IncidentUpdate.objects.create(
        incident=incident, status=incident.status, body=body, created_at=now
    )
    incident_notice(
        incident=incident,
        kind=Notice.Kind.INCIDENT_CREATED,
        update=update,
        now=now,
        key=_created_key(incident),
    )
    _audit(incident, "incident.created", after={**incident_snapshot(incident), "body": body})
    page_changed(page.pk)
    return incident


def _audit(incident: PublishedIncident, action: str, **sides: Any) -> None:
    audited(incident.page.organization_id, action, target=incident, name=incident.title, **sides)


def _created_key(incident: PublishedIncident) -> str:
    return f"incident:{incident.public_id}:created"


@transaction.atomic
def incident_publish(*, incident: PublishedIncident, now: datetime) -> PublishedIncident:
    """Make a draft public (as it stands, with its updates) and tell the page's subscribers; a published one stays as is."""
    locked = PublishedIncident.with_drafts.select_for_update().get(pk=incident.pk)
    if not locked.draft:
        return locked
    _audit(locked, "incident.published", before={"draft": True}, after={"draft": False})
    locked.draft = False
    locked.published_at = now
    locked.updated_at = now
    locked.save()
    incident_notice(
        incident=locked,
        kind=Notice.Kind.INCIDENT_CREATED,
        update=locked.updates.order_by("-created_at", "-id").first(),
        now=now,
        key=_created_key(locked),
    )
    page_changed(locked.page_id)
    return locked


@transaction.atomic
def incident_update(
    *, incident: PublishedIncident, changes: Mapping[str, Any], now: datetime
) -> PublishedIncident:
    """Change the title, impact, status or affected components (a status change without an update's words).

    Resolving a published incident this way is told to its subscribers (without an update's words).
    """
    if "draft" in changes and bool(changes["draft"]) != incident.draft:
        raise ServiceError(
            "draft", "Publish a draft with its publish action; a published incident stays published."
        )
    before = incident_snapshot(incident)
    for field in ("title", "impact"):
        if field in changes:
            setattr(incident, field, changes[field])
    resolving = False
    if "status" in changes and changes["status"] != incident.status:
        _set_status(incident, changes["status"], now)
        resolving = incident.status == Status.RESOLVED
    if "components" in changes:
        incident.components.set(_components(incident.page, changes["components"]))
    incident.updated_at = now
    incident.save()
    action = "incident.resolved" if resolving else "incident.updated"
    _audit(incident, action, before=before, after=incident_snapshot(incident))
    if resolving:
        incident_notice(
            incident=incident,
            kind=Notice.Kind.INCIDENT_RESOLVED,
            update=None,
            now=now,
            key=f"incident:{incident.public_id}:resolved:{now.isoformat()}",
        )
    page_changed(incident.page_id)
    return incident


def _declared_components(page: StatusPage, statuses: Mapping[Any, str]) -> list[tuple[Component, str]]:
    """Return each component named in ``statuses`` (public id → status) with its status, or refuse naming the field."""
    allowed = set(ComponentStatus.values)
    for public_id, status in statuses.items():
        if status not in allowed:
            raise ServiceError(
                "components",
                f"{status!r} is not a component status (for {public_id}): use one of {', '.join(ComponentStatus.values)}.",
            )
    found = {component.public_id: component for component in _components(page, statuses)}
    return [(found[public_id], status) for public_id, status in statuses.items()]


@transaction.atomic
def incident_update_add(
    *,
    incident: PublishedIncident,
    status: str,
    body: str,
    now: datetime,
    components: Mapping[Any, str] | None = None,
) -> IncidentUpdate:
    """Add an update; the incident takes its status (``resolved`` resolves it). Subscribers hear of it unless it is a draft.

    ``components`` (a component's public id → its status) declares the status of each named
    component of the page from this update on, while the incident is open; each is recorded with
    the status the page showed before (Statuspage's ``affected_components``) and becomes one of
    the incident's components.
    """
    locked = PublishedIncident.with_drafts.select_for_update().get(pk=incident.pk)
    previous = locked.status
    declared = _declared_components(locked.page, components or {})
    # Read before this update counts: what the page showed until now.
    before = shown_statuses(page=locked.page, component_ids=[c.id for c, _ in declared], now=now)
    _set_status(locked, status, now)
    locked.updated_at = now
    locked.save()
    page_changed(locked.page_id)
    update = IncidentUpdate.objects.create(incident=locked, status=status, body=body, created_at=now)
    if declared:
        AffectedComponent.objects.bulk_create(
            AffectedComponent(
                update=update,
                component=component,
                old_status=before.get(component.id, ComponentStatus.OPERATIONAL),
                new_status=new_status,
            )
            for component, new_status in declared
        )
        locked.components.add(*(component for component, _ in declared))
    _audit_update(locked, update, previous=previous)
    kind = Notice.Kind.INCIDENT_RESOLVED if status == Status.RESOLVED else Notice.Kind.INCIDENT_UPDATED
    incident_notice(incident=locked, kind=kind, update=update, now=now, key=f"update:{update.public_id}")
    return update


def _audit_update(incident: PublishedIncident, update: IncidentUpdate, *, previous: str) -> None:
    """Record an added update; one that resolves the incident is logged as its resolution, with the words."""
    if update.status == Status.RESOLVED and previous != Status.RESOLVED:
        _audit(
            incident,
            "incident.resolved",
            before={"status": previous, "update": None},
            after={"status": Status.RESOLVED, "update": incident_update_snapshot(update)},
        )
        return
    audited(
        incident.page.organization_id,
        "incident_update.created",
        target=update,
        name=incident.title,
        after=incident_update_snapshot(update),
    )


@transaction.atomic
def incident_delete(*, incident: PublishedIncident) -> None:
    page_changed(incident.page_id)
    _audit(incident, "incident.deleted", before=incident_snapshot(incident))
    incident.delete()


@transaction.atomic
def incident_update_delete(*, update: IncidentUpdate) -> None:
    page_changed(update.incident.page_id)
    audited(
        update.incident.page.organization_id,
        "incident_update.deleted",
        target=update,
        name=update.incident.title,
        before=incident_update_snapshot(update),
    )
    update.delete()
