"""Read incidents; every function here is scoped to one organization."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import F, QuerySet

from alerts.models import AlertPolicy, Channel, Delivery, Incident, Notification
from monitors.models import Healthcheck, Membership, Organization
from monitors.uptime import Acknowledged


def incidents_of(*, organization: Organization) -> QuerySet[Incident]:
    """Return the organization's incidents, newest first, with their timelines prefetched."""
    return Incident.objects.filter(organization=organization).prefetch_related("events")


def incidents_of_healthcheck(*, healthcheck: Healthcheck, limit: int) -> list[Incident]:
    """Return the healthcheck's newest ``limit`` incidents, open or resolved, without their timelines."""
    return list(Incident.objects.filter(healthcheck=healthcheck).order_by("-opened_at", "-id")[:limit])


def digest_entries(*, digest: Notification, channel_id: int) -> list[Notification]:
    """Return the notifications a digest carries to one channel: those meant for it, in order."""
    return [member for member in digest.digest_members.order_by("at", "id") if channel_id in member.audience]


def member_name(*, user: AbstractBaseUser | AnonymousUser, organization_id: int) -> str:
    """Return how a signed-in member of the organization is named (their address), "" for anyone else."""
    if not user.is_authenticated:
        return ""
    if not Membership.objects.filter(user_id=user.pk, organization_id=organization_id).exists():
        return ""
    return str(getattr(user, "email", "") or user.get_username())


def channels_of(*, organization: Organization) -> QuerySet[Channel]:
    """Return the organization's channels, by name."""
    return (
        Channel.objects.filter(organization=organization)
        .select_related("organization")
        .order_by("name", "id")
    )


def deliveries_of(*, channel: Channel) -> QuerySet[Delivery]:
    """Return the channel's deliveries, newest first, each with its event and its attempts: three queries a page.

    The page's count, its rows (the notification and incident joined), and one query for the
    page's attempts, in the order they were made.
    """
    return (
        Delivery.objects.filter(channel=channel)
        .select_related("notification", "incident")
        .prefetch_related("attempt_rows")
        .order_by("-created_at", "-id")
    )


def alert_policies_of(*, organization: Organization) -> QuerySet[AlertPolicy]:
    """Return the organization's policies (its default first), with their channels."""
    return (
        AlertPolicy.objects.filter(organization=organization)
        .select_related("healthcheck")
        .prefetch_related("channels", "escalation_channels")
        .order_by(F("healthcheck_id").asc(nulls_first=True))
    )


def deliveries_due_count(*, now: datetime) -> int:
    """Return how many deliveries are due and unsent (an index scan of delivery_due)."""
    return Delivery.objects.filter(
        state__in=[Delivery.State.PENDING, Delivery.State.FAILED], next_attempt_at__lte=now
    ).count()


def acknowledged_incidents(
    *, healthcheck_ids: Sequence[int], start: datetime, end: datetime, until: datetime
) -> list[Acknowledged]:
    """Return the checks' incidents opened in ``[start, end)`` and acknowledged by ``until``: one query."""
    rows = Incident.objects.filter(
        healthcheck_id__in=list(healthcheck_ids),
        opened_at__gte=start,
        opened_at__lt=end,
        acknowledged_at__isnull=False,
        acknowledged_at__lte=until,
    ).values_list("healthcheck_id", "opened_at", "acknowledged_at")
    return [Acknowledged(hc_id, opened, acked) for hc_id, opened, acked in rows if acked is not None]
