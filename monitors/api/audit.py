"""GET /api/v1/audit-events/: the organization's audit log, for its owners and admins and its API keys.

An API key is accepted as everywhere in the API (only owners and admins make keys); a person
signed in to the web app may read it with their session too, when they are an owner or admin of
the organization they work in (a member or viewer gets 403).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, permissions, serializers, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import ValidationError

from monitors.api.authentication import ApiKeyAuthentication
from monitors.api.filters import _moment
from monitors.models import ApiKey, AuditEvent, Membership, Organization
from monitors.roles import MANAGERS, SESSION_ORGANIZATION
from monitors.selectors import memberships_of
from monitors.selectors_audit import audit_events_of

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.views import APIView

ACTION_PATTERN = r"^[a-z_]+(\.[a-z_]+)?$"


class AuditActorSerializer(serializers.Serializer[AuditEvent]):
    kind = serializers.CharField(
        source="actor_kind", help_text="person, api_key, oauth_client, anonymous or system."
    )
    name = serializers.CharField(source="actor_label", help_text="Who, as shown.")
    person = serializers.CharField(source="actor_email", help_text="The person's email, or empty.")
    api_key = serializers.UUIDField(source="actor_api_key_public_id", allow_null=True)
    oauth_client = serializers.CharField(source="actor_oauth_client_id")
    via = serializers.CharField(help_text="web, api, uptimyctl, mcp or system.")
    address = serializers.IPAddressField(allow_null=True)
    user_agent = serializers.CharField()


class AuditTargetSerializer(serializers.Serializer[AuditEvent]):
    type = serializers.CharField(source="target_type")
    id = serializers.CharField(source="target_id")
    name = serializers.CharField(source="target_name")


class AuditEventSerializer(serializers.ModelSerializer[AuditEvent]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    actor = AuditActorSerializer(source="*", read_only=True)
    target = AuditTargetSerializer(source="*", read_only=True)
    before = serializers.JSONField(read_only=True, help_text="The object before the change, secrets masked.")
    after = serializers.JSONField(read_only=True, help_text="The object after the change, secrets masked.")

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "action", "actor", "target", "before", "after"]
        read_only_fields = fields


class OwnersAdminsOrKey(permissions.BasePermission):
    """Let a read-write API key of the organization in, or a signed-in owner or admin of it.

    A read-only key is what a dashboard or a status tool is handed; the log names people and
    their addresses, which only those who manage the organization (or act for them) may read.
    """

    message = "Only an owner or admin of the organization, or one of its read-write API keys, can read its audit log."

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, ApiKey):
            return request.auth.scope == ApiKey.Scope.READ_WRITE
        membership = session_membership(request)
        return membership is not None and membership.role in MANAGERS


def session_membership(request: Request) -> Membership | None:
    """Return the signed-in person's membership in the organization they work in (the web app's choice)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or isinstance(request.auth, ApiKey):
        return None
    memberships = list(memberships_of(user=user))
    wanted = request.session.get(SESSION_ORGANIZATION)
    return next((m for m in memberships if str(m.organization.public_id) == wanted), None) or (
        memberships[0] if memberships else None
    )


QUERY = [
    OpenApiParameter(
        "person", OpenApiTypes.EMAIL, description="Changes by this person (or an OAuth client for them)."
    ),
    OpenApiParameter("api_key", OpenApiTypes.UUID, description="Changes made with this API key (its id)."),
    OpenApiParameter(
        "oauth_client", OpenApiTypes.STR, description="Changes made by this OAuth client (its client_id)."
    ),
    OpenApiParameter(
        "target_type", OpenApiTypes.STR, description="The changed object's type, e.g. healthcheck."
    ),
    OpenApiParameter("target_id", OpenApiTypes.STR, description="The changed object's id."),
    OpenApiParameter(
        "action",
        OpenApiTypes.STR,
        description="An action (healthcheck.updated) or a type's every action (healthcheck).",
    ),
    OpenApiParameter(
        "since", OpenApiTypes.DATETIME, description="Changes at or after this ISO 8601 instant."
    ),
    OpenApiParameter("until", OpenApiTypes.DATETIME, description="Changes before this ISO 8601 instant."),
]


class AuditEventViewSet(mixins.ListModelMixin, viewsets.GenericViewSet[AuditEvent]):
    """List the organization's audit events, newest first: who changed what, when, from where."""

    serializer_class = AuditEventSerializer
    authentication_classes = [ApiKeyAuthentication, SessionAuthentication]
    permission_classes = [OwnersAdminsOrKey]

    @extend_schema(parameters=QUERY)
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[AuditEvent]:
        if getattr(self, "swagger_fake_view", False):
            return AuditEvent.objects.none()
        return audit_events_of(organization=self._organization(), **audit_filters(self.request.query_params))

    def _organization(self) -> Organization:
        if isinstance(self.request.auth, ApiKey):
            return self.request.auth.organization
        membership = session_membership(self.request)
        assert membership is not None  # guaranteed by OwnersAdminsOrKey
        return membership.organization


def audit_filters(params: Any) -> dict[str, Any]:
    """Return ``audit_events_of``'s filters from query parameters; a bad value is a 400 naming it."""
    filters: dict[str, Any] = {}
    for name in ("person", "oauth_client", "target_type", "target_id"):
        value = (params.get(name) or "").strip()
        if value:
            filters[name] = value[:2000]
    raw_key = (params.get("api_key") or "").strip()
    if raw_key:
        try:
            filters["api_key"] = UUID(raw_key)
        except ValueError:
            raise ValidationError({"api_key": [f"Not an API key id: {raw_key[:40]!r}."]}) from None
    action = (params.get("action") or "").strip()
    if action:
        if not re.match(ACTION_PATTERN, action):
            raise ValidationError(
                {"action": ["An action such as healthcheck.updated, or a type such as healthcheck."]}
            )
        filters["action"] = action
    since, until = _moment(params, "since"), _moment(params, "until")
    if since and until and since >= until:
        raise ValidationError({"since": ["Must be before `until`."]})
    filters["since"], filters["until"] = since, until
    return filters
