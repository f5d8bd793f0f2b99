"""Turn an incident's events (and tool changes) into notifications and their deliveries.

Called inside the caller's transaction (the outbox consumer, acknowledge, the reminder sweep):
one Notifier per transaction caches the policies and channels it read.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from alerts.models import AlertPolicy, Channel, Delivery, Incident, IncidentEvent, Notification
from alerts.rules import STORM_WINDOW, NotificationKind, PolicyView, Severity, audience, is_storm
from monitors.models import Healthcheck

# How long a digest collects a storm before its deliveries go: the storm's first seconds are
# in one message, and a longer storm sends one digest per window.
DIGEST_WINDOW = timedelta(seconds=3)
STORM_KINDS = frozenset({NotificationKind.OPENED, NotificationKind.RESOLVED})


def storm_threshold() -> int:
    return int(settings.UPTIMY_ALERT_STORM_THRESHOLD)


class Notifier:
    """Create notifications and deliveries for one organization's events, within one transaction."""

    def __init__(self, *, now: datetime, threshold: int | None = None) -> None:
        self.now = now
        self.threshold = storm_threshold() if threshold is None else threshold
        self._policies: dict[tuple[int, int | None], PolicyView] = {}
        self._channels: dict[int, dict[int, str]] = {}

    def notify(
        self,
        kind: NotificationKind,
        *,
        organization_id: int,
        at: datetime,
        details: dict[str, Any],
        incident: Incident | None = None,
        event: IncidentEvent | None = None,
        healthcheck_id: int | None = None,
    ) -> Notification | None:
        """Record a notification of ``kind`` and deliver it to its audience (or a digest); None when nobody is to hear it."""
        channels = self.enabled_channels(organization_id)
        told = self.told(incident) if incident is not None else frozenset()
        chosen = audience(
            kind,
            policy=self.policy(organization_id, healthcheck_id),
            severity=Severity(incident.severity) if incident is not None else None,
            told=told,
            enabled=frozenset(channels),
            stateful=frozenset(i for i, k in channels.items() if k in Channel.STATEFUL_KINDS),
        )
        if not chosen:
            return None
        notification = Notification.objects.create(
            organization_id=organization_id,
            kind=kind.value,
            at=at,
            incident=incident,
            event=event,
            healthcheck_id=healthcheck_id,
            details=details,
            audience=sorted(chosen),
        )
        if kind in STORM_KINDS and self._storming(kind, organization_id, at):
            self._into_digest(notification, chosen)
        else:
            self._deliver(notification, chosen, incident_id=incident.pk if incident is not None else None)
        return notification

    def policy(self, organization_id: int, healthcheck_id: int | None) -> PolicyView:
        """Return the healthcheck's policy, else the organization's default, else every channel with the defaults."""
        key = (organization_id, healthcheck_id)
        if key not in self._policies:
            row = None
            if healthcheck_id is not None:
                row = AlertPolicy.objects.filter(healthcheck_id=healthcheck_id).first()
            if row is None:
                row = AlertPolicy.objects.filter(
                    organization_id=organization_id, healthcheck__isnull=True
                ).first()
            self._policies[key] = (
                PolicyView(channels=frozenset(self.enabled_channels(organization_id)))
                if row is None
                else policy_view(row)
            )
        return self._policies[key]

    def enabled_channels(self, organization_id: int) -> dict[int, str]:
        """Return the organization's enabled channels: id -> kind."""
        if organization_id not in self._channels:
            self._channels[organization_id] = dict(
                Channel.objects.filter(organization_id=organization_id, enabled=True).values_list(
                    "id", "kind"
                )
            )
        return self._channels[organization_id]

    def told(self, incident: Incident) -> frozenset[int]:
        """Return the channels the incident's notifications so far were for (digested ones included)."""
        told: set[int] = set()
        for ids in Notification.objects.filter(incident=incident).values_list("audience", flat=True):
            told.update(ids)
        return frozenset(told)

    def _storming(self, kind: NotificationKind, organization_id: int, at: datetime) -> bool:
        field = "opened_at" if kind is NotificationKind.OPENED else "resolved_at"
        count = Incident.objects.filter(
            organization_id=organization_id, **{f"{field}__gt": at - STORM_WINDOW, f"{field}__lte": at}
        ).count()
        return is_storm(count_in_window=count, threshold=self.threshold)

    def _into_digest(self, notification: Notification, chosen: frozenset[int]) -> None:
        """Add the notification to its organization's collecting digest of that kind, or start one."""
        digest = (
            Notification.objects.filter(
                organization_id=notification.organization_id,
                kind=NotificationKind.DIGEST.value,
                collect_until__gte=notification.at,
                details__of=notification.kind,
            )
            .order_by("-id")
            .first()
        )
        # A digest whose deliveries a sender already took is sealed: what it said is said.
        if (
            digest is not None
            and digest.deliveries.exclude(state=Delivery.State.PENDING, attempts=0).exists()
        ):
            digest = None
        if digest is None:
            digest = Notification.objects.create(
                organization_id=notification.organization_id,
                kind=NotificationKind.DIGEST.value,
                at=notification.at,
                details={"of": notification.kind},
                audience=[],
                collect_until=notification.at + DIGEST_WINDOW,
            )
        notification.digest = digest
        notification.save(update_fields=["digest"])
        new = chosen - set(digest.audience)
        if new:
            digest.audience = sorted({*digest.audience, *new})
            digest.save(update_fields=["audience"])
            assert digest.collect_until is not None
            _create_deliveries(
                digest,
                new,
                incident_id=None,
                sequence="digest",
                due=max(self.now, digest.collect_until),
                now=self.now,
            )

    def _deliver(
        self, notification: Notification, chosen: frozenset[int], *, incident_id: int | None
    ) -> None:
        _create_deliveries(
            notification, chosen, incident_id=incident_id, sequence="", due=self.now, now=self.now
        )


def _create_deliveries(
    notification: Notification,
    channel_ids: frozenset[int] | set[int],
    *,
    incident_id: int | None,
    sequence: str,
    due: datetime,
    now: datetime,
) -> None:
    # The (notification, channel) constraint makes a second insert of the same pair nothing.
    Delivery.objects.bulk_create(
        [
            Delivery(
                notification=notification,
                channel_id=channel_id,
                incident_id=incident_id,
                sequence=sequence,
                next_attempt_at=due,
                created_at=now,
            )
            for channel_id in sorted(channel_ids)
        ],
        ignore_conflicts=True,
    )


def policy_view(row: AlertPolicy) -> PolicyView:
    """Return what the rules read of a stored policy (its enabled and disabled channels alike)."""
    return PolicyView(
        channels=frozenset(row.channels.values_list("id", flat=True)),
        notify_on_degraded=row.notify_on_degraded,
        notify_on_recovery=row.notify_on_recovery,
        notify_on_tool_changes=row.notify_on_tool_changes,
        escalation_channels=frozenset(row.escalation_channels.values_list("id", flat=True)),
    )


def incident_details(incident: Incident) -> dict[str, Any]:
    """Return what an alert about ``incident`` says, as plain JSON: frozen into its notification."""
    return {
        "incident": str(incident.public_id),
        "healthcheck": {"id": str(incident.healthcheck_public_id), "name": incident.healthcheck_name},
        "severity": incident.severity,
        "opened_at": incident.opened_at.isoformat(),
        "cause": {
            "kind": incident.cause_kind,
            "reason": incident.cause_reason,
            "regions": dict(incident.cause_regions),
            "missing_tools": list(incident.cause_missing_tools),
        },
    }


def healthcheck_details(healthcheck: Healthcheck) -> dict[str, Any]:
    return {"healthcheck": {"id": str(healthcheck.public_id), "name": healthcheck.name}}
