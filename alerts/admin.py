"""Cover every alerts model in the Django admin, read-only: incidents and the ledger are written by services.

A channel's config is never shown (it holds tokens and keys); its kind, name and state are.
"""

from __future__ import annotations

from django.contrib import admin

from alerts.models import (
    AlertPolicy,
    Channel,
    Delivery,
    DeliveryAttempt,
    Incident,
    IncidentEvent,
    Notification,
    OutboxCursor,
    OutboxReceipt,
)
from monitors.admin import ReadOnlyAdmin


@admin.register(Incident)
class IncidentAdmin(ReadOnlyAdmin[Incident]):
    list_display = [
        "healthcheck_name",
        "organization",
        "severity",
        "opened_at",
        "acknowledged_at",
        "resolved_at",
    ]
    list_filter = ["severity", "resolution"]
    date_hierarchy = "opened_at"
    list_select_related = ["organization"]


@admin.register(IncidentEvent)
class IncidentEventAdmin(ReadOnlyAdmin[IncidentEvent]):
    list_display = ["incident", "kind", "at"]
    list_filter = ["kind"]
    list_select_related = ["incident"]


@admin.register(Channel)
class ChannelAdmin(ReadOnlyAdmin[Channel]):
    list_display = ["name", "organization", "kind", "enabled", "disabled_reason"]
    list_filter = ["kind", "enabled"]
    exclude = ["config_encrypted"]


@admin.register(AlertPolicy)
class AlertPolicyAdmin(ReadOnlyAdmin[AlertPolicy]):
    list_display = ["organization", "healthcheck", "reminder_minutes", "escalation_minutes"]


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin[Notification]):
    list_display = ["kind", "organization", "at", "incident", "digest"]
    list_filter = ["kind"]


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin[Delivery]):
    list_display = ["public_id", "channel", "state", "attempts", "next_attempt_at", "delivered_at"]
    list_filter = ["state"]
    list_select_related = ["channel"]


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(ReadOnlyAdmin[DeliveryAttempt]):
    list_display = ["delivery", "at", "ok", "status_code", "duration_ms", "error"]


@admin.register(OutboxCursor)
class OutboxCursorAdmin(ReadOnlyAdmin[OutboxCursor]):
    list_display = ["source", "position", "gap_at", "gap_since"]


@admin.register(OutboxReceipt)
class OutboxReceiptAdmin(ReadOnlyAdmin[OutboxReceipt]):
    list_display = ["source", "source_id"]
