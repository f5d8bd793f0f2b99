"""Run a region's batch of checks and record it: the body of the probe worker, whatever runs it.

The Celery task (monitors.worker.tasks.run_region_batch) and the embedded worker of `manage.py serve` both
call :func:`execute_batch`; they differ only in how they enqueue the rechecks it returns.
Messages carry ids and ISO timestamps only: ``[healthcheck_id, slot_iso, attempt]``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from monitors import selectors, services
from monitors.models import Healthcheck, ProbeResult
from monitors.worker.scheduling import Claim, claim_due
from probes.runner import ProbeEnv, run_batch

logger = logging.getLogger(__name__)

BATCH_SIZE = 250
# [healthcheck_id: int, slot: ISO str, attempt: int]: a list, not a tuple, because that is what a
# Celery worker gets back from the JSON message, and the embedded worker passes the same values.
BatchItem = list[int | str]
Enqueue = Callable[[str, list[BatchItem], float], None]  # (region, items, delay seconds)


def probe_env() -> ProbeEnv:
    """Return what every check of this process shares, from the settings: the guard, the DNS servers."""
    return ProbeEnv(
        allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS, nameservers=tuple(settings.UPTIMY_DNS_SERVERS)
    )


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


def execute_batch(region: str, items: Sequence[BatchItem], *, enqueue: Enqueue) -> int:
    """Run the batch's checks concurrently, record every outcome, and enqueue the rechecks."""
    keyed = [(int(hc_id), datetime.fromisoformat(str(slot)), int(attempt)) for hc_id, slot, attempt in items]
    configs = selectors.check_configs(healthcheck_ids=[hc_id for hc_id, _, _ in keyed])
    work = [((hc_id, slot, attempt), configs[hc_id]) for hc_id, slot, attempt in keyed if hc_id in configs]
    outcomes = asyncio.run(run_batch(work, probe_env()))
    checked_at = timezone.now()
    results = [
        services.RunResult(
            healthcheck_id=hc_id, slot=slot, attempt=attempt, outcome=outcome, checked_at=checked_at
        )
        for (hc_id, slot, attempt), outcome in outcomes
    ]
    rechecks = services.outcomes_record(region_slug=region, results=results)
    by_delay: dict[float, list[BatchItem]] = defaultdict(list)
    for recheck in rechecks:
        by_delay[recheck.delay_seconds].append(
            [recheck.healthcheck_id, recheck.slot.isoformat(), recheck.attempt]
        )
    for delay, recheck_items in by_delay.items():
        enqueue(region, recheck_items, delay)
    return len(results)


def run_now(*, healthcheck: Healthcheck, enqueue: Enqueue | None) -> list[ProbeResult]:
    """Run a check in every one of its regions now, record the results and return them.

    With ``enqueue`` (a broker) the runs go to each region's queue, so each region really
    checks from there, and this waits for their results; without it they run here. Manual
    runs are recorded like scheduled ones, for a slot of their own (now).
    """
    slot = timezone.now()
    regions = sorted(region.slug for region in healthcheck.regions.filter(enabled=True))
    items: list[BatchItem] = [[healthcheck.id, slot.isoformat(), 0]]
    if enqueue is not None:
        for region in regions:
            enqueue(region, items, 0)
        return _wait_for_results(
            healthcheck, slot, len(regions), healthcheck_timeout(healthcheck) + RUN_NOW_SLACK
        )
    for region in regions:
        # No worker to hand rechecks to in this process: a manual run reports what it saw.
        execute_batch(region, items, enqueue=lambda *args: None)
    return list(
        selectors.results_of(healthcheck=healthcheck, region=None, start=slot, end=None).filter(slot=slot)
    )


RUN_NOW_SLACK = 15.0


def healthcheck_timeout(healthcheck: Healthcheck) -> float:
    return float(healthcheck.config.get("timeout", 10))


def _wait_for_results(
    healthcheck: Healthcheck, slot: datetime, expected: int, seconds: float
) -> list[ProbeResult]:
    deadline = time.monotonic() + seconds
    while True:
        results = list(
            selectors.results_of(healthcheck=healthcheck, region=None, start=slot, end=None).filter(slot=slot)
        )
        if len(results) >= expected or time.monotonic() >= deadline:
            return results
        time.sleep(0.25)
