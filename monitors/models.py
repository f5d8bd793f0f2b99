"""Tenancy (Plan, Region, Organization, Membership, ApiKey) and the Healthcheck.

Healthcheck.type is a plain integer validated against ``probes.types.CheckType`` rather than
a field with choices, so adding a check type never migrates existing rows.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from probes.types import CheckType, Status


class Region(models.Model):
    """Name a place checks run from; its worker pool consumes the queue ``probes.<slug>``."""

    slug = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=64)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def queue(self) -> str:
        return f"probes.{self.slug}"


class Plan(models.Model):
    """Bound what an organization may run: how many checks, how often, where, kept how long."""

    slug = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=64)
    max_healthchecks = models.PositiveIntegerField()
    min_interval_seconds = models.PositiveIntegerField()
    retention_days = models.PositiveIntegerField(default=30)
    allowed_regions = models.ManyToManyField(Region, related_name="plans")

    class Meta:
        ordering = ["max_healthchecks"]

    def __str__(self) -> str:
        return self.slug


class Organization(models.Model):
    """Own healthchecks, keys and members: the tenant every query is scoped to."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=128)
    plan = models.ForeignKey(Plan, on_delete=models.PROTECT, related_name="organizations")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        MEMBER = "member"
        VIEWER = "viewer"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "organization"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.role})"


class ApiKey(models.Model):
    """Authenticate API calls for one organization; only a SHA-256 of the key is stored."""

    class Scope(models.TextChoices):
        READ = "read"
        READ_WRITE = "read_write"

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=128, blank=True)
    prefix = models.CharField(
        max_length=16, help_text="The first characters of the key, shown to tell keys apart."
    )
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.READ_WRITE)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.organization})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def can_write(self) -> bool:
        return self.scope == self.Scope.READ_WRITE


class Healthcheck(models.Model):
    """Describe one monitored target: what to check, how often, from where; and its state."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="healthchecks")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    type = models.PositiveSmallIntegerField(help_text="1 HTTP, 13 MCP (probes.types.CheckType).")
    # The API-shaped config without header values; those live encrypted in secret_headers.
    config = models.JSONField(default=dict)
    secret_headers = models.TextField(blank=True, default="", editable=False)
    interval_seconds = models.PositiveIntegerField(default=60)
    regions = models.ManyToManyField(Region, related_name="healthchecks")
    paused = models.BooleanField(default=False)
    status = models.CharField(max_length=16, default=Status.PENDING.value)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    next_check_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-created_at"], name="hc_org_created"),
            # The scheduler's due scan: unpaused rows by next_check_at.
            models.Index(fields=["next_check_at"], name="hc_due", condition=Q(paused=False)),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(interval_seconds__gte=1), name="hc_interval_positive"),
            models.CheckConstraint(
                condition=Q(status__in=[status.value for status in Status]), name="hc_status_known"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def check_type(self) -> CheckType:
        return CheckType(self.type)


class HealthcheckTag(models.Model):
    """Label a healthcheck; a row per tag so filtering by tag is an indexed join on every database."""

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="tag_rows")
    name = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["healthcheck", "name"], name="hc_tag_unique")]
        indexes = [models.Index(fields=["name"], name="hc_tag_name")]

    def __str__(self) -> str:
        return self.name
