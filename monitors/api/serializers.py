"""Shape healthchecks, regions and the organization for the API; services do the writing.

Over 600 lines on purpose: one serializer per API shape (24), kept together because the
OpenAPI schema (drf-spectacular) and the web forms that reuse them read them as one vocabulary;
each is declarative fields and a few validators.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import Direction, extend_schema_field
from rest_framework import serializers

from monitors import quotes, scorecard
from monitors.api.strict import RejectUnknownFields
from monitors.maintenance import MAX_RULE_LENGTH, Occurrence
from monitors.models import (
    ApiKey,
    CauseChange,
    CertificateChange,
    Healthcheck,
    HealthcheckListing,
    Heartbeat,
    MaintenanceWindow,
    Organization,
    Plan,
    ProbeResult,
    Region,
    StatusChange,
    ToolChange,
)
from monitors.selectors import MaintenanceNow, Uptime, UptimeFigures, healthcheck_target
from monitors.services import result_unsaved, storable_outcome
from monitors.services.listings import NAMESPACE_MAX, URL_MAX
from probes.checks import CheckKind, UnknownCheckKind, check_kind, check_kinds, known_kinds_words
from probes.types import ProbeOutcome, Status

if TYPE_CHECKING:
    from drf_spectacular.openapi import AutoSchema

MAX_TAGS = 20
MAX_INTERVAL_SECONDS = 24 * 60 * 60


class ConfigField(serializers.JSONField):
    """Accept a JSON object; the service validates it against the check type."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        return data


# drf-spectacular registers extensions in an unannotated __init_subclass__, which strict mypy
# won't let a typed module call.
class ConfigFieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    """Document ``config`` as any registered check type's config schema, read when the schema is built."""

    target_class = ConfigField

    def map_serializer_field(self, auto_schema: AutoSchema, direction: Direction) -> dict[str, Any]:
        return {
            "anyOf": [dict(kind.schema) for kind in check_kinds()],
            "description": "What to check; its shape depends on `type`. Header values are answered masked.",
        }


# The value type is Any: a type comes in as its CheckKind but is read back from the healthcheck
# as the stored number, two types where Field has one for both directions.
class CheckTypeField(serializers.Field[Any, int | str, int, Healthcheck]):
    """Accept a registered check type by number or name; answer its number."""

    def to_internal_value(self, data: Any) -> CheckKind[Any]:
        try:
            return check_kind(data)
        except UnknownCheckKind as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: int) -> int:
        return int(value)


class CheckTypeFieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]  # as above
    """Document ``type`` as the registered numbers and names."""

    target_class = CheckTypeField

    def map_serializer_field(self, auto_schema: AutoSchema, direction: Direction) -> dict[str, Any]:
        kinds = check_kinds()
        return {
            "oneOf": [
                {"type": "integer", "enum": [kind.number for kind in kinds]},
                {"type": "string", "enum": [kind.name for kind in kinds]},
            ],
            "description": f"{known_kinds_words()}. Answered as the number.",
        }


class RelatedNamesField(serializers.ListField):
    """Write a list of names; read them back from a related manager, sorted."""

    def __init__(self, *, attribute: str, **kwargs: Any) -> None:
        self.attribute = attribute
        super().__init__(**kwargs)

    def to_representation(self, data: Any) -> list[str]:
        return sorted(getattr(item, self.attribute) for item in data.all())


class CauseSerializer(serializers.Serializer[Healthcheck]):
    """Read the cause of a failing check from the healthcheck's cause fields."""

    kind = serializers.CharField(
        source="cause_kind",
        help_text="The failure kind most failing regions share; `slow` when degraded by response time alone.",
    )
    reason = serializers.CharField(
        source="cause_reason",
        help_text=(
            "The failure's sentence, as the first region failing with `kind` reported it "
            '("Required tools missing: search_docs"); for `slow`, which regions and the threshold.'
        ),
    )
    failed_regions = serializers.DictField(
        source="cause_regions", child=serializers.CharField(), help_text="region slug -> failure kind"
    )
    missing_tools = serializers.ListField(source="cause_missing_tools", child=serializers.CharField())
    since = serializers.DateTimeField(source="cause_since", help_text="When this cause began.")


class QuoteState:
    """Name where the free-tier quote's verification stands (``quote_status``)."""

    NONE = "none"  # no pricing page entered
    PENDING = "pending"  # not fetched since it was entered
    FOUND = "found"  # the last fetch found it
    NOT_FOUND = "not_found"  # the last fetch did not (quote_problem says why)
    ALL = (NONE, PENDING, FOUND, NOT_FOUND)


def quote_state(listing: HealthcheckListing) -> str:
    """Return where the listing's quote verification stands (one of QuoteState.ALL)."""
    if not listing.pricing_url:
        return QuoteState.NONE
    if listing.quote_checked_at is None:
        return QuoteState.PENDING
    return QuoteState.NOT_FOUND if listing.quote_problem else QuoteState.FOUND


class HealthcheckListingSerializer(RejectUnknownFields, serializers.ModelSerializer[HealthcheckListing]):
    """A customer's own listing of their MCP server: the publisher evidence of its scorecard.

    Written whole (PUT); the service (monitors.services.listing_set) checks each field and names it
    in a 400. Uptimy fetches the pricing page (robots.txt honoured, at most daily) and records when
    the quote was last found there: scorecard check 12 passes within 90 days of that.
    """

    namespace = serializers.CharField(
        max_length=NAMESPACE_MAX,
        allow_blank=True,  # the service's message says what to enter
        help_text="The registry-style server name: a reverse-DNS namespace, a slash and a name, e.g. "
        "`io.github.owner/server` or `com.example/server` (checks 18 and 20 read it).",
    )
    website_url = serializers.CharField(
        max_length=URL_MAX, required=False, allow_blank=True, help_text="The publisher's website (check 18)."
    )
    repository_url = serializers.CharField(
        max_length=URL_MAX,
        required=False,
        allow_blank=True,
        help_text="The source repository (checks 19, 20; a GitHub repository's licence is looked up for 22).",
    )
    pricing_url = serializers.CharField(
        max_length=URL_MAX,
        required=False,
        allow_blank=True,
        help_text="The publisher's page stating the free tier; required with `quote`.",
    )
    quote = serializers.CharField(
        max_length=quotes.QUOTE_MAX,
        required=False,
        allow_blank=True,
        help_text='Text the pricing page states, e.g. "Free tier: 1,000 calls a month". It must say "free" or '
        '"freemium" (a free trial does not count); case, whitespace and typographic quotes and dashes are '
        "ignored when it is looked for in the page's visible text.",
    )
    quote_status = serializers.SerializerMethodField(
        help_text="none (no pricing page), pending (not fetched yet), found (the last fetch found it), "
        "not_found (see quote_problem)."
    )
    quote_checked_at = serializers.DateTimeField(read_only=True, help_text="When the page was last fetched.")
    quote_last_found_at = serializers.DateTimeField(
        source="quote_found_at",
        read_only=True,
        help_text="When a fetch last found the quote: check 12's date (kept when a later fetch does not).",
    )
    quote_problem = serializers.CharField(read_only=True, help_text="Why the last fetch did not find it.")
    quote_next_check_at = serializers.DateTimeField(source="quote_due_at", read_only=True)

    class Meta:
        model = HealthcheckListing
        fields = [
            "namespace",
            "website_url",
            "repository_url",
            "pricing_url",
            "quote",
            "quote_status",
            "quote_checked_at",
            "quote_last_found_at",
            "quote_problem",
            "quote_next_check_at",
            "updated_at",
        ]
        read_only_fields = ["updated_at"]

    @extend_schema_field(serializers.ChoiceField(choices=QuoteState.ALL))
    def get_quote_status(self, obj: HealthcheckListing) -> str:
        return quote_state(obj)


class HealthcheckListingSummarySerializer(HealthcheckListingSerializer):
    """Show a listing's five writable fields, as the healthcheck's answer carries it (the rest is at `/listing/`)."""

    class Meta(HealthcheckListingSerializer.Meta):
        fields = ["namespace", "website_url", "repository_url", "pricing_url", "quote"]


class HealthcheckSerializer(RejectUnknownFields, serializers.ModelSerializer[Healthcheck]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    type = CheckTypeField()
    type_name = serializers.SerializerMethodField()
    config = ConfigField()
    target = serializers.SerializerMethodField(
        help_text="What the check watches, from its type and config: the URL without its query (http, mcp), "
        "`host:port` (tcp, tls), `name TYPE @nameserver` (dns), the host (ping), the domain (domain); "
        '"" for a heartbeat, which reaches nothing.'
    )
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
    cause = serializers.SerializerMethodField(
        help_text="Why the check is down or degraded, and since when; null while it is not."
    )
    in_maintenance = serializers.SerializerMethodField(
        help_text="Whether a maintenance window holds the check now: it keeps running, its results are "
        "left out of uptime, and alerts wait for the window's end."
    )
    maintenance_until = serializers.SerializerMethodField(
        help_text="When the maintenance holding the check ends (the latest end of its active windows); null."
    )
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
    ping_url = serializers.SerializerMethodField(
        help_text="A heartbeat's ping URL (add /start, /fail or /<exit status>); null for other types, and for "
        "a read-only key: whoever holds the URL can report the job done or failed."
    )
    listing = HealthcheckListingSummarySerializer(
        read_only=True,
        allow_null=True,
        help_text="The MCP check's own listing (its five fields; read and written at `/listing/`), or null. "
        "Read-only here: a healthcheck write ignores it.",
    )

    class Meta:
        model = Healthcheck
        fields = [
            "id",
            "name",
            "type",
            "type_name",
            "config",
            "target",
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
            "cause",
            "in_maintenance",
            "maintenance_until",
            "listing",
            "ping_url",
            "next_check_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["status_changed_at", "next_check_at", "created_at", "updated_at"]

    @extend_schema_field(CauseSerializer(allow_null=True))
    def get_cause(self, obj: Healthcheck) -> dict[str, Any] | None:
        if obj.cause_since is None:
            return None
        return dict(CauseSerializer(obj).data)

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_in_maintenance(self, obj: Healthcheck) -> bool:
        return self._maintenance_until(obj) is not None

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_maintenance_until(self, obj: Healthcheck) -> datetime | None:
        return self._maintenance_until(obj)

    def _maintenance_until(self, obj: Healthcheck) -> datetime | None:
        lookup = self.context.get("maintenance")
        return lookup.until(obj) if isinstance(lookup, MaintenanceNow) else None

    @extend_schema_field(OpenApiTypes.URI)
    def get_ping_url(self, obj: Healthcheck) -> str | None:
        # Whoever holds the URL can report the job done or failed: a change, so a read-only key
        # (a dashboard's, a status tool's) never sees it, as a viewer never does in the web app.
        if not self._may_change():
            return None
        try:
            if check_kind(obj.type).active:
                return None  # no query for the active types of a list
        except UnknownCheckKind:
            return None
        ping_id = Heartbeat.objects.filter(pk=obj.pk).values_list("ping_id", flat=True).first()
        if ping_id is None:
            return None
        path = f"/ping/{ping_id}"
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    def _may_change(self) -> bool:
        """Return whether the caller may change checks: a read-write key, or a context that says so."""
        if "may_change" in self.context:
            return bool(self.context["may_change"])
        request = self.context.get("request")
        auth = getattr(request, "auth", None)
        return isinstance(auth, ApiKey) and auth.can_write

    def get_target(self, obj: Healthcheck) -> str:
        return healthcheck_target(healthcheck=obj)

    def get_type_name(self, obj: Healthcheck) -> str:
        try:
            return check_kind(obj.type).name
        except UnknownCheckKind:
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
        data: dict[str, Any] = dict(self.validated_data)
        renames = {"type": "check_type", "regions": "region_slugs", "tag_rows": "tags"}
        return {renames.get(key, key): value for key, value in data.items()}


class NoticeSerializer(serializers.Serializer[Any]):
    field = serializers.CharField(help_text="The field the notice is about, e.g. `config.headers`.")
    message = serializers.CharField()


class HealthcheckUpdatedSerializer(HealthcheckSerializer):
    """Document what PUT and PATCH answer: the healthcheck, and what the write did unasked."""

    notices = NoticeSerializer(
        many=True,
        read_only=True,
        help_text="What the write did that the request did not ask for in so many words, e.g. header "
        "values removed because the URI moved to another origin. Empty when nothing.",
    )

    class Meta(HealthcheckSerializer.Meta):
        fields = [*HealthcheckSerializer.Meta.fields, "notices"]


class RegionSerializer(serializers.ModelSerializer[Region]):
    allowed = serializers.SerializerMethodField(
        help_text="Whether the organization's plan allows this region."
    )

    class Meta:
        model = Region
        fields = ["slug", "name", "allowed"]

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_allowed(self, obj: Region) -> bool:
        return obj.slug in self.context.get("allowed_slugs", ())


class PlanSerializer(serializers.ModelSerializer[Plan]):
    allowed_regions = serializers.SlugRelatedField[Region](slug_field="slug", many=True, read_only=True)

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


class OrganizationSerializer(serializers.ModelSerializer[Organization]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    plan = PlanSerializer(read_only=True)
    healthchecks = serializers.SerializerMethodField()

    class Meta:
        model = Organization
        fields = ["id", "slug", "name", "plan", "healthchecks", "created_at"]

    def get_healthchecks(self, obj: Organization) -> int:
        return obj.healthchecks.count()


class ProbeResultSerializer(serializers.ModelSerializer[ProbeResult]):
    region = serializers.SlugRelatedField[Region](slug_field="slug", read_only=True)
    server = serializers.SerializerMethodField()
    timings = serializers.SerializerMethodField()
    kind = serializers.SerializerMethodField()
    signin_discovery = serializers.SerializerMethodField(
        help_text="How sign-in was found: 2025-06-18+ (resource metadata) or 2025-03-26-fallback; null otherwise."
    )

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
            "signin_discovery",
            "transport",
            "tool_count",
            "tool_digest",
            "missing_tools",
            "timings",
            "in_maintenance",
            "details",
        ]

    @extend_schema_field(OpenApiTypes.STR)
    def get_signin_discovery(self, obj: ProbeResult) -> str | None:
        return obj.signin_discovery or None

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


class StatusChangeSerializer(serializers.ModelSerializer[StatusChange]):
    class Meta:
        model = StatusChange
        fields = ["at", "from_status", "to_status", "reason", "failed_regions", "missing_tools"]


class CauseChangeSerializer(serializers.ModelSerializer[CauseChange]):
    class Meta:
        model = CauseChange
        fields = [
            "at",
            "status",
            "from_kind",
            "to_kind",
            "reason",
            "failed_regions",
            "missing_tools",
            "previous_reason",
        ]


class ToolChangeSerializer(serializers.ModelSerializer[ToolChange]):
    region = serializers.SlugRelatedField[Region](slug_field="slug", read_only=True)

    class Meta:
        model = ToolChange
        fields = [
            "at",
            "region",
            "removed",
            "removed_count",
            "added",
            "added_count",
            "new_required_inputs",
            "new_required_inputs_count",
            "previous_digest",
            "digest",
        ]


class CertificateChangeSerializer(serializers.ModelSerializer[CertificateChange]):
    region = serializers.SlugRelatedField[Region](slug_field="slug", read_only=True)

    class Meta:
        model = CertificateChange
        fields = [
            "at",
            "region",
            "previous_serial",
            "serial",
            "previous_issuer",
            "issuer",
            "previous_not_after",
            "not_after",
            "previous_sha256",
            "sha256",
        ]


class UptimeFiguresSerializer(serializers.Serializer[UptimeFigures]):
    runs = serializers.IntegerField()
    failures = serializers.IntegerField()
    degraded = serializers.IntegerField()
    uptime = serializers.FloatField(allow_null=True, help_text="Share of runs that were not down, 0–1.")
    p50_ms = serializers.FloatField(allow_null=True)
    p95_ms = serializers.FloatField(allow_null=True)


class UptimeSerializer(serializers.Serializer[Uptime]):
    start = serializers.DateTimeField(source="from")
    end = serializers.DateTimeField(source="to")
    overall = UptimeFiguresSerializer()
    regions = serializers.DictField(child=UptimeFiguresSerializer())


class SecondsField(serializers.IntegerField):
    """Write a length as whole seconds; read a stored timedelta back as seconds."""

    def to_representation(self, value: Any) -> int:
        return int(value.total_seconds()) if isinstance(value, timedelta) else int(value)


class OccurrenceSerializer(serializers.Serializer[Occurrence]):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()


class MaintenanceWindowSerializer(RejectUnknownFields, serializers.ModelSerializer[MaintenanceWindow]):
    """Write a window's timing and targets; the services validate the schedule (monitors.maintenance)."""

    id = serializers.UUIDField(source="public_id", read_only=True)
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    starts_at = serializers.DateTimeField(
        help_text="When the window starts; for a recurring window, its first occurrence's earliest start, "
        "read in `timezone` for the rule's local time of day."
    )
    ends_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="A one-off window's end (or give `duration`). Answered for every window: when its last "
        "occurrence ends at the latest (null: never).",
    )
    duration = SecondsField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=366 * 24 * 3600,
        help_text="Seconds each occurrence lasts; required for a recurring window (at most 7 days).",
    )
    rrule = serializers.CharField(
        max_length=MAX_RULE_LENGTH,
        required=False,
        allow_blank=True,
        trim_whitespace=True,
        help_text="An RFC 5545 RRULE, e.g. `FREQ=WEEKLY;BYDAY=SU;BYHOUR=2`; empty for a one-off window. "
        "HOURLY to YEARLY, at most 24 occurrences a day, COUNT at most 1000; BYSETPOS, BYYEARDAY, "
        "BYWEEKNO and BYSECOND are refused.",
    )
    timezone = serializers.CharField(
        max_length=64, required=False, help_text="The IANA time zone the rule runs in (default UTC)."
    )
    healthchecks = RelatedNamesField(
        attribute="public_id",
        child=serializers.UUIDField(),
        required=False,
        max_length=1000,
        help_text="Ids of the organization's healthchecks the window applies to.",
    )
    tags = RelatedNamesField(
        attribute="name",
        source="tag_rows",
        child=serializers.CharField(max_length=64, trim_whitespace=True, allow_blank=False),
        required=False,
        max_length=20,
        help_text="The window applies to every healthcheck with one of these tags, including ones tagged "
        "later; a tag no healthcheck carries yet is accepted.",
    )
    active = serializers.SerializerMethodField(
        help_text="Whether an occurrence covers the time of the answer."
    )
    current = serializers.SerializerMethodField(help_text="The occurrence covering now, or null.")
    next = serializers.SerializerMethodField(help_text="The next occurrence to start, or null.")

    class Meta:
        model = MaintenanceWindow
        fields = [
            "id",
            "name",
            "description",
            "starts_at",
            "ends_at",
            "duration",
            "rrule",
            "timezone",
            "healthchecks",
            "tags",
            "active",
            "current",
            "next",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def _state(self, obj: MaintenanceWindow) -> tuple[Occurrence | None, Occurrence | None]:
        states: dict[int, tuple[Occurrence | None, Occurrence | None]] = self.context.get(
            "maintenance_states", {}
        )
        return states.get(obj.id, (None, None))

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_active(self, obj: MaintenanceWindow) -> bool:
        return self._state(obj)[0] is not None

    @extend_schema_field(OccurrenceSerializer(allow_null=True))
    def get_current(self, obj: MaintenanceWindow) -> dict[str, Any] | None:
        current = self._state(obj)[0]
        return None if current is None else dict(OccurrenceSerializer(current).data)

    @extend_schema_field(OccurrenceSerializer(allow_null=True))
    def get_next(self, obj: MaintenanceWindow) -> dict[str, Any] | None:
        upcoming = self._state(obj)[1]
        return None if upcoming is None else dict(OccurrenceSerializer(upcoming).data)

    def validate_name(self, value: str) -> str:
        if any(ord(ch) < 0x20 for ch in value):
            raise serializers.ValidationError("Must not contain control characters.")
        return value

    def validate_tags(self, value: list[str]) -> list[str]:
        if any(any(ord(ch) < 0x20 for ch in tag) for tag in value):
            raise serializers.ValidationError("Tags must not contain control characters.")
        return value

    def to_service_changes(self) -> dict[str, Any]:
        """Return the validated data under the names the services take (duration as a timedelta)."""
        data: dict[str, Any] = dict(self.validated_data)
        if "tag_rows" in data:
            data["tags"] = data.pop("tag_rows")
        if data.get("duration") is not None:
            data["duration"] = timedelta(seconds=data["duration"])
        for field in ("rrule", "timezone"):
            if field in data and data[field] is None:
                del data[field]
        return data


class CheckRunRequestSerializer(RejectUnknownFields, serializers.Serializer[Any]):
    """A one-off check: the check type and its config, as a healthcheck's (nothing is stored)."""

    type = CheckTypeField(required=False, help_text="The check type; default mcp.")
    config = ConfigField()


class ToolSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    required_inputs = serializers.ListField(child=serializers.CharField())


class CheckRunSerializer(ProbeResultSerializer):
    """A one-off run's result (never saved): a stored result's fields, the tools it listed and its warnings.

    The tools and warnings are the outcome's, given in the context (``tools``, ``warnings``): a
    stored result keeps neither.
    """

    tools = serializers.SerializerMethodField(
        help_text="The tools listed (MCP), each with its required inputs."
    )
    warnings = serializers.SerializerMethodField(help_text="What the run noticed that is not a failure.")

    class Meta(ProbeResultSerializer.Meta):
        fields = [
            name
            for name in [*ProbeResultSerializer.Meta.fields, "tools", "warnings"]
            if name not in ("region", "slot", "attempt", "in_maintenance")
        ]

    @extend_schema_field(ToolSerializer(many=True))
    def get_tools(self, obj: ProbeResult) -> list[dict[str, Any]]:
        return list(self.context.get("tools", []))

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_warnings(self, obj: ProbeResult) -> list[str]:
        return list(self.context.get("warnings", []))


def check_run_data(outcome: ProbeOutcome, *, checked_at: datetime) -> dict[str, Any]:
    """Return a one-off run's answer, as the REST API and the MCP server both give it: nothing is recorded."""
    kept = storable_outcome(outcome)
    tools = [{"name": tool.name, "required_inputs": list(tool.required_inputs)} for tool in kept.tools]
    result = result_unsaved(kept, checked_at=checked_at)
    return dict(CheckRunSerializer(result, context={"tools": tools, "warnings": list(kept.warnings)}).data)


class ScorecardCheckSerializer(serializers.Serializer[dict[str, Any]]):
    """One of the 22 checks: its verdict in words, when its evidence was seen, why, and the evidence."""

    number = serializers.IntegerField(help_text="1–22, the check's number in issue 14's list.")
    name = serializers.CharField()
    verdict = serializers.ChoiceField(choices=[verdict.value for verdict in scorecard.Verdict])
    observed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the evidence was observed; null when there is none."
    )
    outdated = serializers.BooleanField(help_text="The evidence is more than 24 hours old.")
    outdated_label = serializers.CharField(
        allow_null=True,
        help_text='"Outdated check" when outdated, else null: a warning apart from the verdict.',
    )
    reason = serializers.CharField()
    evidence = serializers.DictField(help_text="Counts, ids and values the verdict was taken from.")


class ScorecardSerializer(serializers.Serializer[dict[str, Any]]):
    """An MCP healthcheck's scorecard: the 22 evidence checks, each passed, failed or not measured."""

    healthcheck = serializers.UUIDField()
    judged_at = serializers.DateTimeField()
    passed = serializers.IntegerField()
    total = serializers.IntegerField()
    checks = ScorecardCheckSerializer(many=True)
    listing = HealthcheckListingSerializer(
        allow_null=True, help_text="The check's own listing (publisher evidence, check 12's quote), or null."
    )


def scorecard_data(
    healthcheck: Healthcheck,
    card: scorecard.Scorecard,
    *,
    now: datetime,
    listing: HealthcheckListing | None = None,
) -> dict[str, Any]:
    """Return the scorecard's API answer (the web page shows the same values), with the check's own listing."""
    checks = [
        {
            "number": result.number,
            "name": result.name,
            "verdict": result.verdict.value,
            "observed_at": result.observed_at,
            "outdated": scorecard.is_outdated(result, now=now),
            "outdated_label": scorecard.freshness_label(result, now=now),
            "reason": result.reason,
            "evidence": dict(result.evidence),
        }
        for result in card.results
    ]
    answer = {
        "healthcheck": healthcheck.public_id,
        "judged_at": now,
        "passed": card.passed,
        "total": card.total,
        "checks": checks,
        "listing": listing,
    }
    return dict(ScorecardSerializer(answer).data)
