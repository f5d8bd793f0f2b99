"""A tool list that changes, as the receivers see it: one message for one event.

The recorder writes the outbox from check outcomes (with a recheck, so the first failing run
records the tool change before the recheck decides the status), the consumer reads it after each
run as the beat would, and the sender delivers to an SMTP server, a Standard Webhooks receiver
and a PagerDuty-shaped one on loopback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from alerts.services import outbox_consume
from alerts.services.sending import deliveries_send
from monitors.models import Healthcheck
from monitors.services import RunResult, healthcheck_create, outcomes_record
from probes.checks.mcp import MCP
from probes.types import ProbeOutcome
from tests.alerts.outcomes import READ, SEARCH, listing, missing_search_docs
from tests.alerts.receivers_support import Receivers, organization_receivers, use_loopback_receivers

pytestmark = pytest.mark.django_db


@dataclass
class Watched:
    """One check that requires search_docs, rechecked once before it counts as down."""

    check: Healthcheck
    receivers: Receivers
    start: datetime

    def run(self, minute: int, attempt: int, outcome: ProbeOutcome) -> None:
        """Record one run, then consume and send as the next tick would."""
        slot = self.start + timedelta(minutes=minute)
        recorded = slot + timedelta(seconds=2 + attempt * 5)
        outcomes_record(
            region_slug="eu-west",
            results=[RunResult(self.check.id, slot, attempt, outcome, recorded - timedelta(seconds=1))],
            now=recorded,
        )
        outbox_consume(now=recorded)
        while deliveries_send(now=recorded):
            pass


@pytest.fixture
def watched(org, now, receiver, smtp_server, settings) -> Iterator[Watched]:
    use_loopback_receivers(settings, smtp_server)
    check = healthcheck_create(
        organization=org,
        name="Docs MCP",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp", "requiredTools": ["search_docs"]},
        now=now,
        region_slugs=["eu-west"],
        rules={"recheck_count": 1, "recheck_delay_seconds": 5},
    )
    with organization_receivers(org, webhook=receiver, smtp=smtp_server) as receivers:
        found = Watched(check, receivers, now)
        found.run(0, 0, listing(SEARCH, READ))
        yield found


def test_a_required_tool_gone_reaches_each_receiver_once_as_the_incident_naming_it(watched):
    watched.run(1, 0, missing_search_docs())  # the tool list changed; the recheck is still to come
    watched.run(1, 1, missing_search_docs())  # the recheck: down

    mails = watched.receivers.mail_texts()
    hooks = watched.receivers.webhooks()
    pages = watched.receivers.pagerduty.received

    assert [subject for subject, _ in mails] == [
        "[Uptimy] DOWN: Docs MCP — Required tools missing: search_docs"
    ]
    assert "Missing tools: search_docs" in mails[0][1]
    assert [hook["type"] for hook in hooks] == ["incident.opened"]
    assert hooks[0]["data"]["cause"]["missing_tools"] == ["search_docs"]
    assert [(page.path, json.loads(page.body).get("event_action")) for page in pages] == [
        ("/v2/enqueue", "trigger")
    ]


def test_a_tool_removed_while_the_check_stays_up_reaches_each_receiver_once_as_a_tool_change(watched):
    watched.run(1, 0, listing(SEARCH))

    mails = watched.receivers.mail_texts()
    hooks = watched.receivers.webhooks()
    pages = watched.receivers.pagerduty.received

    assert [subject for subject, _ in mails] == ["[Uptimy] Tool list changed: Docs MCP"]
    assert "Tools removed: read_page" in mails[0][1]
    assert mails[0][1].startswith("The tool list of Docs MCP changed while it stayed up.")
    assert [(hook["type"], hook["data"]["tools"]["removed"]) for hook in hooks] == [
        ("healthcheck.tools_changed", ["read_page"])
    ]
    assert [page.path for page in pages] == ["/v2/change/enqueue"]
