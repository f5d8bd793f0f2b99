"""Shape status pages, components, groups and published incidents for the owners' API; services write."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from monitors.api.strict import RejectUnknownFields
from statuspages.models import (
    Component,
    ComponentGroup,
    ComponentStatus,
    IncidentUpdate,
    PublishedIncident,
    StatusPage,
    Subscriber,
)
from statuspages.selectors import BADGE_NAMES
from statuspages.services.pages import MIN_PASSWORD_LENGTH, domain_record_name

MAX_AFFECTED_COMPONENTS = 200
MAX_BODY_CHARS = 20_000


class StatusPageSerializer(RejectUnknownFields, serializers.ModelSerializer[StatusPage]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    slug = serializers.SlugField(max_length=64)
    # Checked by the service (an IANA name; http or https only), so the error says what to fix.
    time_zone = serializers.CharField(max_length=64, required=False)
    logo_url = serializers.CharField(max_length=2048, required=False, allow_blank=True)
    custom_domain = serializers.CharField(max_length=253, required=False, allow_blank=True, allow_null=True)
    password = serializers.CharField(
        write_only=True,
        required=False,
        min_length=MIN_PASSWORD_LENGTH,
        max_length=1024,
        trim_whitespace=False,
    )
    domain_token = serializers.CharField(read_only=True)
    domain_record = serializers.SerializerMethodField()
    domain_verified = serializers.BooleanField(read_only=True)

    class Meta:
        model = StatusPage
        fields = [
            "id",
            "slug",
            "title",
            "description",
            "logo_url",
            "time_zone",
            "access",
            "password",
            "custom_domain",
            "domain_token",
            "domain_record",
            "domain_verified",
            "draft_incidents",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def get_domain_record(self, page: StatusPage) -> str | None:
        """Name the TXT record to publish the token at, while a custom domain is set."""
        return domain_record_name(page.custom_domain) if page.custom_domain else None


class ComponentGroupSerializer(RejectUnknownFields, serializers.ModelSerializer[ComponentGroup]):
    id = serializers.UUIDField(source="public_id", read_only=True)

    class Meta:
        model = ComponentGroup
        fields = ["id", "name", "position", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]


class ComponentSerializer(RejectUnknownFields, serializers.ModelSerializer[Component]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    healthcheck = serializers.UUIDField(source="healthcheck.public_id")
    group = serializers.UUIDField(source="group.public_id", allow_null=True, required=False)
    display_name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    badge_token = serializers.CharField(
        read_only=True,
        help_text="The key of this component's badge URLs; the only one on a password page. Rotate it with "
        "POST …/rotate-badge-token/.",
    )
    badges = serializers.SerializerMethodField()

    class Meta:
        model = Component
        fields = [
            "id",
            "healthcheck",
            "display_name",
            "description",
            "group",
            "position",
            "only_show_when_not_operational",
            "show_mcp_details",
            "declared_status",
            "badge_token",
            "badges",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def get_badges(self, component: Component) -> dict[str, str]:
        """Return the component's badge URLs (SVG, and shields.io's endpoint JSON), keyed by badge name."""
        page = component.page
        # A password page's component ids open nothing: its badges go by the token alone.
        key = component.badge_token if page.is_private else str(component.public_id)
        base = f"/s/{page.slug}/badges/{key}/"
        request = self.context.get("request")
        if request is not None:
            base = request.build_absolute_uri(base)
        urls = {name: f"{base}{name}.svg" for name in BADGE_NAMES}
        urls.update({f"{name}-json": f"{base}{name}.json" for name in BADGE_NAMES})
        return urls

    def to_service_changes(self) -> dict[str, Any]:
        """Return the validated fields as the service takes them: references by public id."""
        data = dict(self.validated_data)
        if "healthcheck" in data:
            data["healthcheck"] = data["healthcheck"]["public_id"]
        if "group" in data:
            data["group"] = data["group"]["public_id"] if data["group"] else None
        return data


class AffectedComponentSerializer(serializers.Serializer[Any]):
    """Describe one component's change of status an update declared (the schema of ``affected_components``)."""

    code = serializers.CharField()
    name = serializers.CharField()
    old_status = serializers.ChoiceField(choices=ComponentStatus.choices)
    new_status = serializers.ChoiceField(choices=ComponentStatus.choices)


class IncidentUpdateSerializer(RejectUnknownFields, serializers.ModelSerializer[IncidentUpdate]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    body = serializers.CharField(max_length=MAX_BODY_CHARS)
    components = serializers.DictField(
        child=serializers.ChoiceField(choices=ComponentStatus.choices),
        required=False,
        write_only=True,
        help_text="Each affected component's status from this update on, while the incident is open: "
        '{"<component id>": "major_outage", …} (operational, degraded_performance, partial_outage, '
        "major_outage, under_maintenance).",
    )
    affected_components = serializers.SerializerMethodField(
        help_text="What this update declared: each component's code (its id), name, old_status and new_status."
    )

    class Meta:
        model = IncidentUpdate
        fields = ["id", "status", "body", "components", "affected_components", "created_at"]
        read_only_fields = ["created_at"]

    def validate_components(self, value: dict[str, str]) -> dict[UUID, str]:
        """Check that each key is a component id, and no more than MAX_AFFECTED_COMPONENTS are named."""
        if len(value) > MAX_AFFECTED_COMPONENTS:
            raise serializers.ValidationError(f"Name at most {MAX_AFFECTED_COMPONENTS} components.")
        statuses: dict[UUID, str] = {}
        for key, status in value.items():
            try:
                statuses[UUID(str(key))] = status
            except ValueError:
                raise serializers.ValidationError(f"{str(key)[:64]!r} is not a component id.") from None
        return statuses

    @extend_schema_field(AffectedComponentSerializer(many=True))
    def get_affected_components(self, update: IncidentUpdate) -> list[dict[str, str]]:
        return [
            {
                "code": str(change.component.public_id),
                "name": change.component.display_name,
                "old_status": change.old_status,
                "new_status": change.new_status,
            }
            for change in update.affected.all()
        ]


class ComponentIdsField(serializers.ListField):
    """Take the affected components' ids; answer them from the incident's components."""

    def to_representation(self, data: Any) -> list[str]:
        return [str(component.public_id) for component in data.all()]


class PublishedIncidentSerializer(RejectUnknownFields, serializers.ModelSerializer[PublishedIncident]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    components = ComponentIdsField(
        child=serializers.UUIDField(), required=False, max_length=MAX_AFFECTED_COMPONENTS
    )
    body = serializers.CharField(
        write_only=True,
        required=False,
        max_length=MAX_BODY_CHARS,
        help_text="The first update's text (on create).",
    )
    updates = IncidentUpdateSerializer(many=True, read_only=True)
    draft = serializers.BooleanField(
        required=False, help_text="On create: keep it for the owners only until published (POST …/publish/)."
    )
    drafted_for = serializers.UUIDField(
        source="drafted_for.public_id",
        read_only=True,
        allow_null=True,
        help_text="The healthcheck whose failure drafted it (drafted incidents only).",
    )

    class Meta:
        model = PublishedIncident
        fields = [
            "id",
            "title",
            "impact",
            "status",
            "components",
            "draft",
            "drafted_for",
            "published_at",
            "body",
            "created_at",
            "updated_at",
            "monitoring_at",
            "resolved_at",
            "updates",
        ]
        read_only_fields = ["created_at", "updated_at", "monitoring_at", "resolved_at", "published_at"]


class SubscriberSerializer(RejectUnknownFields, serializers.ModelSerializer[Subscriber]):
    """Add an email (it gets a confirmation mail) or a webhook (its secret is answered once, on create)."""

    id = serializers.UUIDField(source="public_id", read_only=True)
    kind = serializers.ChoiceField(choices=Subscriber.Kind.choices)
    email = serializers.CharField(max_length=254, required=False, allow_blank=True)
    url = serializers.CharField(
        max_length=2048,
        required=False,
        write_only=True,
        help_text="The webhook's address; answered masked as url_shown.",
    )
    components = ComponentIdsField(
        child=serializers.UUIDField(),
        required=False,
        max_length=MAX_AFFECTED_COMPONENTS,
        help_text="Only these components' incidents and maintenance (empty: the whole page).",
    )
    confirmed = serializers.SerializerMethodField()

    class Meta:
        model = Subscriber
        fields = [
            "id",
            "kind",
            "email",
            "url",
            "url_shown",
            "components",
            "confirmed",
            "confirmed_at",
            "disabled_reason",
            "created_at",
        ]
        read_only_fields = ["url_shown", "confirmed_at", "disabled_reason", "created_at"]

    def get_confirmed(self, subscriber: Subscriber) -> bool:
        return subscriber.confirmed_at is not None

    def to_representation(self, instance: Subscriber) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        if instance.all_components:
            data["components"] = []
        return data


class WebhookSecretSerializer(SubscriberSerializer):
    """Answer a new webhook subscriber with its signing secret: the only time it is shown."""

    secret = serializers.CharField(read_only=True, help_text="whsec_…: verify each delivery with it.")

    class Meta(SubscriberSerializer.Meta):
        fields = [*SubscriberSerializer.Meta.fields, "secret"]
