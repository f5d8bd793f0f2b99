"""Claim what is due and hand one batch per region to whatever runs batches (broker or embedded).

Messages carry ids and ISO timestamps only: ``[healthcheck_id, slot_iso, attempt]``
(:data:`monitors.worker.execution.BatchItem`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.utils import timezone

from monitors.worker.execution import BatchItem, Enqueue
from monitors.worker.scheduling import Claim, claim_due

BATCH_SIZE = 250


def batches_for(claims: Iterable[Claim]) -> list[tuple[str, list[BatchItem]]]:
    """Group claimed runs into per-region batches of at most BATCH_SIZE items."""
    by_region: dict[str, list[BatchItem]] = defaultdict(list)
    for claim in claims:
        for region in claim.regions:
            by_region[region].append([claim.healthcheck_id, claim.slot.isoformat(), 0])
    return [
        (region, items[start : start + BATCH_SIZE])
        for region, items in sorted(by_region.items())
        for start in range(0, len(items), BATCH_SIZE)
    ]


def dispatch_due(*, enqueue: Enqueue) -> int:
    """Claim what is due now and enqueue one batch per region; return how many checks were claimed."""
    claims = claim_due(now=timezone.now())
    for region, items in batches_for(claims):
        enqueue(region, items, 0)
    return len(claims)
