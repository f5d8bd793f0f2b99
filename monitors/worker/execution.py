"""Run a region's batch of checks and record it: the body of the probe worker, whatever runs it.

The Celery task (monitors.worker.tasks.run_region_batch) and the embedded worker of `manage.py serve` both
call :func:`execute_batch`; they differ only in how they enqueue the rechecks it returns.
Messages carry ids and ISO timestamps only: ``[healthcheck_id, slot_iso, attempt]``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from monitors import selectors, services
from probes.runner import ProbeEnv, run_batch

logger = logging.getLogger(__name__)

# [healthcheck_id: int, slot: ISO str, attempt: int]: a list, not a tuple, because that is what a
# Celery worker gets back from the JSON message, and the embedded worker passes the same values.
BatchItem = list[int | str]
Enqueue = Callable[[str, list[BatchItem], float], None]  # (region, items, delay seconds)


def probe_env() -> ProbeEnv:
    """Return what every check of this process shares, from the settings: the guard, the DNS servers."""
    return ProbeEnv(
        allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS, nameservers=tuple(settings.UPTIMY_DNS_SERVERS)
    )


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
