"""Shape incidents and their timelines for the API; services do the writing."""

from __future__ import annotations

from rest_framework import serializers

from alerts.models import Incident, IncidentEvent


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
