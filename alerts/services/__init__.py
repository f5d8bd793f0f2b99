"""Every write of the alerts app; keyword-only functions named <entity>_<action>.

Callers import from here (``alerts.services.outbox_consume``).
"""

from alerts.services.channels import (
    ChannelSaved,
    alert_policy_delete,
    alert_policy_put,
    alert_policy_set,
    channel_add,
    channel_change,
    channel_create,
    channel_delete,
    channel_rotate_secret,
    channel_test,
)
from alerts.services.deliveries import deliveries_claim, delivery_attempt_record
from alerts.services.incidents import (
    IncidentResolved,
    incident_acknowledge,
    incidents_open_missing,
    incidents_remind,
)
from alerts.services.outbox import outbox_consume
from alerts.services.sending import channel_disable, deliveries_send

__all__ = [
    "ChannelSaved",
    "IncidentResolved",
    "alert_policy_delete",
    "alert_policy_put",
    "alert_policy_set",
    "channel_add",
    "channel_change",
    "channel_create",
    "channel_delete",
    "channel_disable",
    "channel_rotate_secret",
    "channel_test",
    "deliveries_claim",
    "deliveries_send",
    "delivery_attempt_record",
    "incident_acknowledge",
    "incidents_open_missing",
    "incidents_remind",
    "outbox_consume",
]
