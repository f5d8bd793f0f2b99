"""The owners' API: status pages, and under each page its components, groups and published incidents."""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar
from uuid import UUID

from django.db.models import Model, QuerySet
from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from monitors.api.views import OrganizationScopedMixin
from monitors.models import Organization
from statuspages import selectors, services
from statuspages.api.serializers import (
    ComponentGroupSerializer,
    ComponentSerializer,
    IncidentUpdateSerializer,
    PublishedIncidentSerializer,
    StatusPageSerializer,
    SubscriberSerializer,
    WebhookSecretSerializer,
)
from statuspages.dns import txt_records
from statuspages.models import (
    Component,
    ComponentGroup,
    IncidentUpdate,
    PublishedIncident,
    StatusPage,
    Subscriber,
)

_M = TypeVar("_M", bound=Model)

# The resolver the domain check asks; tests replace it with a fake (statuspages.dns.txt_records).
resolver = txt_records


class _Crud(
    OrganizationScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[_M],
    Generic[_M],
):
    lookup_field = "public_id"
    lookup_url_kwarg = "id"

    def _valid(self, instance: _M | None = None, *, partial: bool = False) -> serializers.ModelSerializer[_M]:
        serializer = self.get_serializer(instance, data=self.request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        assert isinstance(serializer, serializers.ModelSerializer)
        return serializer

    def _shown(self, instance: _M, code: int = status.HTTP_200_OK) -> Response:
        return Response(self.get_serializer(instance).data, status=code)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        instance = self.get_object()
        serializer = self._valid(instance, partial=kwargs.get("partial", False))
        return self._shown(self._change(instance, serializer))

    def _change(self, instance: _M, serializer: serializers.ModelSerializer[_M]) -> _M:
        raise NotImplementedError


class StatusPageViewSet(_Crud[StatusPage]):
    """Create and manage the organization's status pages; a password is never answered."""

    serializer_class = StatusPageSerializer

    def get_queryset(self) -> QuerySet[StatusPage]:
        if getattr(self, "swagger_fake_view", False):
            return StatusPage.objects.none()
        return selectors.status_pages_of(organization=self.organization)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self._valid()
        page = services.status_page_create(organization=self.organization, changes=serializer.validated_data)
        return self._shown(page, status.HTTP_201_CREATED)

    def _change(
        self, instance: StatusPage, serializer: serializers.ModelSerializer[StatusPage]
    ) -> StatusPage:
        return services.status_page_update(page=instance, changes=serializer.validated_data)

    def perform_destroy(self, instance: StatusPage) -> None:
        services.status_page_delete(page=instance)

    @extend_schema(request=None, responses=StatusPageSerializer)
    @action(detail=True, methods=["post"], url_path="verify-domain")
    def verify_domain(self, request: Request, id: UUID | None = None) -> Response:
        """Check that ``_uptimy.<custom domain>`` has a TXT record holding the page's token."""
        page = services.status_page_verify_domain(
            page=self.get_object(), resolver=resolver, now=timezone.now()
        )
        return self._shown(page)


class _ScopedView(Protocol):
    """What _PageInUrl needs of the view it is combined with (OrganizationScopedMixin's organization)."""

    kwargs: dict[str, Any]

    @property
    def organization(self) -> Organization: ...


class _PageInUrl:
    """Find the page named in the URL (``page_id``) among the key's organization's pages, once per request."""

    @property
    def page(self: _ScopedView) -> StatusPage:
        cached: StatusPage | None = getattr(self, "_page", None)
        if cached is None:
            cached = (
                selectors.status_pages_of(organization=self.organization)
                .filter(public_id=self.kwargs["page_id"])
                .first()
            )
            if cached is None:
                raise Http404("No status page with this id.")
            setattr(self, "_page", cached)  # noqa: B010 - a protocol-typed self has no _page to assign
        return cached


class _OnPage(_PageInUrl, _Crud[_M]):
    """Scope a page's parts to the page in the URL, itself scoped to the key's organization."""

    model: type[_M]

    def get_queryset(self) -> QuerySet[_M]:
        if getattr(self, "swagger_fake_view", False):
            return self.model._default_manager.none()
        return self.model._default_manager.filter(page=self.page)


class ComponentViewSet(_OnPage[Component]):
    """Put healthchecks of the organization on a page as components."""

    model = Component
    serializer_class = ComponentSerializer

    def get_queryset(self) -> QuerySet[Component]:
        return super().get_queryset().select_related("healthcheck", "group", "page")

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self._valid()
        assert isinstance(serializer, ComponentSerializer)
        component = services.component_create(page=self.page, changes=serializer.to_service_changes())
        return self._shown(component, status.HTTP_201_CREATED)

    def _change(self, instance: Component, serializer: serializers.ModelSerializer[Component]) -> Component:
        assert isinstance(serializer, ComponentSerializer)
        return services.component_update(component=instance, changes=serializer.to_service_changes())

    def perform_destroy(self, instance: Component) -> None:
        services.component_delete(component=instance)

    @extend_schema(request=None, responses=ComponentSerializer)
    @action(detail=True, methods=["post"], url_path="rotate-badge-token")
    def rotate_badge_token(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Give the component a new badge token: badge URLs with the old one answer 404 from now on."""
        return self._shown(services.component_rotate_badge_token(component=self.get_object()))


class ComponentGroupViewSet(_OnPage[ComponentGroup]):
    """Group a page's components under headings (one level)."""

    model = ComponentGroup
    serializer_class = ComponentGroupSerializer

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = self._valid().validated_data
        group = services.group_create(page=self.page, name=data["name"], position=data.get("position", 0))
        return self._shown(group, status.HTTP_201_CREATED)

    def _change(
        self, instance: ComponentGroup, serializer: serializers.ModelSerializer[ComponentGroup]
    ) -> ComponentGroup:
        return services.group_update(group=instance, changes=serializer.validated_data)

    def perform_destroy(self, instance: ComponentGroup) -> None:
        services.group_delete(group=instance)


class PublishedIncidentViewSet(_OnPage[PublishedIncident]):
    """Publish incidents on a page; ``body`` on create is the first update. Drafts are listed too (``draft``)."""

    model = PublishedIncident
    serializer_class = PublishedIncidentSerializer

    def get_queryset(self) -> QuerySet[PublishedIncident]:
        if getattr(self, "swagger_fake_view", False):
            return PublishedIncident.with_drafts.none()
        # The owners see their drafts: the public readers' default manager leaves them out.
        return (
            PublishedIncident.with_drafts.filter(page=self.page)
            .select_related("drafted_for")
            .prefetch_related("components", "updates__affected__component")
        )

    @extend_schema(request=None, responses=PublishedIncidentSerializer)
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, page_id: UUID | None = None, id: UUID | None = None) -> Response:
        """Make a draft public as it stands and tell the page's subscribers; a published incident is answered as is."""
        incident = services.incident_publish(incident=self.get_object(), now=timezone.now())
        return self._shown(self.get_queryset().get(pk=incident.pk))

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = self._valid().validated_data
        if not data.get("body"):
            raise serializers.ValidationError({"body": ["Say what is happening: the first update's text."]})
        incident = services.incident_create(
            page=self.page, changes=data, body=data["body"], now=timezone.now()
        )
        return self._shown(self.get_queryset().get(pk=incident.pk), status.HTTP_201_CREATED)

    def _change(
        self, instance: PublishedIncident, serializer: serializers.ModelSerializer[PublishedIncident]
    ) -> PublishedIncident:
        changed = services.incident_update(
            incident=instance, changes=serializer.validated_data, now=timezone.now()
        )
        return self.get_queryset().get(pk=changed.pk)

    def perform_destroy(self, instance: PublishedIncident) -> None:
        services.incident_delete(incident=instance)


class IncidentUpdateViewSet(
    OrganizationScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[IncidentUpdate],
):
    """Add updates to a published incident; each sets the incident's status."""

    serializer_class = IncidentUpdateSerializer
    lookup_field = "public_id"
    lookup_url_kwarg = "id"

    @property
    def incident(self) -> PublishedIncident:
        cached = getattr(self, "_incident", None)
        if cached is None:
            cached = PublishedIncident.with_drafts.filter(
                page__organization=self.organization,
                page__public_id=self.kwargs["page_id"],
                public_id=self.kwargs["incident_id"],
            ).first()
            if cached is None:
                raise Http404("No published incident with this id on this page.")
            self._incident = cached
        return cached

    def get_queryset(self) -> QuerySet[IncidentUpdate]:
        if getattr(self, "swagger_fake_view", False):
            return IncidentUpdate.objects.none()
        return IncidentUpdate.objects.filter(incident=self.incident).prefetch_related("affected__component")

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        update = services.incident_update_add(
            incident=self.incident,
            status=data["status"],
            body=data["body"],
            now=timezone.now(),
            components=data.get("components"),
        )
        return Response(
            self.get_serializer(self.get_queryset().get(pk=update.pk)).data, status=status.HTTP_201_CREATED
        )

    def perform_destroy(self, instance: IncidentUpdate) -> None:
        services.incident_update_delete(update=instance)


class SubscriberViewSet(
    _PageInUrl,
    OrganizationScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Subscriber],
):
    """List, add and remove a page's subscribers; a webhook's URL is masked and its secret answered once, on create."""

    serializer_class = SubscriberSerializer
    lookup_field = "public_id"
    lookup_url_kwarg = "id"

    def get_queryset(self) -> QuerySet[Subscriber]:
        if getattr(self, "swagger_fake_view", False):
            return Subscriber.objects.none()
        return Subscriber.objects.filter(page=self.page).prefetch_related("components")

    @extend_schema(request=SubscriberSerializer, responses={201: WebhookSecretSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        components = data.get("components") or None
        now = timezone.now()
        if data["kind"] == Subscriber.Kind.WEBHOOK:
            if not data.get("url"):
                raise serializers.ValidationError({"url": ["A webhook subscriber needs its URL."]})
            subscriber, secret = services.webhook_subscribe(
                page=self.page, url=data["url"], components=components, now=now
            )
            shown = dict(WebhookSecretSerializer(self.get_queryset().get(pk=subscriber.pk)).data)
            shown["secret"] = secret
            return Response(shown, status=status.HTTP_201_CREATED)
        if not data.get("email"):
            raise serializers.ValidationError({"email": ["An email subscriber needs its address."]})
        # The address gets a confirmation mail and nothing else until it confirms, as from the form.
        subscriber = services.email_subscribe(
            page=self.page, email=data["email"], components=components, now=now, by_owner=True
        )
        return Response(
            self.get_serializer(self.get_queryset().get(pk=subscriber.pk)).data,
            status=status.HTTP_201_CREATED,
        )

    def perform_destroy(self, instance: Subscriber) -> None:
        services.subscriber_delete(subscriber=instance)
