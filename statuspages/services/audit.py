"""Say how a status page and what is on it enter the audit log: one snapshot per kind, one writer.

Each service calls :func:`audited` inside its transaction, after the change. A page's password
is never copied, nor its hash: the snapshot says whether there is one (``MASK``), and a password
replaced by another shows as ``"replaced": ["password"]``. Tokens (the domain's, a badge's, a
webhook subscriber's secret) are left out altogether.
"""

from __future__ import annotations

from typing import Any

from monitors.secrets import MASK
from monitors.services import audit_record
from monitors.timestamps import iso_or_none
from statuspages.models import (
    Component,
    ComponentGroup,
    IncidentUpdate,
    PublishedIncident,
    StatusPage,
    Subscriber,
)


def page_snapshot(page: StatusPage) -> dict[str, Any]:
    """Return a page as the audit log keeps it: whether it has a password, never the password or its hash."""
    return {
        "slug": page.slug,
        "title": page.title,
        "description": page.description,
        "logo_url": page.logo_url,
        "time_zone": page.time_zone,
        "access": page.access,
        "password": MASK if page.password_hash else None,
        "custom_domain": page.custom_domain,
        "domain_verified": page.domain_verified_at is not None,
        "draft_incidents": page.draft_incidents,
    }


def page_changed_sides(
    page: StatusPage, before: dict[str, Any], before_hash: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return an update's (before, after), saying a password was replaced when the hash changed but both sides have one."""
    after = page_snapshot(page)
    if before_hash and page.password_hash and before_hash != page.password_hash:
        after["replaced"] = ["password"]
    return before, after


def component_snapshot(component: Component) -> dict[str, Any]:
    """Return a component as the audit log keeps it (never its badge token)."""
    return {
        "page": component.page.slug,
        "display_name": component.display_name,
        "description": component.description,
        "healthcheck": str(component.healthcheck.public_id) if component.healthcheck_id else None,
        "group": str(component.group.public_id) if component.group_id and component.group else None,
        "position": component.position,
        "only_show_when_not_operational": component.only_show_when_not_operational,
        "show_mcp_details": component.show_mcp_details,
        "declared_status": component.declared_status,
    }


def group_snapshot(group: ComponentGroup) -> dict[str, Any]:
    """Return a component group as the audit log keeps it."""
    return {"page": group.page.slug, "name": group.name, "position": group.position}


def incident_snapshot(incident: PublishedIncident) -> dict[str, Any]:
    """Return a published (or draft) incident as the audit log keeps it."""
    return {
        "page": incident.page.slug,
        "title": incident.title,
        "impact": incident.impact,
        "status": incident.status,
        "draft": incident.draft,
        "components": sorted(str(c.public_id) for c in incident.components.all()) if incident.pk else [],
        "resolved_at": iso_or_none(incident.resolved_at),
    }


def incident_update_snapshot(update: IncidentUpdate) -> dict[str, Any]:
    """Return an incident's update (its words and the status it set) as the audit log keeps it."""
    return {
        "incident": str(update.incident.public_id),
        "status": update.status,
        "body": update.body,
        "components": {
            str(row.component.public_id): row.new_status
            for row in update.affected.select_related("component")
        },
    }


def subscriber_snapshot(subscriber: Subscriber) -> dict[str, Any]:
    """Return a subscriber as the audit log keeps it: its address or its masked URL, never the webhook's secret."""
    return {
        "page": subscriber.page.slug,
        "kind": subscriber.kind,
        "email": subscriber.email or None,
        "url": subscriber.url_shown or None,
        "all_components": subscriber.all_components,
    }


def subscriber_name(subscriber: Subscriber) -> str:
    """Return how the log names a subscriber: its address, or its URL as shown (masked)."""
    return subscriber.email or subscriber.url_shown


def audited(
    organization_id: int,
    action: str,
    *,
    target: Any,
    name: str,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    """Record one change of a page or of what is on it; call it in the change's transaction."""
    audit_record(
        organization=organization_id,
        action=action,
        target_type=action.split(".", 1)[0],
        target_id=target.public_id,
        target_name=name,
        before=before,
        after=after,
    )
