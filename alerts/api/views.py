"""The alerts API: incidents (list, read, acknowledge) and channels (CRUD, test, secret rotation, delivery log)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from alerts import selectors, services
from alerts.api.filters import IncidentFilter
from alerts.api.serializers import (
    AlertPolicySerializer,
    AttemptSerializer,
    ChannelSavedSerializer,
    ChannelSerializer,
    ChannelWriteSerializer,
    DeliverySerializer,
    IncidentSerializer,
    SecretSerializer,
)
from alerts.models import Channel, Incident
from monitors.api.views import UUID_PATTERN, OrganizationScopedMixin
from monitors.errors import ServiceError
from monitors.models import ApiKey, Healthcheck


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


class ChannelViewSet(
    OrganizationScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Channel],
):
    """Add, read, change and remove the organization's alert channels; send one a test; rotate a webhook's secret."""

    serializer_class = ChannelSerializer
    lookup_field = "public_id"
    lookup_url_kwarg = "id"
    lookup_value_regex = UUID_PATTERN
    filterset_class = None

    def get_queryset(self) -> QuerySet[Channel]:
        if getattr(self, "swagger_fake_view", False):
            return Channel.objects.none()
        return selectors.channels_of(organization=self.organization)

    @extend_schema(request=ChannelWriteSerializer, responses={201: ChannelSavedSerializer})
    def create(self, request: Request) -> Response:
        data = self._valid(request, partial=False)
        saved = services.channel_add(
            organization=self.organization,
            name=data["name"],
            kind=data["kind"],
            config=data["config"],
            enabled=data.get("enabled", True),
        )
        return Response(self._saved(saved), status=status.HTTP_201_CREATED)

    @extend_schema(request=ChannelWriteSerializer, responses=ChannelSavedSerializer)
    def update(self, request: Request, id: str | None = None) -> Response:
        return self._change(request, partial=False)

    @extend_schema(request=ChannelWriteSerializer, responses=ChannelSavedSerializer)
    def partial_update(self, request: Request, id: str | None = None) -> Response:
        return self._change(request, partial=True)

    @extend_schema(request=None, responses=AttemptSerializer)
    @action(detail=True, methods=["post"])
    def test(self, request: Request, id: str | None = None) -> Response:
        """Send the channel a test alert now and answer with the attempt (not kept in the ledger)."""
        attempt = services.channel_test(channel=self.get_object(), now=timezone.now())
        return Response(AttemptSerializer(attempt).data)

    @extend_schema(request=None, responses=DeliverySerializer(many=True))
    @action(detail=True, methods=["get"])
    def deliveries(self, request: Request, id: str | None = None) -> Response:
        """List the alerts sent to the channel, newest first: each one's event, state, attempts and next try.

        A failing channel shows here before it is disabled: every attempt's time, the receiver's
        status code, how long it took and why it failed (a sentence naming no secret).
        """
        queryset = selectors.deliveries_of(channel=self.get_object())
        # What self.paginate_queryset() does; its stub takes only the view's own model (Channel).
        paginator = self.paginator
        page = None if paginator is None else paginator.paginate_queryset(queryset, request, view=self)
        return self.get_paginated_response(DeliverySerializer(page, many=True).data)

    @extend_schema(request=None, responses=SecretSerializer)
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, id: str | None = None) -> Response:
        """Give a webhook a new signing secret, shown once; the old one keeps signing for a day."""
        now = timezone.now()
        secret = services.channel_rotate_secret(channel=self.get_object(), now=now)
        return Response({"signing_secret": secret, "previous_valid_until": now + timedelta(hours=24)})

    def _change(self, request: Request, *, partial: bool) -> Response:
        channel = self.get_object()
        data = self._valid(request, partial=partial)
        if "kind" in data and data["kind"] != channel.kind:
            raise ServiceError("kind", "A channel's kind can't change; add a new channel instead.")
        saved = services.channel_change(
            channel=channel,
            now=timezone.now(),
            name=data.get("name"),
            config=data.get("config"),
            enabled=data.get("enabled") if partial is False or "enabled" in request.data else None,
        )
        return Response(self._saved(saved))

    def _valid(self, request: Request, *, partial: bool) -> dict[str, Any]:
        serializer = ChannelWriteSerializer(data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def _saved(self, saved: services.ChannelSaved) -> dict[str, Any]:
        data = dict(ChannelSerializer(saved.channel).data)
        if saved.generated_secret:
            data["signing_secret"] = saved.generated_secret
        if saved.test is not None:
            data["test"] = AttemptSerializer(saved.test).data
        return data


DEFAULT_POLICY = "default"
# What an organization without a default policy gets (the web app's policy page says it too).
NO_DEFAULT_POLICY = "No policy: every enabled channel hears of every incident."


class AlertPolicyViewSet(OrganizationScopedMixin, viewsets.ViewSet):
    """Read and set who hears of incidents: ``default`` (the organization's) or a healthcheck's own policy.

    A healthcheck without a policy follows the default; with neither, every enabled channel hears
    of every incident.
    """

    lookup_url_kwarg = "key"
    lookup_value_regex = f"{DEFAULT_POLICY}|{UUID_PATTERN}"

    @extend_schema(responses=AlertPolicySerializer(many=True))
    def list(self, request: Request) -> Response:
        policies = selectors.alert_policies_of(organization=self.organization)
        return Response([AlertPolicySerializer(policy).data for policy in policies])

    @extend_schema(responses={200: AlertPolicySerializer, 404: OpenApiTypes.OBJECT})
    def retrieve(self, request: Request, key: str | None = None) -> Response:
        healthcheck = self._healthcheck(key)
        policy = (
            selectors.alert_policies_of(organization=self.organization)
            .filter(healthcheck=healthcheck)
            .first()
        )
        if policy is None:
            raise NotFound(
                NO_DEFAULT_POLICY
                if healthcheck is None
                else "No policy of its own: the healthcheck follows the default."
            )
        return Response(AlertPolicySerializer(policy).data)

    @extend_schema(request=AlertPolicySerializer, responses=AlertPolicySerializer)
    def update(self, request: Request, key: str | None = None) -> Response:
        serializer = AlertPolicySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        policy = services.alert_policy_put(
            organization=self.organization,
            healthcheck=self._healthcheck(key),
            **serializer.to_service_changes(),
        )
        return Response(AlertPolicySerializer(policy).data)

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, key: str | None = None) -> Response:
        if not services.alert_policy_delete(
            organization=self.organization, healthcheck=self._healthcheck(key)
        ):
            raise NotFound("There is no such policy.")
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _healthcheck(self, key: str | None) -> Healthcheck | None:
        if key is None or key == DEFAULT_POLICY:
            return None
        healthcheck = Healthcheck.objects.filter(organization=self.organization, public_id=key).first()
        if healthcheck is None:
            raise NotFound("No such healthcheck.")
        return healthcheck
