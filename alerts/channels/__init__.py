"""Deliver alerts: one pure sender module per channel kind, registered once (see base.py).

The ledger builds an :class:`Alert`, looks the channel's kind up with :func:`channel_kind`,
parses the stored config with ``kind.parse`` and calls ``kind.send``, which returns an
:class:`Attempt` and never raises for a remote's misbehaviour.
"""

from alerts.channels import apprise, email, pagerduty, webhook
from alerts.channels.base import (
    MASK,
    Alert,
    Attempt,
    Cause,
    ChannelConfigError,
    ChannelKind,
    EventType,
    HealthcheckRef,
    IncidentInfo,
    Notice,
    RegionFailure,
    ToolInputs,
    ToolsChange,
    channel_kind,
    channel_test_alert,
    kinds,
    unmask,
)
from alerts.channels.http import target_problem
from alerts.channels.webhook import generate_secret

__all__ = [
    "MASK",
    "Alert",
    "Attempt",
    "Cause",
    "ChannelConfigError",
    "ChannelKind",
    "EventType",
    "HealthcheckRef",
    "IncidentInfo",
    "Notice",
    "RegionFailure",
    "ToolInputs",
    "ToolsChange",
    "apprise",
    "channel_kind",
    "channel_test_alert",
    "email",
    "generate_secret",
    "kinds",
    "pagerduty",
    "target_problem",
    "unmask",
    "webhook",
]
