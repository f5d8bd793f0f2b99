"""Run a healthcheck now, outside its schedule ("run now" in the API), and return its results."""

from __future__ import annotations

import time
from datetime import datetime

from django.utils import timezone

from monitors import selectors
from monitors.models import Healthcheck, ProbeResult
from monitors.worker.execution import BatchItem, Enqueue, execute_batch


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
