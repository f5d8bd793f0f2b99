"""Add, change and remove a page's components and component groups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from monitors.errors import ServiceError
from monitors.models import Healthcheck
from statuspages.cache import page_changed
from statuspages.models import Component, ComponentGroup, ComponentStatus, StatusPage, badge_token
from statuspages.services.audit import audited, component_snapshot, group_snapshot

COMPONENT_FIELDS = (
    "display_name",
    "description",
    "position",
    "only_show_when_not_operational",
    "show_mcp_details",
    # The status its owner sets by hand ("" clears it); the page shows the worse of it and the measured one.
    "declared_status",
)


def _healthcheck(page: StatusPage, public_id: Any) -> Healthcheck:
    # One answer for "no such check" and "another organization's check": existence never leaks.
    found = Healthcheck.objects.filter(organization_id=page.organization_id, public_id=public_id).first()
    if found is None:
        raise ServiceError("healthcheck", "No healthcheck with this id in your organization.")
    return found


def _group(page: StatusPage, public_id: Any) -> ComponentGroup | None:
    if public_id is None:
        return None
    found = ComponentGroup.objects.filter(page=page, public_id=public_id).first()
    if found is None:
        raise ServiceError("group", "No group with this id on this page.")
    return found


def _apply(component: Component, page: StatusPage, changes: Mapping[str, Any]) -> None:
    declared = changes.get("declared_status") or ""
    if declared and declared not in ComponentStatus.values:
        raise ServiceError(
            "declared_status",
            f"{declared!r} is not a component status: use one of {', '.join(ComponentStatus.values)}, "
            'or "" to clear it.',
        )
    for field in COMPONENT_FIELDS:
        if field in changes:
            setattr(component, field, changes[field])
    if "healthcheck" in changes:
        component.healthcheck = _healthcheck(page, changes["healthcheck"])
    if "group" in changes:
        component.group = _group(page, changes["group"])


@transaction.atomic
def component_create(*, page: StatusPage, changes: Mapping[str, Any]) -> Component:
    """Put a healthcheck of the page's organization on the page; its name defaults to the check's."""
    component = Component(page=page)
    _apply(component, page, changes)
    if not component.display_name:
        component.display_name = component.healthcheck.name
    component.save()
    _audit_component(component, "component.created", after=component_snapshot(component))
    page_changed(page.pk)
    return component


@transaction.atomic
def component_update(*, component: Component, changes: Mapping[str, Any]) -> Component:
    before = component_snapshot(component)
    _apply(component, component.page, changes)
    component.save()
    _audit_component(component, "component.updated", before=before, after=component_snapshot(component))
    page_changed(component.page_id)
    return component


@transaction.atomic
def component_delete(*, component: Component) -> None:
    page_changed(component.page_id)
    _audit_component(component, "component.deleted", before=component_snapshot(component))
    component.delete()


@transaction.atomic
def component_rotate_badge_token(*, component: Component) -> Component:
    """Give the component a fresh badge token; its badge URLs with the old one stop answering at once."""
    component.badge_token = badge_token()
    component.save(update_fields=["badge_token", "updated_at"])
    # Neither token is logged: that it was replaced is the change.
    _audit_component(component, "component.badge_token_rotated", after={"replaced": ["badge_token"]})
    page_changed(component.page_id)  # forgets the badges kept under the old token
    return component


def _audit_component(component: Component, action: str, **sides: Any) -> None:
    audited(component.page.organization_id, action, target=component, name=component.display_name, **sides)


def _audit_group(group: ComponentGroup, action: str, **sides: Any) -> None:
    audited(group.page.organization_id, action, target=group, name=group.name, **sides)


@transaction.atomic
def group_create(*, page: StatusPage, name: str, position: int = 0) -> ComponentGroup:
    group = ComponentGroup.objects.create(page=page, name=name, position=position)
    _audit_group(group, "component_group.created", after=group_snapshot(group))
    page_changed(page.pk)
    return group


@transaction.atomic
def group_update(*, group: ComponentGroup, changes: Mapping[str, Any]) -> ComponentGroup:
    before = group_snapshot(group)
    for field in ("name", "position"):
        if field in changes:
            setattr(group, field, changes[field])
    group.save()
    _audit_group(group, "component_group.updated", before=before, after=group_snapshot(group))
    page_changed(group.page_id)
    return group


@transaction.atomic
def group_delete(*, group: ComponentGroup) -> None:
    """Remove the group; its components stay on the page, ungrouped."""
    page_changed(group.page_id)
    _audit_group(group, "component_group.deleted", before=group_snapshot(group))
    group.delete()
