"""The incidents API: list, read, acknowledge."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from alerts import selectors, services
from alerts.api.filters import IncidentFilter
from alerts.api.serializers import IncidentSerializer
from alerts.models import Incident
from monitors.api.views import UUID_PATTERN, OrganizationScopedMixin
from monitors.models import ApiKey


class IncidentViewSet(
    OrganizationScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet[Incident],
):
    """List and read the organization's incidents (newest first) with their timelines; acknowledge one."""

    serializer_class = IncidentSerializer
    filterset_class = IncidentFilter
    lookup_field = "public_id"
    lookup_url_kwarg = "id"
    lookup_value_regex = UUID_PATTERN

    def get_queryset(self) -> QuerySet[Incident]:
        if getattr(self, "swagger_fake_view", False):
            return Incident.objects.none()
        return selectors.incidents_of(organization=self.organization)

    @extend_schema(request=None, responses={200: IncidentSerializer, 409: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], filterset_class=None)
    def acknowledge(self, request: Request, id: str | None = None) -> Response:
        """Acknowledge the incident (again: no change); 409 when it is already resolved."""
        api_key = request.auth
        assert isinstance(api_key, ApiKey)  # guaranteed by HasApiKeyScope
        try:
            incident = services.incident_acknowledge(
                incident=self.get_object(),
                by=f"API key {api_key.prefix}…" + (f" ({api_key.name})" if api_key.name else ""),
                api_key=api_key,
                now=timezone.now(),
            )
        except services.IncidentResolved as exc:
            return Response({"detail": exc.message}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(self.get_queryset().get(pk=incident.pk)).data)
