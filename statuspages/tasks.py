"""Celery tasks of the status pages: thin, each calls services. Task names are stable."""

from __future__ import annotations

import time

from celery import shared_task
from django.utils import timezone

from statuspages.services import drafting, notices, sending, subscribers

# How long one run keeps fanning out and sending before it leaves the rest to the next tick,
# so a backlog (10,000 subscribers) does not hold the worker from the other entries.
RUN_SECONDS = 20.0


@shared_task(name="statuspages.draft_incidents", ignore_result=True, expires=10)
def draft_incidents() -> int:
    """Read monitors' status changes into drafted incidents until none is left (or another reader holds the cursor)."""
    total = 0
    while read := drafting.drafts_consume(now=timezone.now()):
        total += read
    return total


@shared_task(name="statuspages.notify_subscribers", ignore_result=True, expires=10)
def notify_subscribers() -> int:
    """Write maintenance notices, fan notices out and send what is due, for at most RUN_SECONDS; return deliveries claimed."""
    started = time.monotonic()
    notices.maintenance_scan(now=timezone.now())
    while time.monotonic() - started < RUN_SECONDS and notices.notices_fan_out(now=timezone.now()):
        pass
    sent = 0
    while time.monotonic() - started < RUN_SECONDS and (claimed := sending.deliveries_send()):
        sent += claimed
    return sent


@shared_task(name="statuspages.tidy_subscribers", ignore_result=True, expires=600)
def tidy_subscribers() -> int:
    """Forget addresses never confirmed, and notices long sent; return how many rows went."""
    now = timezone.now()
    return subscribers.subscribers_expire(now=now) + notices.notices_prune(now=now)
