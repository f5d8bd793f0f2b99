"""Filter healthcheck lists by type, status, tag and a search term."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from uuid import UUID

import django_filters
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import ValidationError

from monitors.maintenance import Occurrence
from monitors.models import Healthcheck, HealthcheckTag, MaintenanceWindow
from probes.checks import UnknownCheckKind, check_kind
from probes.types import Status


class HealthcheckFilter(django_filters.FilterSet):
    type = django_filters.CharFilter(
        method="filter_type", help_text="A check type's number or name, e.g. 13 or mcp."
    )
    status = django_filters.ChoiceFilter(choices=[(s.value, s.value) for s in Status])
    tag = django_filters.CharFilter(field_name="tag_rows__name", distinct=True)
    search = django_filters.CharFilter(method="filter_search", help_text="Part of the name or the URL.")

    class Meta:
        model = Healthcheck
        fields = ["type", "status", "tag", "search"]

    def filter_type(self, queryset: QuerySet[Healthcheck], name: str, value: str) -> QuerySet[Healthcheck]:
        try:
            return queryset.filter(type=check_kind(value).number)
        except UnknownCheckKind as exc:
            raise ValidationError({"type": [str(exc)]}) from None

    def filter_search(self, queryset: QuerySet[Healthcheck], name: str, value: str) -> QuerySet[Healthcheck]:
        return queryset.filter(Q(name__icontains=value) | Q(config__uri__icontains=value))


@dataclass(frozen=True)
class TimeWindow:
    """A [start, end) window from ``from``/``to`` query parameters, validated."""

    start: datetime | None
    end: datetime | None

    @classmethod
    def from_query(cls, params: Mapping[str, str], *, default: timedelta | None) -> TimeWindow:
        """Parse ISO 8601 ``from`` and ``to``; with ``default``, fill a missing end with now and start with end - default."""
        start, end = _moment(params, "from"), _moment(params, "to")
        if default is not None:
            end = end or timezone.now()
            start = start or end - default
        if start and end and start >= end:
            raise ValidationError({"from": ["Must be before `to`."]})
        return cls(start, end)


def _moment(params: Mapping[str, str], name: str) -> datetime | None:
    raw = params.get(name)
    if not raw:
        return None
    try:
        moment = parse_datetime(raw.strip())
    except ValueError:
        moment = None
    if moment is None:
        raise ValidationError({name: [f"Not an ISO 8601 date and time: {raw[:40]!r}."]})
    if timezone.is_naive(moment):
        return timezone.make_aware(moment, UTC)
    # Python accepts offsets up to ±23:59 but PostgreSQL only ±15:59, and near the ends of
    # the calendar a conversion overflows: normalise to UTC here, where a bad value is a 400.
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValidationError({name: [f"Out of range: {raw[:40]!r}."]}) from None


class MaintenanceWindowFilter(django_filters.FilterSet):
    """Filter windows by the healthcheck they apply to, and by what they do now (active, upcoming)."""

    healthcheck = django_filters.UUIDFilter(
        method="filter_healthcheck",
        help_text="A healthcheck's id: the windows that apply to it, by itself or by one of its tags.",
    )
    active = django_filters.BooleanFilter(
        method="filter_active", help_text="Whether an occurrence covers now."
    )
    upcoming = django_filters.BooleanFilter(
        method="filter_upcoming", help_text="Whether an occurrence is still to start."
    )

    class Meta:
        model = MaintenanceWindow
        fields = ["healthcheck", "active", "upcoming"]

    def filter_healthcheck(
        self, queryset: QuerySet[MaintenanceWindow], name: str, value: UUID
    ) -> QuerySet[MaintenanceWindow]:
        # Another organization's healthcheck matches nothing here, as a missing one: the queryset is scoped.
        tags = HealthcheckTag.objects.filter(healthcheck__public_id=value).values("name")
        return queryset.filter(
            Q(healthchecks__public_id=value)
            | Q(tag_rows__name__in=tags, organization__healthchecks__public_id=value)
        ).distinct()

    def filter_active(
        self, queryset: QuerySet[MaintenanceWindow], name: str, value: bool
    ) -> QuerySet[MaintenanceWindow]:
        ids = [window_id for window_id, (current, _) in self._states().items() if current is not None]
        return queryset.filter(id__in=ids) if value else queryset.exclude(id__in=ids)

    def filter_upcoming(
        self, queryset: QuerySet[MaintenanceWindow], name: str, value: bool
    ) -> QuerySet[MaintenanceWindow]:
        ids = [window_id for window_id, (_, upcoming) in self._states().items() if upcoming is not None]
        return queryset.filter(id__in=ids) if value else queryset.exclude(id__in=ids)

    def _states(self) -> dict[int, tuple[Occurrence | None, Occurrence | None]]:
        # The view computes them once per request for the filters and the answer alike.
        states = getattr(self.request, "maintenance_states", None)
        return states if isinstance(states, dict) else {}
