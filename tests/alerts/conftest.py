"""Fixtures of the alerts tests: incidents' factories (healthchecks, outbox rows as monitors writes them,
channels) here; the channel tests' fixtures live in channel_support.py, beside the helpers tests import."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from alerts.models import Channel, Delivery, Incident
from alerts.services import channel_create
from monitors.models import CauseChange, Healthcheck, Organization, Region, StatusChange, ToolChange
from monitors.rules import main_kind
from monitors.services import healthcheck_create
from probes.checks.mcp import MCP
from tests.alerts.channel_support import alert, dns, receiver, smtp_server, tls_receiver

__all__ = ["alert", "dns", "receiver", "smtp_server", "tls_receiver"]


def at(seconds: float, *, base: datetime) -> datetime:
    return base + timedelta(seconds=seconds)


@pytest.fixture
def make_check(org, now) -> Callable[..., Healthcheck]:
    counter = iter(range(1, 100_000))

    def make(*, organization: Organization | None = None, name: str | None = None) -> Healthcheck:
        return healthcheck_create(
            organization=organization or org,
            name=name or f"Docs MCP {next(counter)}",
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=now,
        )

    return make


@pytest.fixture
def check(make_check) -> Healthcheck:
    return make_check(name="Docs MCP")


def status_change(
    healthcheck: Healthcheck,
    to: str,
    *,
    at: datetime,
    frm: str = "up",
    reason: str = "",
    regions: dict[str, str] | None = None,
    missing: list[str] | None = None,
    sentence: str = "",
    id: int | None = None,
) -> StatusChange:
    """Write a StatusChange as the recorder does: its cause's kind decided from the regions, and
    ``sentence`` the failure's own (the recorder's comes from the failing region's result)."""
    failing = to in ("down", "degraded")
    return StatusChange.objects.create(
        id=id,
        healthcheck=healthcheck,
        at=at,
        from_status=frm,
        to_status=to,
        reason=reason,
        failed_regions=regions or {},
        missing_tools=missing or [],
        cause_kind=main_kind(regions or {}, slow=to == "degraded") if failing else "",
        cause_reason=sentence if failing else "",
    )


def cause_change(healthcheck: Healthcheck, *, at: datetime, frm: str, to: str, reason: str) -> CauseChange:
    return CauseChange.objects.create(
        healthcheck=healthcheck,
        at=at,
        status="down",
        from_kind=frm,
        to_kind=to,
        reason=reason,
        failed_regions={"eu-west": to},
        missing_tools=[],
        previous_reason="before",
    )


def tool_change(healthcheck: Healthcheck, *, at: datetime, removed: list[str]) -> ToolChange:
    return ToolChange.objects.create(
        healthcheck=healthcheck,
        at=at,
        region=Region.objects.order_by("id").first(),
        previous_digest="a",
        digest="b",
        removed=removed,
        removed_count=len(removed),
    )


@pytest.fixture
def make_channel(org) -> Callable[..., Channel]:
    counter = iter(range(1, 100_000))

    def make(
        *, organization: Organization | None = None, kind: str = Channel.Kind.WEBHOOK, enabled: bool = True
    ) -> Channel:
        number = next(counter)
        return channel_create(
            organization=organization or org,
            name=f"channel {number}",
            kind=Channel.Kind(kind),
            config={"url": f"https://hooks.example.com/{number}", "secret": f"whsec_{number}"},
            enabled=enabled,
        )

    return make


def kinds_delivered(channel: Channel) -> list[str]:
    """Return the kinds of the notifications delivered to ``channel``, in the order they were made."""
    return list(
        Delivery.objects.filter(channel=channel).order_by("id").values_list("notification__kind", flat=True)
    )


def timeline(incident: Incident) -> list[str]:
    return list(incident.events.order_by("at", "id").values_list("kind", flat=True))
