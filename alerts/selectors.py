"""Read incidents; every function here is scoped to one organization."""

from __future__ import annotations

from django.db.models import QuerySet

from alerts.models import Channel, Incident, Notification
from monitors.models import Organization


def incidents_of(*, organization: Organization) -> QuerySet[Incident]:
    """Return the organization's incidents, newest first, with their timelines prefetched."""
    return Incident.objects.filter(organization=organization).prefetch_related("events")


def digest_entries(*, digest: Notification, channel_id: int) -> list[Notification]:
    """Return the notifications a digest carries to one channel: those meant for it, in order."""
    return [member for member in digest.digest_members.order_by("at", "id") if channel_id in member.audience]


def channels_of(*, organization: Organization) -> QuerySet[Channel]:
    """Return the organization's channels, by name."""
    return (
        Channel.objects.filter(organization=organization)
        .select_related("organization")
        .order_by("name", "id")
    )
