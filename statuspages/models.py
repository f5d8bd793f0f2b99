"""Status pages: what an organization publishes about its healthchecks, and the incidents it writes up."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from django.db import models
from django.db.models import Q

from monitors.models import Healthcheck, Organization
from monitors.secrets import decrypt_document, encrypt_document


def domain_token() -> str:
    """Return a fresh custom-domain verification token, the value of the TXT record to publish."""
    return "uptimy-verify=" + secrets.token_urlsafe(24)


def badge_token() -> str:
    """Return a fresh badge token: the unguessable key of a component's badge URLs (192 random bits)."""
    return secrets.token_urlsafe(24)


class StatusPage(models.Model):
    """Describe one public (or password-protected) status page of an organization."""

    class Access(models.TextChoices):
        PUBLIC = "public"
        PASSWORD = "password"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="status_pages")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    # An http(s) address, checked by the services (statuspages/services/pages.py).
    logo_url = models.CharField(max_length=2048, blank=True, default="")
    time_zone = models.CharField(max_length=64, default="UTC", help_text="An IANA time zone name.")
    access = models.CharField(max_length=16, choices=Access.choices, default=Access.PUBLIC)
    # Django's password hasher format; empty for a public page.
    password_hash = models.CharField(max_length=256, blank=True, default="", editable=False)
    custom_domain = models.CharField(max_length=253, null=True, blank=True, unique=True)
    domain_token = models.CharField(max_length=64, default=domain_token, editable=False)
    domain_verified_at = models.DateTimeField(null=True, blank=True)
    # Draft a published incident when a component's healthcheck goes down (never public until
    # the owner publishes it): statuspages.services.drafting.
    draft_incidents = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["organization", "-created_at"], name="page_org_created")]
        constraints = [
            models.CheckConstraint(
                condition=Q(access="public") | ~Q(password_hash=""), name="page_password_has_hash"
            )
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def is_private(self) -> bool:
        return self.access == self.Access.PASSWORD

    @property
    def domain_verified(self) -> bool:
        return bool(self.custom_domain) and self.domain_verified_at is not None


class ComponentGroup(models.Model):
    """Group a page's components under one heading (one level: a group holds components only)."""

    page = models.ForeignKey(StatusPage, on_delete=models.CASCADE, related_name="groups")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.name


class ComponentStatus(models.TextChoices):
    """Name a component's status as Statuspage does (statuspages.render.vocabulary.ComponentStatus)."""

    OPERATIONAL = "operational", "Operational"
    DEGRADED_PERFORMANCE = "degraded_performance", "Degraded performance"
    PARTIAL_OUTAGE = "partial_outage", "Partial outage"
    MAJOR_OUTAGE = "major_outage", "Major outage"
    UNDER_MAINTENANCE = "under_maintenance", "Under maintenance"


class Component(models.Model):
    """Show one healthcheck of the page's organization on the page, under a name of its own."""

    page = models.ForeignKey(StatusPage, on_delete=models.CASCADE, related_name="components")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey(
        ComponentGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="components"
    )
    display_name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    position = models.PositiveIntegerField(default=0)
    only_show_when_not_operational = models.BooleanField(default=False)
    show_mcp_details = models.BooleanField(default=False)
    # The key of the component's badge URLs on a password page, where its public id opens nothing:
    # a README can show one component's badge without opening the page. Rotated by its owner.
    badge_token = models.CharField(max_length=64, unique=True, default=badge_token, editable=False)
    # The status its owner set by hand (empty: none). Shown only when worse than what the checks
    # measure (statuspages.render.vocabulary.shown_status); kept until the owner clears it.
    declared_status = models.CharField(max_length=32, choices=ComponentStatus.choices, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]
        indexes = [models.Index(fields=["page", "position"], name="component_page_position")]

    def __str__(self) -> str:
        return self.display_name


class PublicIncidents(models.Manager["PublishedIncident"]):
    """Return published incidents only: a draft is never on the page, in its JSON or in its feeds."""

    def get_queryset(self) -> models.QuerySet[PublishedIncident]:
        return super().get_queryset().filter(draft=False)


class PublishedIncident(models.Model):
    """Tell a page's readers about trouble in words a person wrote (not an alert's incident).

    ``objects`` leaves drafts out, so every public reader (page, JSON, feeds, history) is safe by
    default; the owners' API, the admin and the services read ``with_drafts``.
    """

    class Impact(models.TextChoices):
        NONE = "none"
        MINOR = "minor"
        MAJOR = "major"
        CRITICAL = "critical"

    class Status(models.TextChoices):
        INVESTIGATING = "investigating"
        IDENTIFIED = "identified"
        MONITORING = "monitoring"
        RESOLVED = "resolved"

    page = models.ForeignKey(StatusPage, on_delete=models.CASCADE, related_name="incidents")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    title = models.CharField(max_length=200)
    impact = models.CharField(max_length=16, choices=Impact.choices, default=Impact.MINOR)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.INVESTIGATING)
    components = models.ManyToManyField(Component, blank=True, related_name="incidents")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    monitoring_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    # A draft is seen by the owners only, until they publish it (its subscribers hear of it then).
    draft = models.BooleanField(default=False)
    published_at = models.DateTimeField(null=True, blank=True)
    # Drafted by statuspages.services.drafting when this healthcheck went down; while
    # ``awaiting_recovery`` its recovery adds a suggested "resolved" update to the draft.
    drafted_for = models.ForeignKey(
        Healthcheck, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    awaiting_recovery = models.BooleanField(default=False)

    with_drafts = models.Manager()
    objects = PublicIncidents()

    class Meta:
        ordering = ["-created_at", "-id"]
        default_manager_name = "objects"
        base_manager_name = "with_drafts"
        indexes = [models.Index(fields=["page", "-created_at"], name="incident_page_created")]
        constraints = [
            # One draft waiting for its check's recovery per page and check, whatever races.
            models.UniqueConstraint(
                fields=["page", "drafted_for"],
                condition=Q(awaiting_recovery=True),
                name="incident_one_draft_per_check",
            )
        ]

    def __str__(self) -> str:
        return self.title


class IncidentUpdate(models.Model):
    """Add one dated message to a published incident, with the incident's status as of then."""

    incident = models.ForeignKey(PublishedIncident, on_delete=models.CASCADE, related_name="updates")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    status = models.CharField(max_length=16, choices=PublishedIncident.Status.choices)
    body = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.incident_id}: {self.status}"


class AffectedComponent(models.Model):
    """Record one component's status as an incident update declared it (Statuspage's ``affected_components``).

    ``old_status`` is what the page showed for the component just before the update;
    ``new_status`` is what the update declares. While the incident is published and open, the
    latest update naming a component declares its status.
    """

    update = models.ForeignKey(IncidentUpdate, on_delete=models.CASCADE, related_name="affected")
    component = models.ForeignKey(Component, on_delete=models.CASCADE, related_name="+")
    old_status = models.CharField(max_length=32, choices=ComponentStatus.choices)
    new_status = models.CharField(max_length=32, choices=ComponentStatus.choices)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["update", "component"], name="affected_component_once"),
        ]

    def __str__(self) -> str:
        return f"{self.component_id}: {self.old_status} -> {self.new_status}"


# --- subscribers ---------------------------------------------------------------------------------


class Subscriber(models.Model):
    """Hear of a page's published incidents and maintenance: an email address (double opt-in) or a webhook.

    An email subscriber hears nothing but its confirmation until ``confirmed_at`` is set (the
    signed link in that mail); a webhook is added by the page's owner and is confirmed at once.
    ``all_components`` off means only the chosen ``components`` (none left: nothing at all).
    """

    class Kind(models.TextChoices):
        EMAIL = "email"
        WEBHOOK = "webhook"

    page = models.ForeignKey(StatusPage, on_delete=models.CASCADE, related_name="subscribers")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # Lower-cased; empty for a webhook.
    email = models.CharField(max_length=254, blank=True, default="")
    # A webhook's URL and whsec_ secret, encrypted (monitors.secrets): URLs carry tokens.
    config_encrypted = models.TextField(blank=True, default="", editable=False)
    # The URL as the API shows it: its origin, with the path masked.
    url_shown = models.CharField(max_length=2048, blank=True, default="")
    all_components = models.BooleanField(default=True)
    components = models.ManyToManyField(Component, blank=True, related_name="subscribers")
    confirmed_at = models.DateTimeField(null=True, blank=True)
    # The last confirmation mail: another waits CONFIRM_RESEND (a form can't mail-bomb an address).
    confirmation_sent_at = models.DateTimeField(null=True, blank=True)
    # Set when the receiver refused for good (a webhook's 410, a mailbox that does not exist).
    disabled_reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["page", "email"], condition=Q(kind="email"), name="subscriber_email_once"
            ),
            models.CheckConstraint(
                condition=~Q(kind="email") | ~Q(email=""), name="subscriber_email_has_address"
            ),
        ]
        indexes = [
            # The fan-out's scan: a page's confirmed subscribers in id order, a chunk at a time.
            models.Index(
                fields=["page", "id"],
                name="subscriber_fanout",
                condition=Q(confirmed_at__isnull=False, disabled_reason=""),
            ),
        ]

    def __str__(self) -> str:
        return self.email or self.url_shown

    @property
    def config(self) -> dict[str, Any]:
        """Return the webhook's decrypted url and secret; raise monitors.secrets.SecretUnreadable if no key opens it."""
        document = decrypt_document(self.config_encrypted, what="webhook subscriber")
        assert isinstance(document, dict)
        return document

    @config.setter
    def config(self, value: dict[str, Any]) -> None:
        self.config_encrypted = encrypt_document(value)


class Notice(models.Model):
    """Hold one thing a page's subscribers are told, as decided when it happened; fanned out to deliveries.

    ``key`` makes it once per page: an incident update's id, or a maintenance occurrence and
    what happened to it, so a rescan never tells the same thing twice. ``component_ids`` are the
    components it touches (empty: the whole page); ``subscriber`` narrows it to one (a
    confirmation mail). The fan-out writes deliveries a chunk of subscribers at a time and
    remembers the last subscriber id it reached in ``fanned_to``.
    """

    class Kind(models.TextChoices):
        INCIDENT_CREATED = "incident.created"
        INCIDENT_UPDATED = "incident.updated"
        INCIDENT_RESOLVED = "incident.resolved"
        MAINTENANCE_SCHEDULED = "maintenance.scheduled"
        MAINTENANCE_STARTED = "maintenance.started"
        MAINTENANCE_COMPLETED = "maintenance.completed"
        SUBSCRIPTION_CONFIRM = "subscription.confirm"

    page = models.ForeignKey(StatusPage, on_delete=models.CASCADE, related_name="notices")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    key = models.CharField(max_length=200)
    at = models.DateTimeField()
    data = models.JSONField(default=dict, help_text="What the notice says (the payload's data), as decided.")
    component_ids = models.JSONField(default=list, blank=True)
    subscriber = models.ForeignKey(
        Subscriber, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    fanned_to = models.BigIntegerField(default=0)
    fanned_out_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["page", "key"], name="notice_once")]
        indexes = [
            models.Index(fields=["id"], name="notice_fanout_due", condition=Q(fanned_out_at__isnull=True))
        ]

    def __str__(self) -> str:
        return f"{self.kind} ({self.key})"


class NoticeDelivery(models.Model):
    """Carry one notice to one subscriber: the ledger row a sender claims, tries and retries."""

    class State(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        SENT = "sent"
        FAILED = "failed"  # the last attempt failed; tried again at next_attempt_at
        GIVEN_UP = "given_up"

    UNFINISHED = (State.PENDING, State.SENDING, State.FAILED)

    # The receiver's dedup key: the webhook-id, and the email's Message-ID, the same on every attempt.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    notice = models.ForeignKey(Notice, on_delete=models.CASCADE, related_name="deliveries")
    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    # When a pending or failed delivery may be tried; while sending, when its claim lapses.
    next_attempt_at = models.DateTimeField()
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="", help_text="A sentence, never a secret.")
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["notice", "subscriber"], name="notice_delivery_once"),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at", "id"],
                name="notice_delivery_due",
                condition=Q(state__in=["pending", "sending", "failed"]),
            ),
            # The order rule: a subscriber's earlier unfinished deliveries go first.
            models.Index(
                fields=["subscriber", "id"],
                name="notice_delivery_subscriber",
                condition=Q(state__in=["pending", "sending", "failed"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.notice_id} -> {self.subscriber_id}: {self.state}"


class StatusChangeCursor(models.Model):
    """Remember how far the incident drafter has read monitors' StatusChange rows (its own cursor).

    Every row at or below ``position`` is read. Ids are handed out before commit, so the reader
    stops at a missing id and passes it only once it has been missing for
    ``statuspages.services.drafting.GAP_GRACE`` (a rolled-back or deleted row).
    """

    name = models.CharField(max_length=32, unique=True)
    position = models.BigIntegerField(default=0)
    gap_at = models.BigIntegerField(null=True, blank=True)
    gap_since = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.position}"
