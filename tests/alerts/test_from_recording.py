"""From results to incidents: the real recorder writes the outbox, the consumer reads it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from alerts.models import Incident, Notification
from alerts.services import outbox_consume
from monitors.services import RunResult, healthcheck_create, outcomes_record
from probes.checks.mcp import MCP
from probes.types import ProbeOutcome
from tests.alerts.conftest import kinds_delivered, timeline
from tests.alerts.outcomes import TOOLS, listing, missing_search_docs

pytestmark = pytest.mark.django_db

SLOT = datetime(2026, 11, 29, 12, 1, tzinfo=UTC)


def record(healthcheck, outcome: ProbeOutcome, minute: int) -> datetime:
    slot = SLOT + timedelta(minutes=minute)
    outcomes_record(
        region_slug="eu-west",
        results=[RunResult(healthcheck.id, slot, 0, outcome, slot + timedelta(seconds=1))],
        now=slot + timedelta(seconds=2),
    )
    return slot + timedelta(seconds=2)


@pytest.fixture
def make_recorded(org, now):
    def make(**config):
        return healthcheck_create(
            organization=org,
            name="Docs MCP",
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp", **config},
            now=now,
            region_slugs=["eu-west"],
            rules={"recheck_count": 0},
        )

    return make


def test_a_required_tool_gone_opens_one_incident_saying_so_and_its_return_resolves_it(
    make_recorded, make_channel
):
    channel = make_channel()
    healthcheck = make_recorded(requiredTools=["search_docs"])
    record(healthcheck, listing(*TOOLS), 0)
    went_down = record(healthcheck, missing_search_docs(), 1)
    outbox_consume(now=went_down)

    incident = Incident.objects.get()
    assert (incident.severity, incident.cause_kind) == ("critical", "missing_tools")
    assert incident.cause_reason == "Required tools missing: search_docs"
    assert incident.cause_summary == "Down in eu-west (missing_tools)"
    assert incident.cause_regions == {"eu-west": "missing_tools"}
    assert incident.cause_missing_tools == ["search_docs"]

    came_back = record(healthcheck, listing(*TOOLS), 2)
    outbox_consume(now=came_back)

    incident.refresh_from_db()
    assert incident.resolution == "recovered"
    assert timeline(incident) == ["opened", "tools_changed", "resolved"]
    assert kinds_delivered(channel) == ["incident.opened", "incident.resolved"]


def test_a_tool_removed_while_the_check_stays_up_is_one_notification(make_recorded, make_channel):
    channel = make_channel()
    healthcheck = make_recorded()
    record(healthcheck, listing(*TOOLS), 0)
    at = record(healthcheck, listing(TOOLS[1]), 1)

    outbox_consume(now=at)

    assert not Incident.objects.exists()
    assert kinds_delivered(channel) == ["healthcheck.tools_changed"]
    assert Notification.objects.get().details["removed"] == ["search_docs"]
