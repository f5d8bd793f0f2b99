"""Incidents and their timeline, channels, alert policies, and the delivery ledger.

Every row is its organization's; the incident keeps its healthcheck's name and public id so it
outlives the healthcheck. The words (severities, resolutions, kinds) are defined once, in
``alerts.rules``.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models
from django.db.models import Q

from alerts.rules import EventKind, NotificationKind, Resolution, Severity
from monitors.models import ApiKey, Healthcheck, Organization
from monitors.secrets import decrypt_document, encrypt_document

# Delivery.sequence of a digest's deliveries: they go in order among themselves on a channel.
DIGEST_SEQUENCE = "digest"


def _choices(enum: type[Any]) -> list[tuple[str, str]]:
    return [(member.value, member.value) for member in enum]


class Incident(models.Model):
    """Say that a healthcheck is failing, since when, why, who acknowledged it and how it ended."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="incidents")
    # Kept when the healthcheck is deleted (null then), with its name and public id: the
    # incident is history, and its deletion closes it (alerts.services.incidents_close_orphaned).
    healthcheck = models.ForeignKey(
        Healthcheck, on_delete=models.SET_NULL, null=True, blank=True, related_name="incidents"
    )
    healthcheck_public_id = models.UUIDField()
    healthcheck_name = models.CharField(max_length=200)
    # Unguessable and stable: the id in URLs and PagerDuty's dedup_key.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    severity = models.CharField(max_length=16, choices=_choices(Severity))
    opened_at = models.DateTimeField()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.CharField(max_length=200, blank=True, default="")
    acknowledged_by_key = models.ForeignKey(
        ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=16, blank=True, default="", choices=_choices(Resolution))
    cause_kind = models.CharField(max_length=32, blank=True, default="")
    # The failure's own sentence ("Required tools missing: search_docs"), from the result that
    # made a region fail; the verdict's sentence ("Down in 2 of 3 regions …") is the summary.
    cause_reason = models.TextField(blank=True, default="")
    cause_summary = models.TextField(blank=True, default="")
    cause_regions = models.JSONField(default=dict, blank=True, help_text="region slug -> failure kind")
    cause_missing_tools = models.JSONField(default=list, blank=True)
    # When the cause began (the healthcheck's cause_since as the change that set it said) and each
    # failing region's own sentence: what the healthcheck API shows, carried to every alert.
    cause_since = models.DateTimeField(null=True, blank=True)
    cause_region_reasons = models.JSONField(
        default=dict, blank=True, help_text="region slug -> that region's failure sentence"
    )
    reminders_sent = models.PositiveSmallIntegerField(default=0)
    last_reminded_at = models.DateTimeField(null=True, blank=True)
    escalated_to_channels_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            # At most one open incident per healthcheck, whatever races: the outbox consumer
            # is one at a time, and this makes a second one a database error, not a double.
            models.UniqueConstraint(
                fields=["healthcheck"], condition=Q(resolved_at__isnull=True), name="incident_one_open"
            ),
        ]
        indexes = [
            models.Index(fields=["organization", "-opened_at"], name="incident_org_opened"),
            models.Index(fields=["organization", "-resolved_at"], name="incident_org_resolved"),
        ]

    def __str__(self) -> str:
        return f"{self.healthcheck_name} ({self.severity}) since {self.opened_at}"

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


class IncidentEvent(models.Model):
    """Record one moment of an incident's timeline: opened, escalated, acknowledged, resolved …"""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=24, choices=_choices(EventKind))
    at = models.DateTimeField()
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["incident", "at"], name="incident_event_at")]

    def __str__(self) -> str:
        return f"{self.incident_id}: {self.kind} at {self.at}"


class Channel(models.Model):
    """Name one place alerts go (an email address, a webhook, PagerDuty, a chat through Apprise)."""

    class Kind(models.TextChoices):
        EMAIL = "email"
        WEBHOOK = "webhook"
        PAGERDUTY = "pagerduty"
        APPRISE = "apprise"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="channels")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=128)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The whole config, encrypted (monitors.secrets): URLs carry tokens, keys are secrets.
    config_encrypted = models.TextField(editable=False)
    enabled = models.BooleanField(default=True)
    disabled_reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Channels that keep an incident open on their side until told it ended.
    STATEFUL_KINDS = frozenset({Kind.PAGERDUTY})

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="channel_name_unique")]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    @property
    def config(self) -> dict[str, Any]:
        """Return the decrypted config; raise monitors.secrets.SecretUnreadable when no key opens it."""
        document = decrypt_document(self.config_encrypted, what="channel config")
        assert isinstance(document, dict)
        return document

    @config.setter
    def config(self, value: dict[str, Any]) -> None:
        self.config_encrypted = encrypt_document(value)


class AlertPolicy(models.Model):
    """Choose who hears of a healthcheck's incidents; the row without a healthcheck is the organization's default."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="alert_policies")
    healthcheck = models.ForeignKey(
        Healthcheck, on_delete=models.CASCADE, null=True, blank=True, related_name="alert_policies"
    )
    channels = models.ManyToManyField(Channel, related_name="policies", blank=True)
    notify_on_degraded = models.BooleanField(default=True)
    notify_on_recovery = models.BooleanField(default=True)
    notify_on_tool_changes = models.BooleanField(default=True)
    # Off when null. At most rules.MAX_REMINDERS reminders per incident.
    reminder_minutes = models.PositiveIntegerField(null=True, blank=True)
    escalation_minutes = models.PositiveIntegerField(null=True, blank=True)
    escalation_channels = models.ManyToManyField(Channel, related_name="escalating_policies", blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["healthcheck"], condition=Q(healthcheck__isnull=False), name="policy_one_per_check"
            ),
            models.UniqueConstraint(
                fields=["organization"], condition=Q(healthcheck__isnull=True), name="policy_one_default"
            ),
            models.CheckConstraint(
                condition=Q(reminder_minutes__isnull=True) | Q(reminder_minutes__gte=1),
                name="policy_reminder",
            ),
            models.CheckConstraint(
                condition=Q(escalation_minutes__isnull=True) | Q(escalation_minutes__gte=1),
                name="policy_escalation",
            ),
        ]

    def __str__(self) -> str:
        return f"policy of {self.healthcheck_id or 'organization ' + str(self.organization_id)}"


class Notification(models.Model):
    """Hold one message to send (an incident's event, a tool change, a digest) and whom it is for.

    ``audience`` is the channel ids it was meant for, kept as decided. A notification taken
    into a digest (storm guard) has ``digest`` set; the digest's deliveries carry it to the text
    channels of its audience, and it has deliveries of its own only to the stateful ones
    (PagerDuty: ``Channel.STATEFUL_KINDS``), which hear of each incident by itself.
    """

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="notifications")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=32, choices=_choices(NotificationKind))
    at = models.DateTimeField()
    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, null=True, blank=True, related_name="notifications"
    )
    event = models.ForeignKey(
        IncidentEvent, on_delete=models.CASCADE, null=True, blank=True, related_name="notifications"
    )
    healthcheck = models.ForeignKey(
        Healthcheck, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    details = models.JSONField(default=dict, blank=True, help_text="What the message says, as decided.")
    audience = models.JSONField(default=list, blank=True, help_text="Channel ids.")
    digest = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="digest_members"
    )
    # A digest collects its organization's storm until this moment; its deliveries wait for it.
    collect_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [
            models.Index(
                fields=["organization", "kind", "collect_until"],
                name="notification_digest_open",
                condition=Q(collect_until__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} at {self.at}"


class Delivery(models.Model):
    """Carry one notification to one channel: the ledger row a sender claims, tries and retries."""

    class State(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        DELIVERED = "delivered"
        FAILED = "failed"  # the last attempt failed; tried again at next_attempt_at
        GIVEN_UP = "given_up"

    UNFINISHED = (State.PENDING, State.SENDING, State.FAILED)

    # The receiver's dedup key (Standard Webhooks' webhook-id): the same on every attempt.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    notification = models.ForeignKey(Notification, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="deliveries")
    # The notification's incident, copied for the ordering rule of the claim (alerts.services.deliveries).
    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    # "digest" for a digest's deliveries (they go in order among themselves), "" otherwise.
    sequence = models.CharField(max_length=16, blank=True, default="")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    # When a pending or failed delivery may be tried; while sending, when its claim lapses
    # (the sender died) and another sender may take it.
    next_attempt_at = models.DateTimeField()
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)
    # The alert as first built (alerts.channels.stored), null until then: every retry sends it
    # again, so the receiver gets the same body for one webhook-id (its acknowledge link included).
    payload = models.JSONField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["notification", "channel"], name="delivery_once"),
        ]
        indexes = [
            # The claim's scan: the few unfinished rows in the claim's order, so a claim of 100
            # reads the index's first rows instead of sorting every unfinished delivery.
            models.Index(
                fields=["next_attempt_at", "id"],
                name="delivery_due",
                condition=Q(state__in=["pending", "sending", "failed"]),
            ),
            # The ordering rule: earlier unfinished deliveries of the same incident on the channel.
            models.Index(fields=["channel", "incident", "id"], name="delivery_channel_incident"),
            # A channel's delivery log, newest first (alerts.selectors.deliveries_of).
            models.Index(fields=["channel", "-created_at", "-id"], name="delivery_channel_log"),
        ]

    def __str__(self) -> str:
        return f"{self.notification_id} -> {self.channel_id}: {self.state}"


class DeliveryAttempt(models.Model):
    """Record one try of a delivery: the answer's status, how long it took, and why it failed."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_rows")
    at = models.DateTimeField()
    ok = models.BooleanField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.FloatField()
    error = models.TextField(blank=True, default="", help_text="A sentence, never a secret.")

    class Meta:
        ordering = ["at", "id"]
        # The claim's per-channel rate reads the last minute's attempts.
        indexes = [models.Index(fields=["at"], name="delivery_attempt_at")]

    def __str__(self) -> str:
        return f"{self.delivery_id} at {self.at}: {'ok' if self.ok else self.error}"


class OutboxCursor(models.Model):
    """Remember how far alerts has read one monitors outbox table; locked by the consumer while it reads.

    Every row at or below ``position`` is done or was never committed. Ids are handed out
    before commit, so a row may appear below rows already read; above ``position`` the rows
    read so far have an OutboxReceipt, and ``position`` moves over a missing id only once it
    has been missing for ``alerts.services.outbox.GAP_GRACE`` (a rolled-back or deleted row).
    """

    source = models.CharField(max_length=32, unique=True)
    position = models.BigIntegerField(default=0)
    gap_at = models.BigIntegerField(null=True, blank=True, help_text="The first missing id, waited for.")
    gap_since = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.source} at {self.position}"


class OutboxReceipt(models.Model):
    """Mark one outbox row above its cursor's position as read: never read twice."""

    source = models.CharField(max_length=32)
    source_id = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "source_id"], name="outbox_receipt_once")]

    def __str__(self) -> str:
        return f"{self.source}#{self.source_id}"
