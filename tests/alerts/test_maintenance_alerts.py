"""Maintenance windows quiet alerts: no incident inside one, one incident if the check still fails after."""

from __future__ import annotations

from datetime import timedelta

import pytest

from alerts.models import Delivery, Incident, Notification
from alerts.services import incidents_open_missing, outbox_consume
from monitors.models import Healthcheck
from monitors.services import maintenance_window_create
from tests.alerts.conftest import status_change, timeline

pytestmark = pytest.mark.django_db


@pytest.fixture
def window(org, check, now):
    """A window holding the check for the hour from ``now``."""
    return maintenance_window_create(
        organization=org,
        name="deploy",
        starts_at=now,
        duration=timedelta(hours=1),
        healthchecks=[check.public_id],
    )


def fails(check, at, status: str = "down") -> None:
    """Record the check going ``status`` at ``at``, as the recorder does (its row and its outbox row)."""
    Healthcheck.objects.filter(pk=check.pk).update(
        status=status,
        status_changed_at=at,
        cause_kind="connect",
        cause_reason="Connection refused",
        cause_regions={"eu-west": "connect"},
    )
    status_change(check, status, at=at, reason="Down in eu-west (connect)", regions={"eu-west": "connect"})


def test_a_failure_inside_a_window_opens_no_incident_and_tells_nobody(check, window, now, make_channel):
    make_channel()
    fails(check, now + timedelta(minutes=5))

    outbox_consume(now=now + timedelta(minutes=5))

    assert not Incident.objects.exists()
    assert not Notification.objects.exists()


def test_a_check_still_failing_when_its_window_ends_gets_its_incident_with_one_alert(
    check, window, now, make_channel
):
    channel = make_channel()
    fails(check, now + timedelta(minutes=5))
    outbox_consume(now=now + timedelta(minutes=5))

    assert incidents_open_missing(now=now + timedelta(minutes=30)) == 0  # still inside
    assert incidents_open_missing(now=now + timedelta(minutes=61)) == 1
    assert incidents_open_missing(now=now + timedelta(minutes=62)) == 0

    incident = Incident.objects.get()
    assert (incident.severity, incident.cause_reason) == ("critical", "Connection refused")
    assert incident.cause_summary == "Down in eu-west (connect)"
    assert timeline(incident) == ["opened"]
    assert list(Delivery.objects.filter(channel=channel).values_list("notification__kind", flat=True)) == [
        "incident.opened"
    ]


def test_a_check_back_up_inside_its_window_gets_no_incident(check, window, now, make_channel):
    make_channel()
    fails(check, now + timedelta(minutes=5))
    Healthcheck.objects.filter(pk=check.pk).update(status="up", status_changed_at=now + timedelta(minutes=9))
    status_change(check, "up", frm="down", at=now + timedelta(minutes=9))
    outbox_consume(now=now + timedelta(minutes=9))

    assert incidents_open_missing(now=now + timedelta(minutes=61)) == 0
    assert not Incident.objects.exists()


def test_an_incident_open_before_the_window_is_still_resolved_aloud(check, org, now, make_channel):
    channel = make_channel()
    fails(check, now - timedelta(minutes=10))
    outbox_consume(now=now - timedelta(minutes=10))
    maintenance_window_create(
        organization=org,
        name="fix",
        starts_at=now,
        duration=timedelta(hours=1),
        healthchecks=[check.public_id],
    )

    status_change(check, "up", frm="down", at=now + timedelta(minutes=5))
    outbox_consume(now=now + timedelta(minutes=5))

    assert Incident.objects.get().resolution == "recovered"
    kinds = list(
        Delivery.objects.filter(channel=channel).order_by("id").values_list("notification__kind", flat=True)
    )
    assert kinds == ["incident.opened", "incident.resolved"]


def test_a_fresh_failure_is_left_to_the_consumer(check, now):
    fails(check, now)

    assert incidents_open_missing(now=now + timedelta(seconds=30)) == 0


def test_a_failing_check_with_its_incident_open_gets_no_second(check, now):
    fails(check, now)
    outbox_consume(now=now)

    assert incidents_open_missing(now=now + timedelta(minutes=5)) == 0
    assert Incident.objects.count() == 1
