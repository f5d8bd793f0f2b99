"""Document in the OpenAPI schema what a webhook channel receives (``SPECTACULAR_SETTINGS["WEBHOOKS"]``).

The serializers describe alerts.channels.render.payload's JSON, version 1; a test renders real
alerts and checks them against this schema, so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, OpenApiWebhook, extend_schema
from rest_framework import serializers

from alerts.channels import EventType


class _HealthcheckRef(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="The healthcheck's id.")
    name = serializers.CharField()
    status = serializers.CharField(help_text="up, degraded, down, paused or pending, as the event left it.")
    url = serializers.CharField(help_text="The healthcheck in the API.")


class _Incident(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="The incident's id (PagerDuty's dedup_key too).")
    status = serializers.ChoiceField(choices=["open", "acknowledged", "resolved"])
    severity = serializers.ChoiceField(choices=["critical", "warning"])
    opened_at = serializers.DateTimeField()
    acknowledged_at = serializers.DateTimeField(allow_null=True)
    acknowledged_by = serializers.CharField(allow_null=True)
    resolved_at = serializers.DateTimeField(allow_null=True)
    resolution = serializers.ChoiceField(choices=["recovered", "paused", "deleted"], allow_null=True)
    duration_seconds = serializers.FloatField(allow_null=True, help_text="On recovery: how long it lasted.")
    acknowledge_url = serializers.CharField(
        allow_null=True, help_text="A signed link that acknowledges the incident without a login."
    )


class _RegionFailure(serializers.Serializer[Any]):
    region = serializers.CharField(help_text="A failing region's slug (a key of the API's `failed_regions`).")
    kind = serializers.CharField(help_text="The failure kind in that region (connect, missing_tools, …).")
    reason = serializers.CharField(
        allow_blank=True,
        help_text="The sentence that region's failure reported; empty only when it gave none.",
    )


class _Cause(serializers.Serializer[Any]):
    """The healthcheck API's `cause` as the event found it, each failing region with its sentence."""

    kind = serializers.CharField(help_text="The failure kind most failing regions share.")
    reason = serializers.CharField(
        help_text='The failure\'s sentence: "Required tools missing: search_docs".'
    )
    regions = _RegionFailure(many=True, help_text="The API's `failed_regions`, one entry per region.")
    missing_tools = serializers.ListField(child=serializers.CharField())
    since = serializers.DateTimeField(help_text="When this cause began: the API's `cause.since`.")


class _ToolInputs(serializers.Serializer[Any]):
    tool = serializers.CharField()
    inputs = serializers.ListField(child=serializers.CharField())


class _Tools(serializers.Serializer[Any]):
    removed = serializers.ListField(child=serializers.CharField())
    gained_required_inputs = _ToolInputs(many=True)


class _Notice(serializers.Serializer[Any]):
    healthcheck = _HealthcheckRef()
    incident = _Incident(required=False, help_text="Every incident.* event (and digest entry).")
    cause = _Cause(required=False, help_text="Every incident.* event (and digest entry) of a failing check.")
    tools = _Tools(required=False, help_text="healthcheck.tools_changed only.")


class _DigestEntry(_Notice):
    event = serializers.ChoiceField(
        choices=[
            EventType.INCIDENT_OPENED.value,
            EventType.INCIDENT_ESCALATED.value,
            EventType.INCIDENT_RESOLVED.value,
        ],
        help_text="What happened to this incident: the event it would have been sent as on its own.",
    )


class _Organization(serializers.Serializer[Any]):
    name = serializers.CharField()


class _Data(_Notice):
    organization = _Organization()
    summary = serializers.CharField(help_text="One line: the email's subject, the chat's title.")
    healthcheck = _HealthcheckRef(required=False, help_text="Every event about one healthcheck.")
    incidents = _DigestEntry(
        many=True, required=False, help_text="incidents.digest only: one per incident's event, in order."
    )
    incidents_url = serializers.CharField(allow_null=True, required=False)


class WebhookPayloadSerializer(serializers.Serializer[Any]):
    """The JSON body of every webhook delivery, signed per Standard Webhooks."""

    version = serializers.IntegerField(help_text="1: this shape.")
    type = serializers.ChoiceField(choices=[kind.value for kind in EventType])
    id = serializers.CharField(
        help_text="The delivery's id, as the webhook-id header: the same on every retry, so drop duplicates."
    )
    timestamp = serializers.DateTimeField(help_text="When the event happened.")
    # The payload's key is "data", which shadows Serializer.data: this class only describes JSON.
    data = _Data()  # type: ignore[assignment]


_RECEIVED = {
    "2XX": OpenApiResponse(
        description="Received. Any other answer is retried with backoff; 410 disables the channel."
    )
}

ALERT_WEBHOOK = OpenApiWebhook(
    name="alert",
    decorator=extend_schema(
        summary="An alert to a webhook channel",
        description=(
            "Sent as a POST with the headers webhook-id, webhook-timestamp and webhook-signature "
            "(Standard Webhooks, v1 HMAC-SHA256 with the channel's whsec_ secret; two signatures "
            "while a rotated secret overlaps). `type` is one of: "
            + ", ".join(f"`{kind.value}`" for kind in EventType)
            + "."
        ),
        request=WebhookPayloadSerializer,
        responses=_RECEIVED,
    ),
)
