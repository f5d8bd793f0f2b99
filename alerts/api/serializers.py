"""Shape incidents and their timelines for the API; services do the writing."""

from __future__ import annotations

from rest_framework import serializers

from alerts.models import Incident, IncidentEvent


class IncidentEventSerializer(serializers.ModelSerializer[IncidentEvent]):
    class Meta:
        model = IncidentEvent
        fields = ["kind", "at", "details"]


class IncidentSerializer(serializers.ModelSerializer[Incident]):
    id = serializers.UUIDField(source="public_id", read_only=True)
    healthcheck = serializers.SerializerMethodField()
    state = serializers.SerializerMethodField()
    cause = serializers.SerializerMethodField()
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

    def get_healthcheck(self, incident: Incident) -> dict[str, str | bool]:
        """The healthcheck's id and name (kept after it is deleted), and whether it still exists."""
        return {
            "id": str(incident.healthcheck_public_id),
            "name": incident.healthcheck_name,
            "deleted": incident.healthcheck_id is None,
        }

    def get_state(self, incident: Incident) -> str:
        """open or resolved."""
        return "open" if incident.resolved_at is None else "resolved"

    def get_cause(self, incident: Incident) -> dict[str, object]:
        """The failure kind, its sentence, the verdict's summary, the failing regions with their kinds, the missing tools."""
        return {
            "kind": incident.cause_kind,
            "reason": incident.cause_reason,
            "summary": incident.cause_summary,
            "regions": incident.cause_regions,
            "missing_tools": incident.cause_missing_tools,
        }
