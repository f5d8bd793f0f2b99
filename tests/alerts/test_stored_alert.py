"""A delivery's stored alert reads back as the alert it was (alerts.channels.stored): pure, no database."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from alerts.channels import EventType
from alerts.channels.stored import StoredAlertUnreadable, alert_document, alert_from_document
from alerts.channels.webhook import body_of
from tests.alerts.channel_support import make_alert, make_notice, tools_alert


@pytest.mark.parametrize(
    "alert",
    [
        make_alert(),
        make_alert(EventType.INCIDENT_RESOLVED, notices=(make_notice(resolved=True, acknowledged_by="ann"),)),
        make_alert(EventType.INCIDENTS_DIGEST, notices=(make_notice(name="a"), make_notice(name="b"))),
        make_alert(
            EventType.INCIDENTS_DIGEST,
            notices=(
                replace(make_notice(name="a"), event=EventType.INCIDENT_OPENED),
                replace(make_notice(name="b", resolved=True), event=EventType.INCIDENT_RESOLVED),
            ),
        ),
        make_alert(EventType.CHANNEL_TEST),
        tools_alert(),
    ],
    ids=["opened", "resolved", "digest", "mixed digest", "test", "tools"],
)
def test_an_alert_read_back_from_its_stored_json_is_the_same_alert(alert):
    stored = json.loads(json.dumps(alert_document(alert)))

    again = alert_from_document(stored)

    assert again == alert
    assert body_of(again) == body_of(alert)


@pytest.mark.parametrize(
    "document",
    [{}, {"version": 99}, {**alert_document(make_alert()), "occurred_at": "yesterday"}],
    ids=["empty", "unknown version", "bad time"],
)
def test_a_stored_alert_this_version_can_t_read_is_refused(document):
    with pytest.raises(StoredAlertUnreadable):
        alert_from_document(document)
