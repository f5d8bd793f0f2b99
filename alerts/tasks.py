"""Celery tasks of the alerts app: thin, each calls one service. Task names are stable."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from alerts import services


@shared_task(name="alerts.consume_outbox", ignore_result=True, expires=10)
def consume_outbox() -> int:
    """Read monitors' outbox into incidents and deliveries until it is empty (or another consumer reads it)."""
    total = 0
    while read := services.outbox_consume(now=timezone.now()):
        total += read
    return total


# Rounds one task sends at most, so a backlog does not keep the default queue's worker from the rest.
MAX_SEND_ROUNDS = 20


@shared_task(name="alerts.send_deliveries", ignore_result=True, expires=10)
def send_deliveries() -> int:
    """Send the deliveries that are due, round after round, until none is (or MAX_SEND_ROUNDS)."""
    total = 0
    for _ in range(MAX_SEND_ROUNDS):
        sent = services.deliveries_send(now=timezone.now())
        total += sent
        if not sent:
            break
    return total


@shared_task(name="alerts.open_missing_incidents", ignore_result=True, expires=60)
def open_missing_incidents() -> int:
    """Open the incidents of checks still failing after their maintenance window."""
    return services.incidents_open_missing(now=timezone.now())


@shared_task(name="alerts.send_reminders", ignore_result=True, expires=60)
def send_reminders() -> int:
    """Remind of unacknowledged incidents and escalate them, as their policies ask."""
    return services.incidents_remind(now=timezone.now())
