"""Read incidents; every function here is scoped to one organization."""

from __future__ import annotations

from django.db.models import QuerySet

from alerts.models import Incident
from monitors.models import Organization


def incidents_of(*, organization: Organization) -> QuerySet[Incident]:
    """Return the organization's incidents, newest first, with their timelines prefetched."""
    return Incident.objects.filter(organization=organization).prefetch_related("events")
