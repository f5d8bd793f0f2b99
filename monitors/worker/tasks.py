"""Celery tasks: thin wrappers that parse ids and call one service each.

Names are explicit and stable (``monitors.run_batch``), since queued messages outlive deploys;
the Python names may change, the task names may not.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from monitors import services
from monitors.models import region_queue
from monitors.pagefetch import fetch_page
from monitors.ratelimit import rate_counters_prune
from monitors.worker import dispatch
from monitors.worker.execution import BatchItem, Enqueue, execute_batch

# Enough retries, backing off to 30 s, to ride out a database restart or failover.
DATABASE_RETRIES = 10


def enqueue_celery(region: str, items: list[BatchItem], delay: float = 0) -> None:
    """Send a batch to the region's queue, where only that region's workers consume it."""
    # celery-types narrows ``args`` to a tuple and ``countdown`` to a float; Celery takes a list (the
    # message is JSON either way) and countdown=None for "no delay", which is what is sent here.
    run_region_batch.apply_async(
        args=[region, items],  # type: ignore[arg-type]
        queue=region_queue(region),
        countdown=delay or None,  # type: ignore[arg-type]
    )


def broker_enqueue() -> Enqueue | None:
    """Return how to hand a batch to a region's workers: the broker's queue, or None without a broker."""
    return enqueue_celery if settings.REDIS_URL else None


@shared_task(name="monitors.dispatch_due", ignore_result=True, expires=10)
def dispatch_due() -> int:
    """Send what an earlier tick left unsent, claim what is due now and send one batch per region.

    A tick's worth; it expires if late. The claim's batches go through the outbox
    (monitors.worker.dispatch), so a beat worker that dies mid-tick loses no slot.
    """
    return dispatch.dispatch_due(enqueue=enqueue_celery)


# acks_late + reject_on_worker_lost: a worker killed mid-batch leaves the message to be
# redelivered; recording is idempotent, so the rerun loses no slot and duplicates nothing.
# A database that is down or restarting fails the task with a DatabaseError: retry it (the
# checks run again, recording stays idempotent) instead of acking a batch that was never
# recorded.
@shared_task(
    name="monitors.run_batch",
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=30,
    max_retries=DATABASE_RETRIES,
)
def run_region_batch(region: str, items: list[BatchItem]) -> int:
    """Run one region's batch here and record it; rechecks go back to the region's queue."""
    return execute_batch(region, items, enqueue=enqueue_celery)


@shared_task(name="monitors.settle_verdicts", ignore_result=True, expires=10)
def settle_verdicts() -> int:
    """Decide the slots whose settle window closed with a region still silent."""
    return services.verdicts_settle(now=timezone.now())


@shared_task(name="monitors.judge_heartbeats", ignore_result=True, expires=10)
def judge_heartbeats() -> int:
    """Judge the heartbeats pinged since last judged or past their due-by."""
    from monitors.services.heartbeats import heartbeats_judge

    return heartbeats_judge(now=timezone.now())


@shared_task(name="monitors.refresh_rollups", ignore_result=True, expires=120)
def refresh_rollups() -> int:
    """Fold the latest results into the hourly and daily rollups."""
    return services.rollups_refresh(now=timezone.now())


@shared_task(name="monitors.prune_results", ignore_result=True, expires=3600)
def prune_results() -> int:
    """Delete raw results and heartbeat pings past their retention, and rate-limit counters whose window ended."""
    from monitors.services.heartbeats import pings_prune

    now = timezone.now()
    # The counters' keys come from what clients typed (user names, addresses): without this
    # the embedded default's table would keep one row per name ever tried.
    return services.results_prune(now=now) + pings_prune(now=now) + rate_counters_prune(now=now)


@shared_task(name="monitors.prune_audit_events", ignore_result=True, expires=3600)
def prune_audit_events() -> int:
    """Delete audit events older than each plan's retention."""
    return services.audit_prune(now=timezone.now())


@shared_task(name="monitors.verify_quotes", ignore_result=True, expires=600)
def verify_quotes() -> int:
    """Fetch due pricing pages (one at a time, one per host) and record whether each states its free-tier quote."""
    report = services.quotes_verify(
        fetch=lambda url: fetch_page(
            url,
            timeout=settings.UPTIMY_QUOTE_FETCH_TIMEOUT,
            allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
            nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
        ),
        now=timezone.now,
        limit=settings.UPTIMY_QUOTE_PAGES_PER_ROUND,
    )
    return report.found
