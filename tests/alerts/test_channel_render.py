"""What an alert says: headlines per event, the text facts, the digest, hostile text, the webhook JSON."""

from __future__ import annotations

from dataclasses import replace

import pytest

from alerts.channels import Alert, EventType
from alerts.channels.render import duration_words, headline, html_body, payload, text
from tests.alerts.channel_support import make_alert, make_notice, tools_alert


@pytest.mark.parametrize(
    ("event_type", "notice", "expected"),
    [
        (EventType.INCIDENT_OPENED, make_notice(), "DOWN: Docs MCP — Required tools missing: search_docs"),
        (
            EventType.INCIDENT_OPENED,
            make_notice(status="degraded", severity="warning"),
            "DEGRADED: Docs MCP — Required tools missing: search_docs",
        ),
        (EventType.INCIDENT_ESCALATED, make_notice(), "Escalated to DOWN: Docs MCP — Required tools missing: search_docs"),
        (EventType.INCIDENT_REMINDER, make_notice(), "Still DOWN: Docs MCP — Required tools missing: search_docs"),
        (EventType.INCIDENT_CAUSE_CHANGED, make_notice(), "Still DOWN, new cause: Docs MCP — Required tools missing: search_docs"),
        (EventType.INCIDENT_UNACKNOWLEDGED, make_notice(), "Unacknowledged, DOWN: Docs MCP — Required tools missing: search_docs"),
        (EventType.INCIDENT_ACKNOWLEDGED, make_notice(acknowledged_by="ana@acme.example"), "Acknowledged by ana@acme.example: Docs MCP"),
        (EventType.INCIDENT_RESOLVED, make_notice(status="up", resolved=True), "RECOVERED: Docs MCP after 12 min"),
    ],
)  # fmt: skip
def test_headlines(event_type, notice, expected):
    assert headline(make_alert(event_type, notices=(notice,))) == expected


def test_a_paused_check_closes_its_incident_in_words():
    notice = make_notice(resolved=True)
    notice = replace(notice, incident=replace(notice.incident, resolution="paused", duration_seconds=None))
    alert = make_alert(EventType.INCIDENT_RESOLVED, notices=(notice,))
    assert headline(alert) == "Closed (healthcheck paused): Docs MCP"
    assert text(alert).startswith("The incident on Docs MCP was closed: the healthcheck was paused.")


def test_the_text_names_status_reason_regions_since_and_links():
    body = text(make_alert())
    assert body.splitlines()[0] == "Docs MCP is DOWN."
    for line in (
        "Reason: Required tools missing: search_docs",
        "Failure kind: tools_missing",
        "Failing regions: eu-west (tools_missing), us-east (timeout)",
        "Missing tools: search_docs",
        "Since: 2026-12-01 10:00:00 UTC",
        "Healthcheck: https://app.uptimy.example/healthchecks/7b0c5f0e",
        "Acknowledge: https://app.uptimy.example/ack/signed-token",
    ):
        assert line in body.splitlines()


def test_a_recovery_has_its_duration_and_no_acknowledge_link():
    body = text(make_alert(EventType.INCIDENT_RESOLVED, notices=(make_notice(resolved=True),)))
    assert "Duration: 12 min" in body
    assert "Acknowledge:" not in body


def test_a_tools_change_names_the_tools():
    alert = tools_alert()
    assert headline(alert) == "Tool list changed: Docs MCP"
    body = text(alert)
    assert "Tools removed: search_docs" in body
    assert "create_issue now requires: repo, title" in body


def test_a_digest_lists_every_incident_up_to_its_cap():
    notices = tuple(make_notice(name=f"check {i}") for i in range(60))
    alert = make_alert(EventType.INCIDENTS_DIGEST, notices=notices)
    assert headline(alert) == "60 incidents opened in Acme"
    body = text(alert)
    assert "- check 0 is DOWN (Required tools missing: search_docs)" in body
    assert "- check 49 is" in body
    assert "- check 50 is" not in body
    assert "… and 10 more" in body
    assert "All incidents: https://app.uptimy.example/incidents" in body
    assert len(payload(alert)["data"]["incidents"]) == 60


def test_hostile_names_cannot_break_a_headline_into_lines():
    alert = make_alert(notices=(make_notice(name="evil\r\nBcc: victim@example.com\x00" + "x" * 500),))
    title = headline(alert)
    assert not {"\n", "\r", "\x00"} & set(title)
    assert len(title) < 300


def test_html_escapes_hostile_text():
    alert = make_alert(notices=(make_notice(name="<img src=x onerror=alert(1)>"),))
    assert "<img" not in html_body(alert)


def test_the_payload_is_versioned_with_utc_times():
    data = payload(make_alert(EventType.INCIDENT_RESOLVED, notices=(make_notice(resolved=True),)))
    assert data["version"] == 1
    assert data["type"] == "incident.resolved"
    assert data["data"]["incident"]["resolved_at"] == "2026-12-01T10:00:00Z"
    assert data["data"]["incident"]["duration_seconds"] == 754.0
    assert data["data"]["healthcheck"]["status"] == "down"


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0, "0 s"),
        (45, "45 s"),
        (60, "1 min"),
        (754, "12 min"),
        (3600, "1 h"),
        (7500, "2 h 5 min"),
        (86400 * 3 + 3600 * 4, "3 d 4 h"),
    ],
)
def test_duration_words(seconds, words):
    assert duration_words(seconds) == words


def _digest_of(*events: EventType) -> Alert:
    notices = []
    for index, event in enumerate(events):
        resolved = event is EventType.INCIDENT_RESOLVED
        notice = make_notice(name=f"check {index}", status="up" if resolved else "down", resolved=resolved)
        notices.append(replace(notice, event=event))
    return make_alert(EventType.INCIDENTS_DIGEST, notices=tuple(notices))


OPENED, ESCALATED, RESOLVED = (
    EventType.INCIDENT_OPENED,
    EventType.INCIDENT_ESCALATED,
    EventType.INCIDENT_RESOLVED,
)


@pytest.mark.parametrize(
    ("events", "title", "first_line"),
    [
        (
            (OPENED,) * 3,
            "3 incidents opened in Acme",
            "- check 0 is DOWN (Required tools missing: search_docs)",
        ),
        ((RESOLVED,) * 3, "3 incidents resolved in Acme", "- check 0 is UP again after 12 min"),
        (
            (ESCALATED,) * 2,
            "2 incidents escalated in Acme",
            "- check 0 is now DOWN (it was degraded) (Required tools missing: search_docs)",
        ),
        (
            (OPENED, OPENED, ESCALATED, RESOLVED),
            "2 incidents opened, 1 escalated and 1 resolved in Acme",
            "- check 0 is DOWN (Required tools missing: search_docs)",
        ),
        (
            (RESOLVED, OPENED),
            "1 incident opened and 1 resolved in Acme",
            "- check 0 is UP again after 12 min",
        ),
    ],
)
def test_a_digest_says_what_happened_counted_and_one_line_each(events, title, first_line):
    alert = _digest_of(*events)

    body = text(alert)

    assert headline(alert) == title
    assert body.startswith(f"These {len(events)} alerts for Acme came at once")
    lines = [line for line in body.splitlines() if line.startswith("- ")]
    assert len(lines) == len(events)
    assert lines[0].startswith(first_line)
    assert "tool list" not in body.lower()
    assert [item["event"] for item in payload(alert)["data"]["incidents"]] == [e.value for e in events]
