"""Filter healthcheck lists by type, status, tag and a search term."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet
from rest_framework.exceptions import ValidationError

from monitors.models import Healthcheck
from probes.types import CheckType, Status


class HealthcheckFilter(django_filters.FilterSet):
    type = django_filters.CharFilter(method="filter_type", help_text='1, 13, "http" or "mcp".')
    status = django_filters.ChoiceFilter(choices=[(s.value, s.value) for s in Status])
    tag = django_filters.CharFilter(field_name="tag_rows__name", distinct=True)
    search = django_filters.CharFilter(method="filter_search", help_text="Part of the name or the URL.")

    class Meta:
        model = Healthcheck
        fields = ["type", "status", "tag", "search"]

    def filter_type(self, queryset: QuerySet[Healthcheck], name: str, value: str) -> QuerySet[Healthcheck]:
        try:
            return queryset.filter(type=int(CheckType.parse(value)))
        except ValueError:
            raise ValidationError(
                {"type": [f'Unknown type {value!r}; use 1, 13, "http" or "mcp".']}
            ) from None

    def filter_search(self, queryset: QuerySet[Healthcheck], name: str, value: str) -> QuerySet[Healthcheck]:
        return queryset.filter(Q(name__icontains=value) | Q(config__uri__icontains=value))
