"""Claim what is due and hand one batch per region to whatever runs batches (broker or embedded).

Both dispatchers go through :func:`dispatch_due`: the Celery beat task
(monitors.worker.tasks.dispatch_due) with the broker's enqueue, the embedded worker
(monitors.worker.embedded) with its own. Each tick first publishes what an earlier tick left in
the outbox, then claims and stages (one transaction), then publishes what it staged and deletes
it (monitors.worker.outbox says why a batch sent twice is harmless).

Messages carry ids and ISO timestamps only: ``[healthcheck_id, slot_iso, attempt]``
(:data:`monitors.worker.execution.BatchItem`).
"""

from __future__ import annotations

import time
from datetime import datetime

from django.utils import timezone

from monitors import metrics
from monitors.worker.execution import Enqueue
from monitors.worker.outbox import outbox_publish, outbox_take_due
from monitors.worker.scheduling import claim_and_stage


def dispatch_due(*, enqueue: Enqueue, now: datetime | None = None) -> int:
    """Publish what is left unsent, claim what is due and publish its batches; return the claims.

    A publish that fails (the broker refuses) raises: the unsent batches stay in the outbox
    for the next tick, and a tick whose leftovers fail claims nothing new.
    """
    now = now or timezone.now()
    outbox_publish(outbox_take_due(now=now), enqueue=enqueue)
    started = time.perf_counter()
    staged = claim_and_stage(now=now)
    metrics.observe_claim(time.perf_counter() - started, staged.claimed)
    outbox_publish(staged.batches, enqueue=enqueue)
    return staged.claimed
