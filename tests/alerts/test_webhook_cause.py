"""A webhook's cause, as its receiver reads it, is the cause the healthcheck API shows for the same check.

The recorder takes two regions' failures, the consumer opens the incident, the sender posts it to
a loopback receiver; the body is verified with ``standardwebhooks``, checked against the OpenAPI
schema the API serves, and compared with ``GET /api/v1/healthchecks/{id}/``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from standardwebhooks.webhooks import Webhook

from alerts.channels.webhook import generate_secret
from alerts.models import Channel
from alerts.services import alert_policy_set, channel_create, outbox_consume
from alerts.services.sending import deliveries_send
from monitors.services import RunResult, healthcheck_create, outcomes_record
from probes.checks.mcp import MCP
from probes.types import Access, FailureKind, ProbeOutcome, Status, Timings, ToolInfo, Transport

pytestmark = pytest.mark.django_db

REFUSED = "Connection to mcp.example.com port 443 refused"
TIMED_OUT = "No answer from mcp.example.com within 10 s"
MISSING = "Required tools missing: search_docs"


def up() -> ProbeOutcome:
    tools = (ToolInfo("search_docs", ("query",)),)
    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(total_ms=80.0),
        access=Access.OPEN,
        tools=tools,
        tool_count=1,
        tool_digest="d-search_docs",
        transport=Transport.STREAMABLE_HTTP,
    )


def failing(kind: FailureKind, reason: str) -> ProbeOutcome:
    missing = ("search_docs",) if kind is FailureKind.MISSING_TOOLS else ()
    return ProbeOutcome(
        status=Status.DOWN, kind=kind, reason=reason, timings=Timings(total_ms=1.0), missing_tools=missing
    )


STEPS: dict[str, list[dict[str, ProbeOutcome]]] = {
    # Down in both regions, each for its own reason.
    "incident.opened": [
        {"eu-west": failing(FailureKind.CONNECT, REFUSED), "us-east": failing(FailureKind.TIMEOUT, TIMED_OUT)}
    ],
    # Still down, now for another reason in both (a new cause, a new since).
    "incident.cause_changed": [
        {
            "eu-west": failing(FailureKind.CONNECT, REFUSED),
            "us-east": failing(FailureKind.TIMEOUT, TIMED_OUT),
        },
        {
            "eu-west": failing(FailureKind.MISSING_TOOLS, MISSING),
            "us-east": failing(FailureKind.MISSING_TOOLS, MISSING),
        },
    ],
}
REGION_REASONS = {
    "incident.opened": {"eu-west": REFUSED, "us-east": TIMED_OUT},
    "incident.cause_changed": {"eu-west": MISSING, "us-east": MISSING},
}


@pytest.fixture
def served_schema(client) -> Draft202012Validator:
    """Return a validator of the webhook body, from the OpenAPI document the API serves."""
    response = client.get("/api/v1/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    body = schema["webhooks"]["alert"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return Draft202012Validator({"components": schema["components"], **body})


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _record(check_id: int, slot: datetime, outcomes: dict[str, ProbeOutcome]) -> datetime:
    recorded = slot
    for index, (region, outcome) in enumerate(sorted(outcomes.items())):
        recorded = slot + timedelta(seconds=2 + index)
        outcomes_record(
            region_slug=region,
            results=[RunResult(check_id, slot, 0, outcome, recorded - timedelta(seconds=1))],
            now=recorded,
        )
    return recorded


@pytest.mark.parametrize("event", STEPS)
def test_the_webhook_body_carries_the_cause_the_healthcheck_api_shows(
    event, org, now, client, receiver, served_schema, settings
):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    secret = generate_secret()
    hook = channel_create(
        organization=org,
        name="hook",
        kind=Channel.Kind.WEBHOOK,
        config={"url": receiver.url(), "secret": secret},
    )
    alert_policy_set(organization=org, channels=[hook])
    check = healthcheck_create(
        organization=org,
        name="Docs MCP",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp", "requiredTools": ["search_docs"]},
        now=now,
        region_slugs=["eu-west", "us-east"],
        rules={"recheck_count": 0},
    )
    _record(check.id, now, {"eu-west": up(), "us-east": up()})
    for minute, outcomes in enumerate(STEPS[event], start=1):
        recorded = _record(check.id, now + timedelta(minutes=minute), outcomes)
        outbox_consume(now=recorded)
        while deliveries_send(now=recorded):
            pass

    bodies: list[dict[str, Any]] = [
        Webhook(secret).verify(got.body, got.headers) for got in receiver.received
    ]
    body = bodies[-1]
    shown = client.get(f"/api/v1/healthchecks/{check.public_id}/").json()["cause"]
    cause = body["data"]["cause"]

    assert body["type"] == event
    assert [error.message for error in served_schema.iter_errors(body)] == []
    assert (cause["kind"], cause["reason"], cause["missing_tools"]) == (
        shown["kind"],
        shown["reason"],
        shown["missing_tools"],
    )
    assert _moment(cause["since"]) == _moment(shown["since"])
    assert {region["region"]: region["kind"] for region in cause["regions"]} == shown["failed_regions"]
    assert {region["region"]: region["reason"] for region in cause["regions"]} == REGION_REASONS[event]
