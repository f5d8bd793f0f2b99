"""The PagerDuty channel against a loopback receiver standing in for the Events API v2."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import pytest

from alerts.channels import EventType, channel_kind
from tests.alerts.channel_support import Reply, make_alert, make_notice, tools_alert

KIND = channel_kind("pagerduty")
ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF"
ACCEPTED = Reply(status=202, body=b'{"status":"success","message":"Event processed"}')


@pytest.fixture
def config(receiver):
    receiver.default = ACCEPTED
    return KIND.parse({"routing_key": ROUTING_KEY, "events_url": receiver.url("/v2/enqueue")})


def send(config, alert, *, timeout: float = 5.0):
    return KIND.send(config, alert, timeout=timeout, allow_private=True)


def events(receiver) -> list[dict]:
    return [json.loads(r.body) for r in receiver.received]


@pytest.mark.parametrize(
    ("event_type", "action"),
    [
        (EventType.INCIDENT_OPENED, "trigger"),
        (EventType.INCIDENT_ESCALATED, "trigger"),
        (EventType.INCIDENT_REMINDER, "trigger"),
        (EventType.INCIDENT_CAUSE_CHANGED, "trigger"),
        (EventType.INCIDENT_UNACKNOWLEDGED, "trigger"),
        (EventType.INCIDENT_ACKNOWLEDGED, "acknowledge"),
        (EventType.INCIDENT_RESOLVED, "resolve"),
    ],
)
def test_incident_events_map_to_actions_on_the_incidents_dedup_key(receiver, config, event_type, action):
    attempt = send(config, make_alert(event_type))
    assert attempt.ok, attempt.error
    assert attempt.status_code == 202
    (event,) = events(receiver)
    assert event["event_action"] == action
    assert event["dedup_key"] == make_notice().incident.id
    assert event["routing_key"] == ROUTING_KEY
    assert receiver.received[0].path == "/v2/enqueue"


def test_a_trigger_carries_summary_severity_and_links(receiver, config, alert):
    send(config, alert)
    (event,) = events(receiver)
    payload = event["payload"]
    assert payload["summary"] == "DOWN: Docs MCP — Required tools missing: search_docs"
    assert payload["severity"] == "critical"
    assert payload["source"] == "Docs MCP"
    assert payload["class"] == "tools_missing"
    assert payload["custom_details"]["cause"]["missing_tools"] == ["search_docs"]
    assert {link["text"] for link in event["links"]} == {"Healthcheck in Uptimy", "Acknowledge in Uptimy"}


def test_a_degraded_incident_triggers_a_warning(receiver, config):
    send(config, make_alert(notices=(make_notice(status="degraded", severity="warning"),)))
    assert events(receiver)[0]["payload"]["severity"] == "warning"


def test_the_summary_is_cut_to_1024_characters(receiver, config):
    send(config, make_alert(notices=(make_notice(name="n" * 5000),)))
    assert len(events(receiver)[0]["payload"]["summary"]) <= 1024


def test_a_digest_triggers_each_incident_on_one_connection(receiver, config):
    base = make_notice()
    notices = tuple(replace(base, incident=replace(base.incident, id=f"inc-{i}")) for i in range(3))
    attempt = send(config, make_alert(EventType.INCIDENTS_DIGEST, notices=notices))
    assert attempt.ok
    assert [e["dedup_key"] for e in events(receiver)] == ["inc-0", "inc-1", "inc-2"]
    assert {e["event_action"] for e in events(receiver)} == {"trigger"}


def test_a_digest_of_recoveries_resolves_each_incident_instead_of_triggering_it(receiver, config):
    base = make_notice(status="up", incident_status="resolved", resolved=True)
    notices = tuple(
        replace(base, incident=replace(base.incident, id=f"inc-{i}"), event=EventType.INCIDENT_RESOLVED)
        for i in range(3)
    )
    assert send(config, make_alert(EventType.INCIDENTS_DIGEST, notices=notices)).ok
    assert [(e["dedup_key"], e["event_action"]) for e in events(receiver)] == [
        ("inc-0", "resolve"),
        ("inc-1", "resolve"),
        ("inc-2", "resolve"),
    ]


def test_a_digest_stops_at_the_first_refusal_and_says_which(receiver, config):
    notices = tuple(make_notice() for _ in range(3))
    receiver.answer(ACCEPTED, Reply(status=500, body=b"oops"))
    attempt = send(config, make_alert(EventType.INCIDENTS_DIGEST, notices=notices))
    assert not attempt.ok
    assert attempt.error.endswith("(request 2 of 3)")
    assert len(receiver.received) == 2


def test_a_test_triggers_and_resolves_its_own_event(receiver, config):
    attempt = send(config, make_alert(EventType.CHANNEL_TEST))
    assert attempt.ok
    first, second = events(receiver)
    assert (first["event_action"], second["event_action"]) == ("trigger", "resolve")
    assert first["dedup_key"] == second["dedup_key"] == "uptimy-test-evt_2b7c1f"
    assert first["payload"]["severity"] == "info"


def test_a_tools_change_is_a_change_event(receiver, config):
    attempt = send(config, tools_alert())
    assert attempt.ok
    assert receiver.received[0].path == "/v2/change/enqueue"
    event = events(receiver)[0]
    assert "event_action" not in event
    assert event["payload"]["custom_details"]["tools"]["removed"] == ["search_docs"]


def test_a_refused_routing_key_is_permanent(receiver, config, alert):
    receiver.answer(
        Reply(
            status=400,
            body=b'{"status":"invalid event","message":"Event object is invalid","errors":["Invalid routing key"]}',
            headers=(("Content-Type", "application/json"),),
        )
    )
    attempt = send(config, alert)
    assert attempt.permanent
    assert attempt.status_code == 400


def test_throttling_says_when_to_retry(receiver, config, alert):
    receiver.answer(Reply(status=429, headers=(("Retry-After", "30"),)))
    attempt = send(config, alert)
    assert (attempt.ok, attempt.permanent, attempt.retry_after) == (False, False, 30.0)


def test_the_routing_key_never_reaches_an_error_or_the_logs(receiver, config, alert, caplog):
    caplog.set_level(logging.DEBUG)
    receiver.answer(Reply(status=400, body=f"unknown key {ROUTING_KEY}".encode()))
    attempt = send(config, alert)
    assert "unknown key [redacted]" in attempt.error
    assert ROUTING_KEY not in attempt.error
    assert ROUTING_KEY not in caplog.text


def test_the_default_events_url_is_pagerdutys():
    config = KIND.parse({"routing_key": ROUTING_KEY})
    assert config.events_url == "https://events.pagerduty.com/v2/enqueue"
    assert KIND.masked(config) == {"routing_key": "********", "events_url": config.events_url}
