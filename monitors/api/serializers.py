"""Shape healthchecks, regions and the organization for the API; services do the writing."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from monitors.models import Healthcheck, Organization, Plan, ProbeResult, Region, StatusChange, ToolChange
from probes.config import DEFAULT_TIMEOUT, HTTP_METHODS, MAX_HEADERS, MAX_REQUIRED_TOOLS, TIMEOUT_RANGE
from probes.types import CheckType, Status

MAX_TAGS = 20
MAX_INTERVAL_SECONDS = 24 * 60 * 60

_HEADERS_HELP = (
    f"Request headers sent on every request, as names to values (at most {MAX_HEADERS}, 8 KiB in all). "
    'Values are secrets: stored encrypted and answered masked as "********"; send a masked value '
    "back to keep the stored one, leave `headers` out of an update to keep them all."
)


def _headers_schema(example: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "maxProperties": MAX_HEADERS,
        "description": _HEADERS_HELP,
        "example": example,
    }


_TIMEOUT_SCHEMA = {
    "type": "number",
    "minimum": TIMEOUT_RANGE[0],
    "maximum": TIMEOUT_RANGE[1],
    "default": DEFAULT_TIMEOUT,
    "description": "Seconds for the whole check, sign-in discovery and redirects included.",
}

# The config schemas are written out rather than derived from serializers: they document the
# exact API shape (camelCase keys, no unknown keys), while probes.config does the validating.
MCP_CONFIG_SCHEMA: dict[str, Any] = {
    "title": "MCP check config (type 13)",
    "type": "object",
    "additionalProperties": False,
    "required": ["uri"],
    "properties": {
        "uri": {
            "type": "string",
            "format": "uri",
            "description": "The MCP endpoint, Streamable HTTP or legacy SSE; it often ends in /mcp.",
            "example": "https://mcp.example.com/mcp",
        },
        "headers": _headers_schema({"Authorization": "Bearer your-key"}),
        "requiredTools": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "uniqueItems": True,
            "maxItems": MAX_REQUIRED_TOOLS,
            "description": "Tool names that must be listed; the check is down naming the missing ones.",
            "example": ["search_docs", "read_page"],
        },
        "minTools": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "The check is down when fewer tools are listed.",
            "example": 2,
        },
        "timeout": _TIMEOUT_SCHEMA,
    },
}

HTTP_CONFIG_SCHEMA: dict[str, Any] = {
    "title": "HTTP check config (type 1)",
    "type": "object",
    "additionalProperties": False,
    "required": ["uri"],
    "properties": {
        "uri": {"type": "string", "format": "uri", "description": "The URL to request."},
        "method": {"type": "string", "enum": list(HTTP_METHODS), "default": "GET"},
        "headers": _headers_schema({"Accept": "text/html"}),
        "body": {"type": "string", "description": "Request body; POST only."},
        "expectedStatus": {
            "type": "array",
            "items": {"oneOf": [{"type": "integer", "minimum": 100, "maximum": 599}, {"type": "string"}]},
            "minItems": 1,
            "default": ["2xx"],
            "description": 'Statuses that count as up: codes (200), classes ("2xx") or ranges ("200-299").',
        },
        "keyword": {
            "type": ["string", "null"],
            "description": "Text that must appear in the body (or must not, with keywordAbsent).",
        },
        "keywordAbsent": {"type": "boolean", "default": False},
        "followRedirects": {"type": "boolean", "default": True},
        "timeout": _TIMEOUT_SCHEMA,
    },
}


@extend_schema_field(
    {
        "anyOf": [MCP_CONFIG_SCHEMA, HTTP_CONFIG_SCHEMA],
        "description": "What to check; its shape depends on `type`. Header values are answered masked.",
    }
)
class ConfigField(serializers.JSONField):
    """Accept a JSON object; the service validates it against the check type."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        return data


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "enum": [int(t) for t in CheckType]},
            {"type": "string", "enum": [t.label for t in CheckType]},
        ],
        "description": '1 or "http", 13 or "mcp". Answered as the number.',
    }
)
class CheckTypeField(serializers.Field):
    default_error_messages = {"invalid": 'Unknown type {value!r}; use 1 or "http", 13 or "mcp".'}

    def to_internal_value(self, data: Any) -> CheckType:
        try:
            return CheckType.parse(data)
        except ValueError:
            self.fail("invalid", value=data)
            raise  # unreachable: fail() raises

    def to_representation(self, value: int) -> int:
        return int(value)


class RelatedNamesField(serializers.ListField):
    """Write a list of names; read them back from a related manager, sorted."""

    def __init__(self, *, attribute: str, **kwargs: Any) -> None:
        self.attribute = attribute
        super().__init__(**kwargs)

    def to_representation(self, data: Any) -> list[str]:
        return sorted(getattr(item, self.attribute) for item in data.all())


class HealthcheckSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    type = CheckTypeField()
    type_name = serializers.SerializerMethodField()
    config = ConfigField()
    interval = serializers.IntegerField(
        source="interval_seconds",
        required=False,
        min_value=1,
        max_value=MAX_INTERVAL_SECONDS,
        help_text="Seconds between checks; at least the plan's minimum. Default 60 or the plan's minimum.",
    )
    regions = RelatedNamesField(
        attribute="slug",
        child=serializers.SlugField(max_length=32),
        required=False,
        allow_empty=False,
        max_length=32,
        help_text="Region slugs to check from; default every region the plan allows.",
    )
    tags = RelatedNamesField(
        attribute="name",
        source="tag_rows",
        child=serializers.CharField(max_length=64, trim_whitespace=True, allow_blank=False),
        required=False,
        max_length=MAX_TAGS,
    )
    paused = serializers.BooleanField(required=False)
    status = serializers.ChoiceField(choices=[s.value for s in Status], read_only=True)
    recheck_count = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=5,
        help_text="Rechecks in a region before it counts as down (default 2).",
    )
    recheck_delay_seconds = serializers.IntegerField(
        required=False, min_value=1, max_value=60, help_text="Seconds between rechecks (default 5)."
    )
    quorum = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Regions that must be down for the check to be down; null: more than half, at least one.",
    )
    degraded_threshold_ms = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=120_000,
        help_text="Degraded when the response time in a quorum of regions is above this (ms); null: off.",
    )

    class Meta:
        model = Healthcheck
        fields = [
            "id",
            "name",
            "type",
            "type_name",
            "config",
            "interval",
            "regions",
            "tags",
            "paused",
            "recheck_count",
            "recheck_delay_seconds",
            "quorum",
            "degraded_threshold_ms",
            "status",
            "status_changed_at",
            "next_check_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["status_changed_at", "next_check_at", "created_at", "updated_at"]

    def get_type_name(self, obj: Healthcheck) -> str:
        try:
            return CheckType(obj.type).label
        except ValueError:
            return "unknown"

    def validate_name(self, value: str) -> str:
        if any(ord(ch) < 0x20 for ch in value):
            raise serializers.ValidationError("Must not contain control characters.")
        return value

    def validate_tags(self, value: list[str]) -> list[str]:
        if any(any(ord(ch) < 0x20 for ch in tag) for tag in value):
            raise serializers.ValidationError("Tags must not contain control characters.")
        if len(set(value)) != len(value):
            raise serializers.ValidationError("Tags must be unique.")
        return value

    def to_service_changes(self) -> dict[str, Any]:
        """Return the validated data under the names the services take."""
        data = dict(self.validated_data)
        renames = {"type": "check_type", "regions": "region_slugs", "tag_rows": "tags"}
        return {renames.get(key, key): value for key, value in data.items()}


class RegionSerializer(serializers.ModelSerializer):
    allowed = serializers.SerializerMethodField(
        help_text="Whether the organization's plan allows this region."
    )

    class Meta:
        model = Region
        fields = ["slug", "name", "allowed"]

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_allowed(self, obj: Region) -> bool:
        return obj.slug in self.context.get("allowed_slugs", ())


class PlanSerializer(serializers.ModelSerializer):
    allowed_regions = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)

    class Meta:
        model = Plan
        fields = [
            "slug",
            "name",
            "max_healthchecks",
            "min_interval_seconds",
            "retention_days",
            "allowed_regions",
        ]


class OrganizationSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    plan = PlanSerializer(read_only=True)
    healthchecks = serializers.SerializerMethodField()

    class Meta:
        model = Organization
        fields = ["id", "slug", "name", "plan", "healthchecks", "created_at"]

    def get_healthchecks(self, obj: Organization) -> int:
        return obj.healthchecks.count()


class ProbeResultSerializer(serializers.ModelSerializer):
    region = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    server = serializers.SerializerMethodField()
    timings = serializers.SerializerMethodField()
    kind = serializers.SerializerMethodField()

    class Meta:
        model = ProbeResult
        fields = [
            "region",
            "slot",
            "attempt",
            "checked_at",
            "status",
            "kind",
            "reason",
            "http_status",
            "server",
            "protocol",
            "access",
            "signin_server",
            "transport",
            "tool_count",
            "tool_digest",
            "missing_tools",
            "timings",
        ]

    @extend_schema_field(OpenApiTypes.STR)
    def get_kind(self, obj: ProbeResult) -> str | None:
        return obj.kind or None

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_server(self, obj: ProbeResult) -> dict[str, str] | None:
        return {"name": obj.server_name, "version": obj.server_version} if obj.server_name else None

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_timings(self, obj: ProbeResult) -> dict[str, float | None]:
        return {
            "dns_ms": obj.dns_ms,
            "tcp_ms": obj.tcp_ms,
            "tls_ms": obj.tls_ms,
            "ttfb_ms": obj.ttfb_ms,
            "total_ms": obj.total_ms,
        }


class StatusChangeSerializer(serializers.ModelSerializer):
    class Meta:
        model = StatusChange
        fields = ["at", "from_status", "to_status", "reason", "failed_regions", "missing_tools"]


class ToolChangeSerializer(serializers.ModelSerializer):
    region = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = ToolChange
        fields = ["at", "region", "removed", "added", "new_required_inputs", "previous_digest", "digest"]


class UptimeFiguresSerializer(serializers.Serializer):
    runs = serializers.IntegerField()
    failures = serializers.IntegerField()
    degraded = serializers.IntegerField()
    uptime = serializers.FloatField(allow_null=True, help_text="Share of runs that were not down, 0–1.")
    p50_ms = serializers.FloatField(allow_null=True)
    p95_ms = serializers.FloatField(allow_null=True)


class UptimeSerializer(serializers.Serializer):
    start = serializers.DateTimeField(source="from")
    end = serializers.DateTimeField(source="to")
    overall = UptimeFiguresSerializer()
    regions = serializers.DictField(child=UptimeFiguresSerializer())
