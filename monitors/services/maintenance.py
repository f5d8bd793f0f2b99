"""Create, change and delete maintenance windows; their timing rules are pure (monitors.maintenance)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.db import transaction

from monitors.errors import ServiceError
from monitors.maintenance import Schedule, ScheduleError, schedule_from, series_end
from monitors.models import Healthcheck, MaintenanceWindow, MaintenanceWindowTag, Organization
from monitors.services.audit import audit_record, maintenance_window_snapshot

# Each lookup reads an organization's live windows: a cap keeps that a bounded read.
MAX_WINDOWS_PER_ORGANIZATION = 1000
MAX_WINDOW_HEALTHCHECKS = 1000
MAX_WINDOW_TAGS = 20
SCHEDULE_FIELDS = ("starts_at", "ends_at", "duration", "rrule", "timezone")


def maintenance_window_create(
    *,
    organization: Organization,
    name: str,
    starts_at: datetime,
    ends_at: datetime | None = None,
    duration: timedelta | None = None,
    rrule: str = "",
    timezone: str = "UTC",
    description: str = "",
    healthchecks: Iterable[UUID] = (),
    tags: Iterable[str] = (),
) -> MaintenanceWindow:
    """Create a window for the organization's chosen healthchecks (by public id) and tags.

    A tag need not be on any healthcheck yet: the window applies to whatever carries it when a
    result is recorded. A healthcheck of another organization is "not found", as a missing one.
    """
    schedule = _schedule(
        starts_at=starts_at, ends_at=ends_at, duration=duration, rrule=rrule, timezone=timezone
    )
    targets = _healthchecks_of(organization, healthchecks)
    names = _tags(tags)
    _check_targets(targets, names)
    with transaction.atomic():
        # Lock the organization so two concurrent creates can't both pass the cap.
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        if (
            MaintenanceWindow.objects.filter(organization=organization).count()
            >= MAX_WINDOWS_PER_ORGANIZATION
        ):
            raise ServiceError(
                "non_field_errors",
                f"An organization has at most {MAX_WINDOWS_PER_ORGANIZATION} maintenance windows; delete past ones.",
            )
        window = MaintenanceWindow(organization=organization, name=name, description=description)
        _apply_schedule(window, schedule)
        window.save(force_insert=True)
        window.healthchecks.set(targets)
        MaintenanceWindowTag.objects.bulk_create(
            MaintenanceWindowTag(window=window, name=tag) for tag in names
        )
        _audit(window, "maintenance_window.created", after=maintenance_window_snapshot(window))
    return window


def maintenance_window_update(
    *, window: MaintenanceWindow, changes: Mapping[str, Any], partial: bool
) -> MaintenanceWindow:
    """Change a window; ``changes`` may hold name, description, the schedule fields, healthchecks, tags.

    A partial change of the schedule keeps what it does not name: moving ``starts_at`` keeps the
    length; giving ``ends_at`` sets the length of a one-off window.
    """
    if any(field in changes for field in SCHEDULE_FIELDS) or not partial:
        schedule = _schedule(
            starts_at=changes.get("starts_at", window.starts_at),
            ends_at=changes.get("ends_at"),
            duration=changes.get("duration", None if changes.get("ends_at") is not None else window.duration),
            rrule=changes.get("rrule", window.rrule if partial else ""),
            timezone=changes.get("timezone", window.timezone if partial else "UTC"),
        )
    else:
        schedule = None
    before = maintenance_window_snapshot(window)
    organization = window.organization
    targets = _healthchecks_of(organization, changes["healthchecks"]) if "healthchecks" in changes else None
    names = _tags(changes["tags"]) if "tags" in changes else None
    _check_targets(
        targets if targets is not None else list(window.healthchecks.all()),
        names if names is not None else sorted(window.tag_rows.values_list("name", flat=True)),
    )
    with transaction.atomic():
        for field in ("name", "description"):
            if field in changes:
                setattr(window, field, changes[field])
        if schedule is not None:
            _apply_schedule(window, schedule)
        window.save()
        if targets is not None:
            window.healthchecks.set(targets)
        if names is not None:
            window.tag_rows.exclude(name__in=names).delete()
            kept = set(window.tag_rows.values_list("name", flat=True))
            MaintenanceWindowTag.objects.bulk_create(
                MaintenanceWindowTag(window=window, name=tag) for tag in names if tag not in kept
            )
        _audit(window, "maintenance_window.updated", before=before, after=maintenance_window_snapshot(window))
    return window


def maintenance_window_delete(*, window: MaintenanceWindow) -> None:
    """Delete a window; results already flagged keep their flag (uptime stays as it was reported)."""
    with transaction.atomic():
        _audit(window, "maintenance_window.deleted", before=maintenance_window_snapshot(window))
        window.delete()


def _audit(
    window: MaintenanceWindow,
    action: str,
    *,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
) -> None:
    audit_record(
        organization=window.organization_id,
        action=action,
        target_type="maintenance_window",
        target_id=window.public_id,
        target_name=window.name,
        before=before,
        after=after,
    )


def _schedule(
    *, starts_at: datetime, ends_at: datetime | None, duration: timedelta | None, rrule: str, timezone: str
) -> Schedule:
    try:
        return schedule_from(
            starts_at=starts_at, ends_at=ends_at, duration=duration, rrule=rrule, timezone=timezone
        )
    except ScheduleError as error:
        raise ServiceError(error.field, error.message) from None


def _apply_schedule(window: MaintenanceWindow, schedule: Schedule) -> None:
    window.starts_at = schedule.starts_at
    window.duration = schedule.duration
    window.rrule = schedule.rrule
    window.timezone = schedule.timezone
    window.ends_at = series_end(schedule)


def _healthchecks_of(organization: Organization, public_ids: Iterable[UUID]) -> list[Healthcheck]:
    wanted = list(dict.fromkeys(public_ids))
    if len(wanted) > MAX_WINDOW_HEALTHCHECKS:
        raise ServiceError(
            "healthchecks", f"At most {MAX_WINDOW_HEALTHCHECKS} healthchecks; use a tag for more."
        )
    found = {
        hc.public_id: hc for hc in Healthcheck.objects.filter(organization=organization, public_id__in=wanted)
    }
    for public_id in wanted:
        if public_id not in found:
            # The same words whether it does not exist or belongs to another organization.
            raise ServiceError("healthchecks", f"Healthcheck {public_id} not found.")
    return [found[public_id] for public_id in wanted]


def _tags(tags: Iterable[str]) -> list[str]:
    names = sorted(set(tags))
    if len(names) > MAX_WINDOW_TAGS:
        raise ServiceError("tags", f"At most {MAX_WINDOW_TAGS} tags.")
    return names


def _check_targets(healthchecks: list[Healthcheck], tags: list[str]) -> None:
    if not healthchecks and not tags:
        raise ServiceError("healthchecks", "Choose at least one healthcheck or tag the window applies to.")
