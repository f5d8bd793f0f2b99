"""Turn the default alert policy form into the API's request body (``PUT /api/v1/alert-policies/default/``).

Validation is the API's ``AlertPolicySerializer`` and ``alerts.services.alert_policy_put``, so every
message is the API's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.http import QueryDict

from alerts.models import AlertPolicy, Channel

SWITCHES = ("notify_on_degraded", "notify_on_recovery", "notify_on_tool_changes")
MINUTES = ("reminder_minutes", "escalation_minutes")
CHANNEL_LISTS = ("channels", "escalation_channels")


def values_of(policy: AlertPolicy | None, channels: Sequence[Channel]) -> dict[str, Any]:
    """Return the policy as the form shows it; without one, what happens then: every enabled channel hears."""
    if policy is None:
        return {
            "channels": [str(channel.public_id) for channel in channels if channel.enabled],
            "escalation_channels": [],
            **dict.fromkeys(SWITCHES, True),
            **dict.fromkeys(MINUTES, ""),
        }
    return {
        "channels": [str(channel.public_id) for channel in policy.channels.all()],
        "escalation_channels": [str(channel.public_id) for channel in policy.escalation_channels.all()],
        **{switch: getattr(policy, switch) for switch in SWITCHES},
        **{field: "" if getattr(policy, field) is None else str(getattr(policy, field)) for field in MINUTES},
    }


def typed(data: QueryDict) -> dict[str, Any]:
    """Return what the form holds, as typed (to show it again next to its errors); an unticked box is off."""
    return {
        **{field: data.getlist(field) for field in CHANNEL_LISTS},
        **{switch: switch in data for switch in SWITCHES},
        **{field: str(data.get(field, "")).strip() for field in MINUTES},
    }


def api_body(values: dict[str, Any]) -> dict[str, Any]:
    """Return the API's body for the typed form: empty minutes are null (off)."""
    return {**values, **{field: values[field] or None for field in MINUTES}}
