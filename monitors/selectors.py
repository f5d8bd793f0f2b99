"""Read tenancy and healthchecks; every function here is scoped to one organization."""

from __future__ import annotations

from django.db.models import QuerySet

from monitors.models import ApiKey, Healthcheck, Organization, Region


def healthchecks_of(*, organization: Organization) -> QuerySet[Healthcheck]:
    """Return the organization's healthchecks with what the API shows prefetched."""
    return (
        Healthcheck.objects.filter(organization=organization)
        .select_related("organization")
        .prefetch_related("regions", "tag_rows")
    )


def regions_enabled() -> QuerySet[Region]:
    return Region.objects.filter(enabled=True)


def regions_allowed(*, organization: Organization) -> QuerySet[Region]:
    """Return the enabled regions the organization's plan allows."""
    return organization.plan.allowed_regions.filter(enabled=True).order_by("slug")


def api_key_by_hash(*, key_hash: str) -> ApiKey | None:
    return (
        ApiKey.objects.select_related("organization", "organization__plan").filter(key_hash=key_hash).first()
    )
