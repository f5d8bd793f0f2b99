"""The reports API: /api/v1/reports/ as JSON, CSV, HTML or PDF, and the organization's report settings."""

from __future__ import annotations

import uuid
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers, serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from monitors.api.strict import RejectUnknownFields
from monitors.api.views import OrganizationScopedMixin
from monitors.models import Healthcheck
from reports import selectors, services
from reports.pdf import report_html, report_pdf
from reports.render.period import PeriodError, period_of
from reports.render.report import report_csv, report_data


class _Passthrough(renderers.BaseRenderer):
    """Answer a body the view has already drawn (bytes or text) in this renderer's media type."""

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        if isinstance(data, bytes):
            return data
        if isinstance(data, str):
            return data.encode("utf-8")
        # An error answered after negotiation picked this type: the view answers errors as JSON.
        return renderers.JSONRenderer().render(data)


class CsvRenderer(_Passthrough):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"


class PdfRenderer(_Passthrough):
    media_type = "application/pdf"
    format = "pdf"
    charset = None
    render_style = "binary"


class HtmlRenderer(_Passthrough):
    media_type = "text/html"
    format = "html"
    charset = "utf-8"


def _param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    return value.strip() if value is not None and value.strip() else None


class ReportView(OrganizationScopedMixin, APIView):
    """Answer the organization's (or one healthcheck's) availability report for a month or a range of days."""

    renderer_classes = [renderers.JSONRenderer, CsvRenderer, PdfRenderer, HtmlRenderer]

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # DRF answers a format= it has no renderer for with a bare 404 "Not found.": say which.
        asked = request.query_params.get(self.settings.URL_FORMAT_OVERRIDE or "format")
        known = [renderer.format for renderer in self.renderer_classes]
        if not force and asked and asked not in known:
            raise ValidationError({"format": [f"unknown format {asked[:32]!r}: one of {', '.join(known)}"]})
        return super().perform_content_negotiation(request, force)

    def handle_exception(self, exc: Exception) -> Response:
        # Errors are JSON whatever was asked for: a PDF reader can't show "to: ends before from".
        self.request.accepted_renderer = renderers.JSONRenderer()
        self.request.accepted_media_type = "application/json"
        return super().handle_exception(exc)

    @extend_schema(
        parameters=[
            OpenApiParameter("month", OpenApiTypes.STR, description="A calendar month, YYYY-MM."),
            OpenApiParameter("from", OpenApiTypes.DATE, description="The first day of a range (with to)."),
            OpenApiParameter("to", OpenApiTypes.DATE, description="The last day of a range, included."),
            OpenApiParameter(
                "tz", OpenApiTypes.STR, description="An IANA zone; the organization's by default."
            ),
            OpenApiParameter("healthcheck", OpenApiTypes.UUID, description="One healthcheck instead of all."),
            OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv", "html", "pdf"]),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        organization = self.organization
        healthcheck = self._healthcheck(request)
        time_zone = _param(request, "tz") or selectors.report_settings_of(organization=organization).time_zone
        try:
            period = period_of(
                month=_param(request, "month"),
                start=_param(request, "from"),
                end=_param(request, "to"),
                time_zone=time_zone,
                now=timezone.now(),
            )
        except PeriodError as error:
            raise ValidationError({error.field: [error.message]}) from None
        report = selectors.report_build(
            organization=organization, period=period, now=timezone.now(), healthcheck=healthcheck
        )
        data = report_data(report)
        kind = request.accepted_renderer.format
        name = f"uptimy-{organization.slug}-{period.label.replace('..', '_')}"
        if kind == "csv":
            return self._file(report_csv(data), f"{name}.csv")
        if kind == "pdf":
            return self._file(report_pdf(data), f"{name}.pdf")
        if kind == "html":
            return Response(report_html(data))
        return Response(data)

    def _healthcheck(self, request: Request) -> Healthcheck | None:
        raw = _param(request, "healthcheck")
        if raw is None:
            return None
        try:
            public_id = uuid.UUID(raw)
        except ValueError:
            raise ValidationError({"healthcheck": ["expected a healthcheck id (a UUID)"]}) from None
        found = (
            selectors.report_healthchecks(organization=self.organization).filter(public_id=public_id).first()
        )
        if found is None:
            raise NotFound({"healthcheck": ["no healthcheck with this id in your organization"]})
        return found

    @staticmethod
    def _file(body: str | bytes, filename: str) -> Response:
        response = Response(body)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class ReportSettingsSerializer(RejectUnknownFields, serializers.Serializer[Any]):
    sla_target = serializers.DecimalField(max_digits=6, decimal_places=3, required=False)
    time_zone = serializers.CharField(max_length=64, required=False)


class ReportSettingsView(OrganizationScopedMixin, APIView):
    """Read and change the organization's default SLA target and the zone of its monthly reports."""

    @extend_schema(responses=ReportSettingsSerializer)
    def get(self, request: Request) -> Response:
        found = selectors.report_settings_of(organization=self.organization)
        return Response({"sla_target": f"{found.sla_target:.3f}", "time_zone": found.time_zone})

    @extend_schema(request=ReportSettingsSerializer, responses=ReportSettingsSerializer)
    def patch(self, request: Request) -> Response:
        serializer = ReportSettingsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changed = services.report_settings_update(organization=self.organization, **serializer.validated_data)
        return Response({"sla_target": f"{changed.sla_target:.3f}", "time_zone": changed.time_zone})


class HealthcheckTargetSerializer(RejectUnknownFields, serializers.Serializer[Any]):
    sla_target = serializers.DecimalField(max_digits=6, decimal_places=3, allow_null=True)


class HealthcheckTargetView(OrganizationScopedMixin, APIView):
    """Set one healthcheck's own SLA target (null: its organization's default again)."""

    @extend_schema(request=HealthcheckTargetSerializer, responses=HealthcheckTargetSerializer)
    def put(self, request: Request, id: uuid.UUID) -> Response:
        healthcheck = (
            selectors.report_healthchecks(organization=self.organization).filter(public_id=id).first()
        )
        if healthcheck is None:
            raise NotFound({"healthcheck": ["no healthcheck with this id in your organization"]})
        serializer = HealthcheckTargetSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        raw = serializer.validated_data["sla_target"]
        try:
            target = Decimal(raw) if raw is not None else None
        except InvalidOperation:
            raise ValidationError({"sla_target": ["expected a number"]}) from None
        saved = services.healthcheck_target_set(healthcheck=healthcheck, sla_target=target)
        return Response({"sla_target": f"{saved.sla_target:.3f}" if saved else None})
