"""Turn an incident's events (and tool changes) into notifications and their deliveries.

Called inside the caller's transaction (the outbox consumer, acknowledge, the reminder sweep):
one Notifier per transaction caches the policies and channels it read.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from alerts.models import (
    DIGEST_SEQUENCE,
    AlertPolicy,
    Channel,
    Delivery,
    Incident,
    IncidentEvent,
    Notification,
)
from alerts.rules import (
    FIRST_WORD,
    STORM_WINDOW,
    EventKind,
    NotificationKind,
    PolicyView,
    Severity,
    audience,
    is_storm,
)
from monitors.models import Healthcheck

# How long a digest collects a storm before its deliveries go: the storm's first seconds are
# in one message, and a longer storm sends one digest per window.
DIGEST_WINDOW = timedelta(seconds=3)
# What the storm guard counts and digests: an organization's incidents opening, escalating and
# resolving, together (a storm of outages that come back within the minute is one storm).
STORM_KINDS = frozenset({NotificationKind.OPENED, NotificationKind.ESCALATED, NotificationKind.RESOLVED})


def storm_threshold() -> int:
    return int(settings.UPTIMY_ALERT_STORM_THRESHOLD)


class Notifier:
    """Create notifications and deliveries within one transaction, caching what it read.

    Policies, channels, the storm's recent incidents and the collecting digest are read once
    per organization and transaction: a storm's thousand rows cost a few queries each.

    In a storm, text channels (email, webhook, chat) get the digest; a stateful channel
    (PagerDuty, Channel.STATEFUL_KINDS) keeps getting each incident's own notification, so its
    incidents open and resolve on its side one by one, whatever the storm.
    """

    def __init__(self, *, now: datetime, threshold: int | None = None) -> None:
        self.now = now
        self.threshold = storm_threshold() if threshold is None else threshold
        self._check_policies: dict[int, PolicyView | None] = {}
        self._default_policies: dict[int, PolicyView] = {}
        self._channels: dict[int, dict[int, str]] = {}
        self._recent: dict[int, list[datetime]] = {}
        self._digests: dict[int, Notification] = {}

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
        # Counted whoever hears of it: the storm is the organization's, not a channel's.
        storming = kind in STORM_KINDS and self._storming(organization_id, at)
        channels = self.enabled_channels(organization_id)
        stateful = frozenset(i for i, k in channels.items() if k in Channel.STATEFUL_KINDS)
        told = self.told(incident) if incident is not None and kind not in FIRST_WORD else frozenset()
        chosen = audience(
            kind,
            policy=self.policy(organization_id, healthcheck_id),
            severity=Severity(incident.severity) if incident is not None else None,
            told=told,
            enabled=frozenset(channels),
            stateful=stateful,
        )
        if not chosen:
            return None
        # A stateful channel never gets a digest: one event per incident with its own action.
        own = chosen & stateful if storming else chosen
        digested = chosen - own
        digest = self._digest(organization_id, at, digested) if digested else None
        notification = Notification.objects.create(
            organization_id=organization_id,
            kind=kind.value,
            at=at,
            incident=incident,
            event=event,
            healthcheck_id=healthcheck_id,
            details=details,
            audience=sorted(chosen),
            digest=digest,
        )
        if own:
            incident_id = incident.pk if incident is not None else None
            _create_deliveries(
                notification, own, incident_id=incident_id, sequence="", due=self.now, now=self.now
            )
        return notification

    def policy(self, organization_id: int, healthcheck_id: int | None) -> PolicyView:
        """Return the healthcheck's policy, else the organization's default, else every channel with the defaults."""
        if healthcheck_id is not None:
            if healthcheck_id not in self._check_policies:
                self.preload_policies([healthcheck_id])
            own = self._check_policies[healthcheck_id]
            if own is not None:
                return own
        if organization_id not in self._default_policies:
            row = AlertPolicy.objects.filter(
                organization_id=organization_id, healthcheck__isnull=True
            ).first()
            self._default_policies[organization_id] = (
                PolicyView(channels=frozenset(self.enabled_channels(organization_id)))
                if row is None
                else policy_view(row)
            )
        return self._default_policies[organization_id]

    def preload_policies(self, healthcheck_ids: Iterable[int]) -> None:
        """Read the policies of these healthchecks in one query (None for those without one of their own)."""
        wanted = [hc_id for hc_id in healthcheck_ids if hc_id not in self._check_policies]
        self._check_policies.update(dict.fromkeys(wanted))
        rows = AlertPolicy.objects.filter(healthcheck_id__in=wanted).prefetch_related(
            "channels", "escalation_channels"
        )
        for row in rows:
            assert row.healthcheck_id is not None
            self._check_policies[row.healthcheck_id] = policy_view(row)

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

    def _storming(self, organization_id: int, at: datetime) -> bool:
        """Count the organization's incidents opened, escalated and resolved in the minute up to ``at``, this one included."""
        times = self._recent.get(organization_id)
        if times is None:
            # Read once per transaction (it holds the one being notified, saved already); kept after.
            since = at - STORM_WINDOW
            ours = Incident.objects.filter(organization_id=organization_id)
            opened = ours.filter(opened_at__gt=since, opened_at__lte=at).values_list("opened_at", flat=True)
            resolved = ours.filter(resolved_at__gt=since, resolved_at__lte=at).values_list(
                "resolved_at", flat=True
            )
            escalated = IncidentEvent.objects.filter(
                incident__organization_id=organization_id,
                kind=EventKind.ESCALATED.value,
                at__gt=since,
                at__lte=at,
            ).values_list("at", flat=True)
            found = [*opened, *(moment for moment in resolved if moment is not None), *escalated]
            times = self._recent[organization_id] = sorted(found)
        else:
            bisect.insort(times, at)
        count = len(times) - bisect.bisect_right(times, at - STORM_WINDOW)
        return is_storm(count_in_window=count, threshold=self.threshold)

    def _digest(self, organization_id: int, at: datetime, chosen: frozenset[int]) -> Notification:
        """Return the organization's digest collecting at ``at`` (started if none), delivering to ``chosen`` too.

        One digest per organization and window holds its openings, escalations and resolves alike:
        each member keeps its own kind, which the digest's words count and spell out.
        """
        digest = self._digests.get(organization_id)
        if digest is None or digest.collect_until is None or digest.collect_until < at:
            digest = self._open_digest(organization_id, at) or Notification.objects.create(
                organization_id=organization_id,
                kind=NotificationKind.DIGEST.value,
                at=at,
                details={},
                audience=[],
                collect_until=at + DIGEST_WINDOW,
            )
            self._digests[organization_id] = digest
        new = chosen - set(digest.audience)
        if new:
            digest.audience = sorted({*digest.audience, *new})
            digest.save(update_fields=["audience"])
            assert digest.collect_until is not None
            due = max(self.now, digest.collect_until)
            _create_deliveries(digest, new, incident_id=None, sequence=DIGEST_SEQUENCE, due=due, now=self.now)
        return digest

    def _open_digest(self, organization_id: int, at: datetime) -> Notification | None:
        """Return a digest an earlier transaction started that still collects at ``at`` and no sender took."""
        digest = (
            Notification.objects.filter(
                organization_id=organization_id,
                kind=NotificationKind.DIGEST.value,
                collect_until__gte=at,
            )
            .order_by("-id")
            .first()
        )
        if digest is None:
            return None
        # Locked until this transaction commits: a sender (SKIP LOCKED) can't take the digest
        # while members are still added to it.
        deliveries = list(Delivery.objects.select_for_update(skip_locked=True).filter(notification=digest))
        total = Delivery.objects.filter(notification=digest).count()
        # A digest whose deliveries a sender already took (or holds) is sealed: what it said is said.
        if len(deliveries) < total or any(
            d.state != Delivery.State.PENDING or d.attempts for d in deliveries
        ):
            return None
        return digest


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
        channels=frozenset(channel.pk for channel in row.channels.all()),
        notify_on_degraded=row.notify_on_degraded,
        notify_on_recovery=row.notify_on_recovery,
        notify_on_tool_changes=row.notify_on_tool_changes,
        escalation_channels=frozenset(channel.pk for channel in row.escalation_channels.all()),
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
            "summary": incident.cause_summary,
            "regions": dict(incident.cause_regions),
            "region_reasons": dict(incident.cause_region_reasons),
            "missing_tools": list(incident.cause_missing_tools),
            "since": (incident.cause_since or incident.opened_at).isoformat(),
        },
    }


def healthcheck_details(healthcheck: Healthcheck) -> dict[str, Any]:
    return {"healthcheck": {"id": str(healthcheck.public_id), "name": healthcheck.name}}
