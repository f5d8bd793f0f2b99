"""Create channels from configs their kind's parser has already validated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alerts.models import AlertPolicy, Channel
from monitors.models import Healthcheck, Organization


def channel_create(
    *, organization: Organization, name: str, kind: Channel.Kind, config: dict[str, Any], enabled: bool = True
) -> Channel:
    """Store a channel; ``config`` is the kind's validated config, stored encrypted."""
    channel = Channel(organization=organization, name=name, kind=kind, enabled=enabled)
    channel.config = config
    channel.save(force_insert=True)
    return channel


def alert_policy_set(
    *,
    organization: Organization,
    healthcheck: Healthcheck | None = None,
    channels: Sequence[Channel],
    escalation_channels: Sequence[Channel] = (),
    **switches: Any,
) -> AlertPolicy:
    """Create or replace the healthcheck's policy (the organization's default when ``healthcheck`` is None).

    ``switches``: notify_on_degraded, notify_on_recovery, notify_on_tool_changes,
    reminder_minutes, escalation_minutes.
    """
    policy, _ = AlertPolicy.objects.update_or_create(
        organization=organization, healthcheck=healthcheck, defaults=switches
    )
    policy.channels.set(channels)
    policy.escalation_channels.set(escalation_channels)
    return policy
