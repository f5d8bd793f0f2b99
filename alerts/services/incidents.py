"""Acknowledge, resolve and remind: the writes on incidents that are not the outbox's."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q

from alerts.models import AlertPolicy, Incident, IncidentEvent
from alerts.rules import MAX_REMINDERS, EventKind, NotificationKind, Resolution, Severity, severity_of
from alerts.services.notifications import Notifier, incident_details
from monitors.errors import ServiceError
from monitors.models import ApiKey, Healthcheck, RegionState, StatusChange
from monitors.selectors import maintenance_active
from probes.types import Status


class IncidentResolved(ServiceError):
    """Refuse to acknowledge an incident that is already over."""


def incident_acknowledge(
    *, incident: Incident, by: str, now: datetime, api_key: ApiKey | None = None
) -> Incident:
    """Acknowledge an open incident once (again: no change); tell the channels that heard of it."""
    with transaction.atomic():
        locked = Incident.objects.select_for_update().get(pk=incident.pk)
        if locked.acknowledged_at is not None:
            return locked
        if locked.resolved_at is not None:
            raise IncidentResolved("incident", "This incident is resolved; there is nothing to acknowledge.")
        locked.acknowledged_at = now
        locked.acknowledged_by = by[:200]
        locked.acknowledged_by_key = api_key
        locked.save(update_fields=["acknowledged_at", "acknowledged_by", "acknowledged_by_key"])
        incident_event_add(
            Notifier(now=now),
            locked,
            EventKind.ACKNOWLEDGED,
            now,
            NotificationKind.ACKNOWLEDGED,
            {"by": by[:200]},
        )
    return locked


def incident_resolve(
    *, incident: Incident, resolution: Resolution, at: datetime, notifier: Notifier, details: dict[str, Any]
) -> None:
    """Close a locked open incident with ``resolution`` and tell the channels that heard of it (caller's transaction)."""
    incident.resolved_at = at
    incident.resolution = resolution.value
    incident.save(update_fields=["resolved_at", "resolution"])
    duration = (at - incident.opened_at).total_seconds()
    incident_event_add(
        notifier,
        incident,
        EventKind.RESOLVED,
        at,
        NotificationKind.RESOLVED,
        {**details, "resolution": resolution.value, "duration_seconds": duration},
    )


def close_orphaned(*, notifier: Notifier, now: datetime) -> int:
    """Resolve (deleted) the open incidents whose healthcheck was deleted (caller's transaction).

    Deleting a healthcheck deletes its outbox rows with it, and sets the incident's healthcheck
    to null (on_delete=SET_NULL): that is how alerts learns of it, with no record in monitors.
    """
    orphans = list(
        Incident.objects.select_for_update().filter(healthcheck__isnull=True, resolved_at__isnull=True)
    )
    for incident in orphans:
        incident_resolve(
            incident=incident, resolution=Resolution.DELETED, at=now, notifier=notifier, details={}
        )
    return len(orphans)


def incidents_remind(*, now: datetime) -> int:
    """Send due reminders for unacknowledged critical incidents, and escalate those unacknowledged too long.

    Both per the healthcheck's policy (else the organization's default); at most MAX_REMINDERS
    reminders per incident. Return how many notifications were made.
    """
    made = 0
    policies = AlertPolicy.objects.filter(
        Q(reminder_minutes__isnull=False) | Q(escalation_minutes__isnull=False)
    )
    with transaction.atomic():
        notifier = Notifier(now=now)
        # Only organizations with a policy that reminds or escalates: the others' open incidents
        # (a storm's thousand) are not read every time.
        candidates = Incident.objects.select_for_update(skip_locked=True).filter(
            resolved_at__isnull=True,
            acknowledged_at__isnull=True,
            organization_id__in=policies.values("organization_id"),
        )
        found: dict[tuple[int, int | None], AlertPolicy | None] = {}
        for incident in candidates:
            key = (incident.organization_id, incident.healthcheck_id)
            if key not in found:
                found[key] = _policy_row(incident)
            policy = found[key]
            if policy is None:
                continue
            if (
                policy.reminder_minutes
                and incident.severity == Severity.CRITICAL
                and incident.reminders_sent < MAX_REMINDERS
                and (incident.last_reminded_at or incident.opened_at)
                + timedelta(minutes=policy.reminder_minutes)
                <= now
            ):
                Incident.objects.filter(pk=incident.pk).update(
                    reminders_sent=F("reminders_sent") + 1, last_reminded_at=now
                )
                incident.reminders_sent += 1
                _refresh_cause_reason(incident)
                incident_event_add(
                    notifier,
                    incident,
                    EventKind.REMINDER,
                    now,
                    NotificationKind.REMINDER,
                    {"reminder": incident.reminders_sent},
                )
                made += 1
            if (
                policy.escalation_minutes
                and incident.escalated_to_channels_at is None
                and incident.opened_at + timedelta(minutes=policy.escalation_minutes) <= now
            ):
                Incident.objects.filter(pk=incident.pk).update(escalated_to_channels_at=now)
                incident_event_add(
                    notifier,
                    incident,
                    EventKind.UNACKNOWLEDGED,
                    now,
                    NotificationKind.UNACKNOWLEDGED,
                    {"minutes": policy.escalation_minutes},
                )
                made += 1
    return made


def _refresh_cause_reason(incident: Incident) -> None:
    """Give the incident the check's sentence of now for the same cause, so a reminder is current.

    The recorder rewrites a cause's sentence every run without a cause change when only its
    words move ("Certificate expires in 3 days" becomes "in 2 days", "expired 1 day ago" becomes
    "2 days ago"); the incident kept the words of its opening. A cause of another kind is the
    outbox's cause change to apply, not a reminder's.
    """
    if incident.healthcheck_id is None:
        return
    current = (
        Healthcheck.objects.filter(pk=incident.healthcheck_id)
        .values_list("cause_kind", "cause_reason")
        .first()
    )
    if current is None:
        return
    kind, reason = current
    if kind != incident.cause_kind or not reason or reason == incident.cause_reason:
        return
    incident.cause_reason = reason
    Incident.objects.filter(pk=incident.pk).update(cause_reason=reason)


def _policy_row(incident: Incident) -> AlertPolicy | None:
    if incident.healthcheck_id is not None:
        row = AlertPolicy.objects.filter(healthcheck_id=incident.healthcheck_id).first()
        if row is not None:
            return row
    return AlertPolicy.objects.filter(
        organization_id=incident.organization_id, healthcheck__isnull=True
    ).first()


def incident_event_add(
    notifier: Notifier,
    incident: Incident,
    kind: EventKind,
    at: datetime,
    notification: NotificationKind | None,
    details: dict[str, Any],
) -> IncidentEvent:
    """Add an event to the incident's timeline and notify of it, unless ``notification`` is None (caller's transaction)."""
    event = IncidentEvent.objects.create(incident=incident, kind=kind.value, at=at, details=details)
    if notification is None:
        return event
    notifier.notify(
        notification,
        organization_id=incident.organization_id,
        at=at,
        details={**incident_details(incident), "event": kind.value, **details},
        incident=incident,
        event=event,
        healthcheck_id=incident.healthcheck_id,
    )
    return event


# A failing check's status change is the consumer's to turn into an incident (every tick); only
# one older than this, with no incident, is taken as missed: it failed in a maintenance window.
MISSED_AFTER = timedelta(minutes=1)
# Incidents one pass opens at most; the rest wait for the next pass.
MAX_OPENED_AT_ONCE = 500


def incidents_open_missing(*, now: datetime) -> int:
    """Open the incident of every failing check that has none and is not in maintenance; return how many.

    A failure inside a maintenance window opens no incident (alerts.services.outbox); a check
    still down or degraded once its window is over gets its incident here, with one alert, as
    if it had just failed. The pass also heals any other way a failing check was left without
    one. Should the consumer open the same check's incident at the same moment, the one-open
    constraint fails one of the two transactions, which its next run repeats.
    """
    opened = 0
    with transaction.atomic():
        candidates = list(
            Healthcheck.objects.select_for_update(skip_locked=True)
            .filter(
                status__in=[Status.DOWN, Status.DEGRADED],
                paused=False,
                status_changed_at__lt=now - MISSED_AFTER,
            )
            .exclude(Exists(Incident.objects.filter(healthcheck=OuterRef("pk"), resolved_at__isnull=True)))
            .order_by("id")[:MAX_OPENED_AT_ONCE]
        )
        if not candidates:
            return 0
        maintained = maintenance_active(healthcheck_ids=[check.pk for check in candidates], at=now)
        notifier = Notifier(now=now)
        for check in candidates:
            severity = severity_of(check.status)
            if check.pk in maintained or severity is None:
                continue
            summary = (
                StatusChange.objects.filter(healthcheck=check)
                .order_by("-at", "-id")
                .values_list("reason", flat=True)
                .first()
            )
            incident = Incident.objects.create(
                organization_id=check.organization_id,
                healthcheck=check,
                healthcheck_public_id=check.public_id,
                healthcheck_name=check.name,
                severity=severity.value,
                opened_at=now,
                cause_kind=check.cause_kind,
                cause_reason=check.cause_reason,
                cause_summary=summary or "",
                cause_regions=dict(check.cause_regions),
                cause_region_reasons=_region_reasons(check),
                cause_missing_tools=list(check.cause_missing_tools),
                cause_since=check.cause_since,
            )
            incident_event_add(
                notifier,
                incident,
                EventKind.OPENED,
                now,
                NotificationKind.OPENED,
                {
                    "to": check.status,
                    # Never null here: the query asked for a change older than MISSED_AFTER.
                    "failing_since": check.status_changed_at.isoformat() if check.status_changed_at else None,
                    "after_maintenance": True,
                },
            )
            opened += 1
    return opened


def _region_reasons(check: Healthcheck) -> dict[str, str]:
    """Return each failing region's sentence as its region state holds it now (the check is still failing)."""
    return dict(
        RegionState.objects.filter(healthcheck=check, region__slug__in=list(dict(check.cause_regions)))
        .exclude(reason="")
        .values_list("region__slug", "reason")
    )
