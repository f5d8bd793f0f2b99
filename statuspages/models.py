"""Status pages: what an organization publishes about its healthchecks, and the incidents it writes up."""

from __future__ import annotations

import secrets
import uuid

from django.db import models
from django.db.models import Q

from monitors.models import Healthcheck, Organization


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
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]
        indexes = [models.Index(fields=["page", "position"], name="component_page_position")]

    def __str__(self) -> str:
        return self.display_name


class PublishedIncident(models.Model):
    """Tell a page's readers about trouble in words a person wrote (not an alert's incident)."""

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

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["page", "-created_at"], name="incident_page_created")]

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
