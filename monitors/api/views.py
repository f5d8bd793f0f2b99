"""The REST API under /api/v1/: healthchecks, regions, the organization."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol, TypeVar

from django.db.models import Model, QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status, views, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from monitors import selectors, services
from monitors.api.filters import HealthcheckFilter, MaintenanceWindowFilter, TimeWindow
from monitors.api.pagination import ResultPagination, ToolChangePagination
from monitors.api.permissions import AnyApiKey
from monitors.api.serializers import (
    CauseChangeSerializer,
    CertificateChangeSerializer,
    CheckRunRequestSerializer,
    CheckRunSerializer,
    HealthcheckListingSerializer,
    HealthcheckSerializer,
    HealthcheckUpdatedSerializer,
    MaintenanceWindowSerializer,
    OrganizationSerializer,
    ProbeResultSerializer,
    RegionSerializer,
    ScorecardSerializer,
    StatusChangeSerializer,
    ToolChangeSerializer,
    UptimeSerializer,
    check_run_data,
    scorecard_data,
)
from monitors.models import ApiKey, Healthcheck, MaintenanceWindow, Organization, Region
from monitors.services.heartbeats import heartbeat_rotate
from monitors.worker.manual import RunRefused, run_now, run_once
from monitors.worker.tasks import broker_enqueue
from probes.checks import check_kind

UUID_PATTERN = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"

_M = TypeVar("_M", bound=Model)
NO_LISTING = "This healthcheck has no listing."


class _HasRequest(Protocol):
    request: Request


class OrganizationScopedMixin:
    """Scope every query to the key's organization: another tenant's object is simply not found."""

    # The request comes from the view the mixin is combined with: a self-type, not an attribute
    # of its own, which would clash with django.views.View's HttpRequest.
    @property
    def organization(self: _HasRequest) -> Organization:
        api_key = self.request.auth
        assert isinstance(api_key, ApiKey)  # guaranteed by HasApiKeyScope
        return api_key.organization


class HealthcheckViewSet(
    OrganizationScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Healthcheck],
):
    serializer_class = HealthcheckSerializer
    filterset_class = HealthcheckFilter
    lookup_field = "public_id"
    lookup_url_kwarg = "id"
    lookup_value_regex = UUID_PATTERN

    def get_queryset(self) -> QuerySet[Healthcheck]:
        if getattr(self, "swagger_fake_view", False):
            return Healthcheck.objects.none()
        return selectors.healthchecks_of(organization=self.organization)

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        if not getattr(self, "swagger_fake_view", False) and isinstance(self.request.auth, ApiKey):
            # Read on the first healthcheck shown, once for the whole page.
            context["maintenance"] = selectors.MaintenanceNow(
                organization=self.organization, at=timezone.now()
            )
        return context

    def create(self, request: Request) -> Response:
        serializer = self._serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changes = serializer.to_service_changes()
        healthcheck = services.healthcheck_create_from(
            organization=self.organization, changes=changes, now=timezone.now()
        )
        return Response(self._shown(healthcheck), status=status.HTTP_201_CREATED)

    @extend_schema(request=HealthcheckSerializer, responses=HealthcheckUpdatedSerializer)
    def update(self, request: Request, id: str | None = None) -> Response:
        return self._update(request, partial=False)

    @extend_schema(request=HealthcheckSerializer, responses=HealthcheckUpdatedSerializer)
    def partial_update(self, request: Request, id: str | None = None) -> Response:
        return self._update(request, partial=True)

    def perform_destroy(self, instance: Healthcheck) -> None:
        services.healthcheck_delete(healthcheck=instance)

    @extend_schema(request=None, responses=HealthcheckSerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, id: str | None = None) -> Response:
        healthcheck = services.healthcheck_pause(healthcheck=self.get_object(), now=timezone.now())
        return Response(self._shown(healthcheck))

    @extend_schema(request=None, responses=HealthcheckSerializer)
    @action(detail=True, methods=["post"], url_path="rotate-ping-url")
    def rotate_ping_url(self, request: Request, id: str | None = None) -> Response:
        """Give a heartbeat a new ping URL; the old one answers 404 from now on."""
        healthcheck = heartbeat_rotate(healthcheck=self.get_object())
        return Response(self._shown(healthcheck))

    @extend_schema(request=None, responses=HealthcheckSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, id: str | None = None) -> Response:
        healthcheck = services.healthcheck_resume(healthcheck=self.get_object(), now=timezone.now())
        return Response(self._shown(healthcheck))

    @extend_schema(
        parameters=[
            OpenApiParameter("region", str, description="A region slug."),
            OpenApiParameter(
                "from", OpenApiTypes.DATETIME, description="Results for slots at or after this time."
            ),
            OpenApiParameter("to", OpenApiTypes.DATETIME, description="Results for slots before this time."),
        ],
        responses=ProbeResultSerializer(many=True),
    )
    @action(detail=True, methods=["get"], pagination_class=ResultPagination, filterset_class=None)
    def results(self, request: Request, id: str | None = None) -> Response:
        """List the check's runs, newest first, by region and time."""
        window = TimeWindow.from_query(request.query_params, default=None)
        queryset = selectors.results_of(
            healthcheck=self.get_object(),
            region=request.query_params.get("region") or None,
            start=window.start,
            end=window.end,
        )
        return self._paginated(queryset, ProbeResultSerializer)

    @extend_schema(responses=StatusChangeSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="status-changes", filterset_class=None)
    def status_changes(self, request: Request, id: str | None = None) -> Response:
        """List every change of the check's status, newest first."""
        return self._paginated(self.get_object().status_changes.all(), StatusChangeSerializer)

    @extend_schema(responses=CauseChangeSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="cause-changes", filterset_class=None)
    def cause_changes(self, request: Request, id: str | None = None) -> Response:
        """List the changes of a failing check's cause while its status stayed, newest first."""
        return self._paginated(self.get_object().cause_changes.all(), CauseChangeSerializer)

    @extend_schema(responses=ToolChangeSerializer(many=True))
    @action(
        detail=True,
        methods=["get"],
        url_path="tool-changes",
        filterset_class=None,
        pagination_class=ToolChangePagination,
    )
    def tool_changes(self, request: Request, id: str | None = None) -> Response:
        """List the tool-list changes (a removed tool, a new required input), newest first."""
        queryset = self.get_object().tool_changes.select_related("region")
        return self._paginated(queryset, ToolChangeSerializer)

    @extend_schema(responses=CertificateChangeSerializer(many=True))
    @action(
        detail=True,
        methods=["get"],
        url_path="certificate-changes",
        filterset_class=None,
        pagination_class=ToolChangePagination,
    )
    def certificate_changes(self, request: Request, id: str | None = None) -> Response:
        """List the TLS certificate replacements each region saw (a new serial), newest first."""
        queryset = self.get_object().certificate_changes.select_related("region")
        return self._paginated(queryset, CertificateChangeSerializer)

    @extend_schema(
        parameters=[
            OpenApiParameter("from", OpenApiTypes.DATETIME, description="Default: 24 hours before `to`."),
            OpenApiParameter("to", OpenApiTypes.DATETIME, description="Default: now."),
        ],
        responses=UptimeSerializer,
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def uptime(self, request: Request, id: str | None = None) -> Response:
        """Sum up uptime and response times over a window, from the hourly rollups."""
        window = TimeWindow.from_query(request.query_params, default=timedelta(hours=24))
        # Given a default, from_query fills in both ends.
        assert window.start is not None
        assert window.end is not None
        figures = selectors.uptime_of(healthcheck=self.get_object(), start=window.start, end=window.end)
        return Response(UptimeSerializer(figures).data)

    @extend_schema(responses={200: ScorecardSerializer, 404: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def scorecard(self, request: Request, id: str | None = None) -> Response:
        """Judge the MCP check on the scorecard's 22 evidence checks, each passed, failed or not measured.

        From its latest attempt, its tool list, and its last 7 and 30 days (whole hours); a
        check's evidence over 24 hours old is labelled "Outdated check". The six publisher checks
        and check 12 read the check's own listing (``/listing/``): without one they are not
        measured (12 fails). 404, saying so, for a check of another type.
        """
        healthcheck = self.get_object()
        now = timezone.now()
        try:
            card = selectors.scorecard_of(healthcheck=healthcheck, now=now)
        except selectors.NotAnMcpCheck as refused:
            return Response({"detail": str(refused)}, status=status.HTTP_404_NOT_FOUND)
        listing = selectors.listing_of(healthcheck=healthcheck)
        return Response(scorecard_data(healthcheck, card, now=now, listing=listing))

    @extend_schema(methods=["GET"], responses={200: HealthcheckListingSerializer, 404: OpenApiTypes.OBJECT})
    @extend_schema(
        methods=["PUT"],
        request=HealthcheckListingSerializer,
        responses={200: HealthcheckListingSerializer, 400: OpenApiTypes.OBJECT},
    )
    @extend_schema(methods=["DELETE"], request=None, responses={204: None, 404: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get", "put", "delete"], filterset_class=None, pagination_class=None)
    def listing(self, request: Request, id: str | None = None) -> Response:
        """The MCP check's own listing: its namespace, website, repository, pricing page and free-tier quote.

        The scorecard's publisher checks (17–22) read it as a manual listing (so check 17 fails),
        and check 12 passes while the quote was found on the pricing page within 90 days: Uptimy
        fetches the page soon after it is entered, then daily. PUT replaces it whole (400 naming
        the field), DELETE removes it; GET answers 404 while there is none.
        """
        healthcheck = self.get_object()
        if request.method == "PUT":
            serializer = HealthcheckListingSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            listing = services.listing_set(
                healthcheck=healthcheck, data=serializer.validated_data, now=timezone.now()
            )
            return Response(HealthcheckListingSerializer(listing).data)
        if request.method == "DELETE":
            if not services.listing_clear(healthcheck=healthcheck):
                return Response({"detail": NO_LISTING}, status=status.HTTP_404_NOT_FOUND)
            return Response(status=status.HTTP_204_NO_CONTENT)
        found = selectors.listing_of(healthcheck=healthcheck)
        if found is None:
            return Response({"detail": NO_LISTING}, status=status.HTTP_404_NOT_FOUND)
        return Response(HealthcheckListingSerializer(found).data)

    @extend_schema(request=None, responses={200: ProbeResultSerializer(many=True), 409: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"], filterset_class=None, pagination_class=None)
    def run(self, request: Request, id: str | None = None) -> Response:
        """Run the check now in every enabled region at once and answer with the results.

        A region that still owes a run (a pending recheck, a scheduled run on its way) runs that
        one now instead of a slot of its own; each result carries its slot and attempt. 409,
        saying why, when the check is paused, has no enabled region, or its stored config no
        longer passes validation.
        """
        try:
            results = run_now(healthcheck=self.get_object(), enqueue=broker_enqueue())
        except RunRefused as refused:
            return Response({"detail": str(refused)}, status=status.HTTP_409_CONFLICT)
        return Response(ProbeResultSerializer(results, many=True).data)

    def _paginated(
        self, queryset: QuerySet[_M], serializer_class: type[serializers.ModelSerializer[_M]]
    ) -> Response:
        # What self.paginate_queryset() does, but its stub takes only the view's own model
        # (Healthcheck), and these pages are of a healthcheck's results and changes.
        paginator = self.paginator
        page = None if paginator is None else paginator.paginate_queryset(queryset, self.request, view=self)
        return self.get_paginated_response(serializer_class(page, many=True).data)

    def _update(self, request: Request, *, partial: bool) -> Response:
        healthcheck = self.get_object()
        serializer = self._serializer(healthcheck, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        updated = services.healthcheck_update(
            healthcheck=healthcheck,
            changes=serializer.to_service_changes(),
            partial=partial,
            now=timezone.now(),
        )
        notices = [{"field": notice.field, "message": notice.message} for notice in updated.notices]
        return Response({**self._shown(updated.healthcheck), "notices": notices})

    def _shown(self, healthcheck: Healthcheck) -> dict[str, Any]:
        fresh = self.get_queryset().get(pk=healthcheck.pk)
        return self._serializer(fresh).data

    def _serializer(self, *args: Any, **kwargs: Any) -> HealthcheckSerializer:
        """Return get_serializer()'s serializer for one healthcheck, as the type it is."""
        serializer = self.get_serializer(*args, **kwargs)
        assert isinstance(serializer, HealthcheckSerializer)  # serializer_class, never many=True here
        return serializer


class RegionViewSet(OrganizationScopedMixin, mixins.ListModelMixin, viewsets.GenericViewSet[Region]):
    """List the enabled regions, saying which the organization's plan allows."""

    serializer_class = RegionSerializer
    pagination_class = None

    def get_queryset(self) -> QuerySet[Region]:
        return selectors.regions_enabled()

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        if not getattr(self, "swagger_fake_view", False) and isinstance(self.request.auth, ApiKey):
            context["allowed_slugs"] = {
                r.slug for r in selectors.regions_allowed(organization=self.organization)
            }
        return context


class OrganizationViewSet(OrganizationScopedMixin, viewsets.GenericViewSet[Organization]):
    """Show the organization the API key belongs to, with its plan."""

    serializer_class = OrganizationSerializer
    pagination_class = None

    @extend_schema(responses=OrganizationSerializer)
    def retrieve(self, request: Request) -> Response:
        return Response(self.get_serializer(self.organization).data)


class MaintenanceWindowViewSet(
    OrganizationScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[MaintenanceWindow],
):
    """Manage maintenance windows: one-off or recurring, for chosen healthchecks and tags."""

    serializer_class = MaintenanceWindowSerializer
    filterset_class = MaintenanceWindowFilter
    lookup_field = "public_id"
    lookup_url_kwarg = "id"
    lookup_value_regex = UUID_PATTERN

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # Each window's current and next occurrence, computed once for the filters and the answer.
        request.maintenance_states = selectors.maintenance_window_states(  # type: ignore[attr-defined]
            organization=self.organization, at=timezone.now()
        )

    def get_queryset(self) -> QuerySet[MaintenanceWindow]:
        if getattr(self, "swagger_fake_view", False):
            return MaintenanceWindow.objects.none()
        return selectors.maintenance_windows_of(organization=self.organization)

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        context["maintenance_states"] = getattr(self.request, "maintenance_states", {})
        return context

    def create(self, request: Request) -> Response:
        serializer = self._serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changes = serializer.to_service_changes()
        window = services.maintenance_window_create(organization=self.organization, **changes)
        return Response(self._shown(window), status=status.HTTP_201_CREATED)

    def update(self, request: Request, id: str | None = None) -> Response:
        return self._update(request, partial=False)

    def partial_update(self, request: Request, id: str | None = None) -> Response:
        return self._update(request, partial=True)

    def perform_destroy(self, instance: MaintenanceWindow) -> None:
        services.maintenance_window_delete(window=instance)

    def _update(self, request: Request, *, partial: bool) -> Response:
        window = self.get_object()
        serializer = self._serializer(window, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        updated = services.maintenance_window_update(
            window=window, changes=serializer.to_service_changes(), partial=partial
        )
        return Response(self._shown(updated))

    def _shown(self, window: MaintenanceWindow) -> dict[str, Any]:
        # The states were computed before the write: compute the written window's again.
        self.request.maintenance_states = selectors.maintenance_window_states(  # type: ignore[attr-defined]
            organization=self.organization, at=timezone.now()
        )
        fresh = self.get_queryset().get(pk=window.pk)
        return self._serializer(fresh).data

    def _serializer(self, *args: Any, **kwargs: Any) -> MaintenanceWindowSerializer:
        serializer = self.get_serializer(*args, **kwargs)
        assert isinstance(serializer, MaintenanceWindowSerializer)
        return serializer


class CheckRunView(views.APIView):
    """Run a check once from this server and answer with its result; nothing is created or stored.

    The config is validated as a healthcheck's would be (the same messages); the check runs
    from this machine only, not from every region. Read-only keys may run it. Rate-limited per
    key like every call (run-now included).
    """

    permission_classes = [AnyApiKey]

    @extend_schema(request=CheckRunRequestSerializer, responses=CheckRunSerializer)
    def post(self, request: Request) -> Response:
        body = CheckRunRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        check_type = body.validated_data.get("type") or check_kind("mcp")
        outcome, checked_at = run_once(check_type=check_type, config=body.validated_data["config"])
        return Response(check_run_data(outcome, checked_at=checked_at))
