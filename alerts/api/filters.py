"""Filter incident lists: open or resolved, one healthcheck."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet

from alerts.models import Incident


class IncidentFilter(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(
        choices=[("open", "open"), ("resolved", "resolved")],
        method="filter_state",
        help_text="open: not resolved yet; resolved: over.",
    )
    healthcheck = django_filters.UUIDFilter(
        field_name="healthcheck_public_id", help_text="A healthcheck's id (also a deleted one's)."
    )

    class Meta:
        model = Incident
        fields = ["state", "healthcheck"]

    def filter_state(self, queryset: QuerySet[Incident], name: str, value: str) -> QuerySet[Incident]:
        return queryset.filter(resolved_at__isnull=value == "open")
