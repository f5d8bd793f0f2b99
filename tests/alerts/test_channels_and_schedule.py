"""Channels' configs at rest, reminders and escalation, and how the workers run the consumer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings

from alerts.models import Channel
from alerts.services import alert_policy_set, incidents_remind, outbox_consume
from monitors.secrets import SecretUnreadable
from tests.alerts.conftest import kinds_delivered, status_change, timeline

pytestmark = pytest.mark.django_db


def test_a_channels_config_is_stored_encrypted_and_reads_back(make_channel):
    channel = make_channel()

    stored = Channel.objects.values_list("config_encrypted", flat=True).get(pk=channel.pk)

    assert "whsec_" not in stored
    assert "hooks.example.com" not in stored
    assert Channel.objects.get(pk=channel.pk).config["secret"].startswith("whsec_")


def test_a_config_under_a_key_rotated_away_says_so(make_channel, settings):
    channel = make_channel()
    settings.UPTIMY_SECRETS_KEY = "another key"

    with pytest.raises(SecretUnreadable, match="channel config"):
        _ = Channel.objects.get(pk=channel.pk).config


def test_reminders_follow_the_policy_and_stop_at_acknowledgement(check, now, org, make_channel):
    from alerts.services import incident_acknowledge

    channel = make_channel()
    alert_policy_set(organization=org, healthcheck=check, channels=[channel], reminder_minutes=30)
    status_change(check, "down", at=now)
    outbox_consume(now=now)

    assert incidents_remind(now=now + timedelta(minutes=29)) == 0
    assert incidents_remind(now=now + timedelta(minutes=30)) == 1
    assert incidents_remind(now=now + timedelta(minutes=59)) == 0
    incident = check.incidents.get()
    incident_acknowledge(incident=incident, by="test", now=now + timedelta(minutes=59))
    assert incidents_remind(now=now + timedelta(minutes=90)) == 0

    assert timeline(incident) == ["opened", "reminder", "acknowledged"]
    assert kinds_delivered(channel) == ["incident.opened", "incident.reminder", "incident.acknowledged"]


def test_a_reminder_says_the_cause_in_the_check_s_words_of_now(check, now, org, make_channel):
    from alerts.models import Notification
    from monitors.models import Healthcheck

    channel = make_channel()
    alert_policy_set(organization=org, healthcheck=check, channels=[channel], reminder_minutes=60)
    status_change(
        check, "down", at=now, regions={"eu-west": "certificate"}, sentence="Certificate expired 1 day ago"
    )
    outbox_consume(now=now)
    # The recorder rewrites the same cause's sentence each run, with no cause change.
    Healthcheck.objects.filter(pk=check.pk).update(
        cause_kind="certificate", cause_reason="Certificate expired 2 days ago"
    )

    assert incidents_remind(now=now + timedelta(minutes=60)) == 1

    reminder = Notification.objects.get(kind="incident.reminder")
    assert reminder.details["cause"]["reason"] == "Certificate expired 2 days ago"
    assert check.incidents.get().cause_reason == "Certificate expired 2 days ago"


def test_an_unacknowledged_incident_escalates_to_more_channels_once(check, now, org, make_channel):
    first, oncall = make_channel(), make_channel(kind=Channel.Kind.PAGERDUTY)
    alert_policy_set(
        organization=org,
        healthcheck=check,
        channels=[first],
        escalation_channels=[oncall],
        escalation_minutes=15,
    )
    status_change(check, "down", at=now)
    outbox_consume(now=now)

    assert incidents_remind(now=now + timedelta(minutes=15)) == 1
    assert incidents_remind(now=now + timedelta(minutes=45)) == 0
    status_change(check, "up", at=now + timedelta(minutes=50), frm="down")
    outbox_consume(now=now + timedelta(minutes=50))

    assert kinds_delivered(oncall) == ["incident.unacknowledged", "incident.resolved"]
    assert kinds_delivered(first) == ["incident.opened", "incident.resolved"]


def test_beat_consumes_the_outbox_every_tick_and_reminds_on_the_default_queue():
    entries = {entry["task"]: entry for entry in settings.CELERY_BEAT_SCHEDULE.values()}

    assert entries["alerts.consume_outbox"]["schedule"] == settings.UPTIMY_TICK_SECONDS
    assert entries["alerts.send_reminders"]["schedule"] == 30.0
    assert settings.CELERY_TASK_ROUTES["alerts.consume_outbox"] == {"queue": "default"}
    assert settings.CELERY_TASK_ROUTES["alerts.send_reminders"] == {"queue": "default"}


def test_the_embedded_worker_runs_the_consumer_task_by_name(check, now):
    from celery import current_app

    from monitors.worker.embedded import EmbeddedWorker

    worker = EmbeddedWorker(threads=1)
    try:
        job = next(job for job in worker.jobs if job.name == "alerts.consume_outbox")
    finally:
        worker.pool.shutdown()
    assert job.run is current_app.tasks["alerts.consume_outbox"]

    status_change(check, "down", at=now)
    job.run()

    assert check.incidents.get().is_open
