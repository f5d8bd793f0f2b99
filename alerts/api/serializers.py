"""Shape incidents and their timelines for the API; services do the writing."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from alerts.channels import Attempt, ChannelConfigError, channel_kind
from alerts.models import AlertPolicy, Channel, Delivery, DeliveryAttempt, Incident, IncidentEvent
from monitors.api.strict import RejectUnknownFields
from monitors.secrets import SecretUnreadable


class IncidentEventSerializer(serializers.ModelSerializer[IncidentEvent]):
    class Meta:
        model = IncidentEvent
        fields = ["kind", "at", "details"]


class IncidentHealthcheckSerializer(serializers.Serializer[Incident]):
    """The healthcheck's id and name (kept after it is deleted), and whether it was deleted."""

    id = serializers.UUIDField(source="healthcheck_public_id")
    name = serializers.CharField(source="healthcheck_name")
    deleted = serializers.SerializerMethodField()

    def get_deleted(self, incident: Incident) -> bool:
        return incident.healthcheck_id is None


class IncidentCauseSerializer(serializers.Serializer[Incident]):
    """Why the check fails: the failure kind, its sentence, the verdict's summary, the regions, the missing tools."""

    kind = serializers.CharField(
        source="cause_kind", help_text="The failure kind most failing regions share."
    )
    reason = serializers.CharField(
        source="cause_reason",
        help_text='The failure\'s sentence, e.g. "Required tools missing: search_docs".',
    )
    summary = serializers.CharField(
        source="cause_summary", help_text="The verdict's sentence over the regions."
    )
    regions = serializers.DictField(
        source="cause_regions",
        child=serializers.CharField(),
        help_text="Failing region slug -> failure kind.",
    )
    missing_tools = serializers.ListField(source="cause_missing_tools", child=serializers.CharField())


class IncidentSerializer(serializers.ModelSerializer[Incident]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    healthcheck = IncidentHealthcheckSerializer(source="*", read_only=True)
    state = serializers.SerializerMethodField()
    cause = IncidentCauseSerializer(source="*", read_only=True)
    events = IncidentEventSerializer(many=True, read_only=True)

    class Meta:
        model = Incident
        fields = [
            "id",
            "healthcheck",
            "state",
            "severity",
            "opened_at",
            "acknowledged_at",
            "acknowledged_by",
            "resolved_at",
            "resolution",
            "cause",
            "events",
        ]
        read_only_fields = fields

    def get_state(self, incident: Incident) -> str:
        """open or resolved."""
        return "open" if incident.resolved_at is None else "resolved"


class ChannelSerializer(serializers.ModelSerializer[Channel]):
    """A channel as the API shows it: its config with every secret masked (write-only)."""

    id = serializers.UUIDField(source="public_id", read_only=True)
    kind = serializers.ChoiceField(choices=Channel.Kind.choices)
    config = serializers.SerializerMethodField(
        help_text="The kind's settings, secrets masked as ********; send one back unchanged to keep it."
    )

    class Meta:
        model = Channel
        fields = ["id", "name", "kind", "config", "enabled", "disabled_reason", "created_at", "updated_at"]
        read_only_fields = ["disabled_reason", "created_at", "updated_at"]

    def get_config(self, channel: Channel) -> dict[str, Any] | None:
        """The masked config; null when this server's keys can't decrypt it."""
        kind = channel_kind(channel.kind)
        try:
            return kind.masked(kind.parse(channel.config))
        except (SecretUnreadable, ChannelConfigError):
            return None


class ChannelWriteSerializer(RejectUnknownFields, serializers.Serializer[Channel]):
    """What a client sends to add or change a channel; the kind's parser checks ``config``."""

    shown_fields = frozenset({"id", "disabled_reason", "created_at", "updated_at"})

    name = serializers.CharField(max_length=128)
    kind = serializers.ChoiceField(choices=Channel.Kind.choices, help_text="Fixed once the channel exists.")
    config = serializers.DictField(
        help_text=(
            "email: {recipients}; webhook: {url, secret?} (a secret is generated when left out); "
            "pagerduty: {routing_key, events_url?}; apprise: {url}."
        )
    )
    enabled = serializers.BooleanField(required=False, default=True)


class AttemptSerializer(serializers.Serializer[Attempt]):
    """One try of sending: whether it arrived, the receiver's status, how long, and why not."""

    ok = serializers.BooleanField()
    status_code = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.SerializerMethodField()
    error = serializers.CharField()

    def get_duration_ms(self, attempt: Attempt) -> float:
        return round(attempt.duration * 1000, 1)


class DeliveryAttemptSerializer(serializers.ModelSerializer[DeliveryAttempt]):
    """One recorded try of a delivery: when, whether it arrived, the receiver's status, how long, why not."""

    duration_ms = serializers.SerializerMethodField()
    error = serializers.CharField(
        help_text="Why it failed, a sentence naming no secret; empty when it arrived."
    )

    class Meta:
        model = DeliveryAttempt
        fields = ["at", "ok", "status_code", "duration_ms", "error"]
        read_only_fields = fields

    def get_duration_ms(self, attempt: DeliveryAttempt) -> float:
        return round(attempt.duration_ms, 1)


class DeliveryEventSerializer(serializers.Serializer[Delivery]):
    """What the delivery carries: the event's type and time, its incident and healthcheck."""

    type = serializers.CharField(
        source="notification.kind", help_text="The webhook's `type`: incident.opened, incidents.digest …"
    )
    at = serializers.DateTimeField(source="notification.at")
    incident = serializers.SerializerMethodField(
        help_text="The incident's id; null for a digest or a tools change."
    )
    healthcheck = serializers.SerializerMethodField(help_text="The healthcheck's name as the alert named it.")

    def get_incident(self, delivery: Delivery) -> str | None:
        return str(delivery.incident.public_id) if delivery.incident is not None else None

    def get_healthcheck(self, delivery: Delivery) -> str | None:
        healthcheck = delivery.notification.details.get("healthcheck")
        name = healthcheck.get("name") if isinstance(healthcheck, dict) else None
        return str(name) if name else None


class DeliverySerializer(serializers.ModelSerializer[Delivery]):
    """One alert carried to the channel: its event, where it stands, every attempt, and when it is tried next."""

    id = serializers.UUIDField(
        source="public_id", read_only=True, help_text="The webhook-id of every attempt."
    )
    event = DeliveryEventSerializer(source="*", read_only=True)
    attempts = DeliveryAttemptSerializer(
        source="attempt_rows", many=True, read_only=True, help_text="In the order they were made."
    )
    next_attempt_at = serializers.SerializerMethodField(
        help_text="When it is tried next (pending or failed); null once delivered, given up or being sent."
    )

    class Meta:
        model = Delivery
        fields = ["id", "event", "state", "attempts", "next_attempt_at", "created_at", "delivered_at"]
        read_only_fields = fields

    def get_next_attempt_at(self, delivery: Delivery) -> str | None:
        if delivery.state not in (Delivery.State.PENDING, Delivery.State.FAILED):
            return None
        return serializers.DateTimeField().to_representation(delivery.next_attempt_at)


class ChannelSavedSerializer(ChannelSerializer):
    """The channel, the signing secret generated for it (shown this once), and the test a re-enabling sent."""

    signing_secret = serializers.CharField(
        required=False, help_text="A webhook's generated whsec_ secret: shown only in this answer."
    )
    test = AttemptSerializer(required=False, allow_null=True)

    class Meta(ChannelSerializer.Meta):
        fields = [*ChannelSerializer.Meta.fields, "signing_secret", "test"]


class SecretSerializer(serializers.Serializer[str]):
    signing_secret = serializers.CharField(help_text="The new whsec_ secret: shown only in this answer.")
    previous_valid_until = serializers.DateTimeField(help_text="The old secret keeps signing until then.")


class AlertPolicySerializer(RejectUnknownFields, serializers.Serializer[AlertPolicy]):
    """Who hears of a healthcheck's incidents (or, as the default, of every healthcheck without its own policy)."""

    healthcheck = serializers.SerializerMethodField(help_text="The healthcheck's id; null for the default.")
    channels = serializers.ListField(
        child=serializers.UUIDField(),
        max_length=100,
        help_text="Channel ids told of openings and escalations.",
    )
    notify_on_degraded = serializers.BooleanField(default=True)
    notify_on_recovery = serializers.BooleanField(default=True)
    notify_on_tool_changes = serializers.BooleanField(default=True)
    reminder_minutes = serializers.IntegerField(
        allow_null=True,
        default=None,
        help_text="Remind every N minutes while down and unacknowledged (at most 10 times).",
    )
    escalation_minutes = serializers.IntegerField(
        allow_null=True, default=None, help_text="After N minutes unacknowledged, tell escalation_channels."
    )
    escalation_channels = serializers.ListField(child=serializers.UUIDField(), max_length=100, default=list)

    def get_healthcheck(self, policy: AlertPolicy) -> str | None:
        return str(policy.healthcheck.public_id) if policy.healthcheck is not None else None

    def to_representation(self, policy: AlertPolicy) -> dict[str, Any]:
        return {
            "healthcheck": self.get_healthcheck(policy),
            "channels": [str(channel.public_id) for channel in policy.channels.all()],
            "notify_on_degraded": policy.notify_on_degraded,
            "notify_on_recovery": policy.notify_on_recovery,
            "notify_on_tool_changes": policy.notify_on_tool_changes,
            "reminder_minutes": policy.reminder_minutes,
            "escalation_minutes": policy.escalation_minutes,
            "escalation_channels": [str(channel.public_id) for channel in policy.escalation_channels.all()],
        }

    def to_service_changes(self) -> dict[str, Any]:
        """Return the validated data under the names ``alerts.services.alert_policy_put`` takes."""
        renames = {"channels": "channel_ids", "escalation_channels": "escalation_channel_ids"}
        return {renames.get(key, key): value for key, value in self.validated_data.items()}
