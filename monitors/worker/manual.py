"""Run a healthcheck now, outside its schedule ("run now" in the API), and return its results.

Every region runs at once, each run bounded by the check's timeout. With a broker each region's
run goes to that region's queue, so it really checks from there, and the request waits for
the results up to the timeout and a slack (``RUN_NOW_SLACK``). Without one, every region's run
goes on one event loop in this process, as the regions of a batch do.

Rechecks are those of a scheduled run. With a broker the region's worker enqueues them as it
does for any batch. Without one they go to the outbox (monitors.worker.outbox), due after
their delay, and the embedded worker's tick hands them to its regions: the web request never
waits for them, and the hand-over works across processes (`make run` serves the web and the
embedded worker as two). While no embedded worker runs, nothing runs them, and the outbox drops
them after ``MAX_UNSENT_AGE``.

A manual run never displaces a run a region still owes. Recording applies a region's runs in
(slot, attempt) order and ignores one older than the newest it applied, so a manual run
recorded for a new slot (now) would make a pending recheck of an earlier slot, or a scheduled
run still in flight, count for nothing. So each region runs what it owes (:func:`owed_run`):
the scheduled slot it has not recorded yet, or its pending recheck now (the slot's next
attempt); only a region that owes nothing runs a slot of its own (now). The queued run that
arrives later is the same (slot, attempt), so it records nothing twice and the episode goes
on once: rechecked, then down or up, as if the recheck had come early.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Q
from django.utils import timezone

from monitors import services
from monitors.models import Healthcheck, ProbeResult, RegionState
from monitors.rules import RecheckPolicy, region_verdict
from monitors.secrets import with_secret_headers
from monitors.slots import slot_after
from monitors.worker.execution import BatchItem, Enqueue, probe_env
from monitors.worker.outbox import outbox_add
from probes.checks import CheckConfig, CheckKind, check_kind
from probes.config import ConfigError
from probes.runner import crashed_outcome, run_batch, run_check_sync
from probes.types import ProbeOutcome, Status

# How long the request waits beyond the check's timeout for a broker's workers to take the
# batch and record it.
RUN_NOW_SLACK = 15.0
# How long beyond its due time a scheduled run or a recheck counts as on its way: the tick,
# the queue and the recording after the run's own timeout. An older one was lost (a worker
# restart drops queued rechecks) and is not waited on.
OWED_SLACK = timedelta(seconds=30)


class RunRefused(Exception):
    """Refuse to run a check now, for a reason its owner must fix first; the message says which."""


@dataclass(frozen=True, slots=True)
class RegionProgress:
    """What a region has applied of a check: its status, its newest run and what that run found."""

    status: Status
    last_slot: datetime | None = None
    last_attempt: int = 0
    last_outcome: Status | None = None
    last_result_at: datetime | None = None


def owed_run(
    progress: RegionProgress | None,
    *,
    scheduled: datetime | None,
    now: datetime,
    policy: RecheckPolicy,
    timeout: float,
) -> tuple[datetime, int]:
    """Return the (slot, attempt) a manual run in one region runs: what the region owes, else (now, 0).

    1. ``scheduled``, the check's latest claimed slot (or the one the next tick claims), when
       the region has not recorded it and it is at most timeout + OWED_SLACK old: its scheduled
       run is on its way.
    2. The next attempt of the region's newest run when that run failed and the rules asked for
       a recheck (:func:`monitors.rules.region_verdict`), at most delay + timeout + OWED_SLACK
       ago: the recheck is on its way.
    3. Otherwise a slot of the manual run's own: (now, 0).
    """
    last_slot = progress.last_slot if progress is not None else None
    in_flight = timedelta(seconds=timeout) + OWED_SLACK
    if (
        scheduled is not None
        and now - in_flight <= scheduled <= now
        and (last_slot is None or scheduled > last_slot)
    ):
        return scheduled, 0
    if (
        progress is not None
        and last_slot is not None
        and progress.last_outcome == Status.DOWN
        and progress.last_result_at is not None
        and progress.last_result_at >= now - in_flight - timedelta(seconds=policy.delay_seconds)
        and region_verdict(
            previous=progress.status,
            outcome=Status.DOWN,
            attempt=progress.last_attempt,
            policy=policy,
        ).recheck
    ):
        return last_slot, progress.last_attempt + 1
    return now, 0


def run_now(
    *, healthcheck: Healthcheck, enqueue: Enqueue | None, now: datetime | None = None
) -> list[ProbeResult]:
    """Run a check in every one of its enabled regions at once, record the results and return them.

    Raises RunRefused when the check is paused, has no enabled region or its stored config no
    longer parses, and monitors.secrets.SecretUnreadable when its header values can't be
    decrypted: nothing runs then.
    """
    if healthcheck.paused:
        raise RunRefused("This healthcheck is paused, so it was not run; resume it first.")
    config = _runnable_config(healthcheck)
    now = now or timezone.now()
    plan = _plan(healthcheck, config, now)
    if enqueue is not None:
        for region, slot, attempt in plan:
            enqueue(region, [[healthcheck.id, slot.isoformat(), attempt]], 0)
        return _wait_for_results(healthcheck, plan, config.timeout + RUN_NOW_SLACK)
    _run_here(healthcheck, config, plan)
    return _results_of(healthcheck, plan)


def run_once(*, check_type: CheckKind[Any], config: Mapping[str, Any]) -> tuple[ProbeOutcome, datetime]:
    """Run a check once from this machine, configured as a save would store it; record nothing.

    Returns the outcome and when it ended. Raises monitors.errors.ConfigInvalid as a create would.
    """
    runnable = services.healthcheck_trial_config(check_type=check_type, config=config)
    try:
        outcome = run_check_sync(runnable, probe_env())
    except Exception as exc:  # a bug of ours: logged without secrets, answered as the check's failure
        outcome = crashed_outcome(runnable, exc)
    return outcome, timezone.now()


def _runnable_config(healthcheck: Healthcheck) -> CheckConfig:
    try:
        kind = check_kind(healthcheck.type)
    except ValueError as exc:
        raise RunRefused(f"This healthcheck can't run: {exc}") from None
    try:
        config: CheckConfig = kind.parse(with_secret_headers(healthcheck.config, healthcheck.secret_headers))
    except ConfigError as exc:
        # Saved before a rule tightened: the messages name fields, never a header value.
        raise RunRefused(
            f"This healthcheck's stored config no longer passes validation ({exc}); "
            "save the check again with a valid config to run it."
        ) from None
    return config


def _plan(healthcheck: Healthcheck, config: CheckConfig, now: datetime) -> list[tuple[str, datetime, int]]:
    """Return what each enabled region runs: (region, slot, attempt), by region."""
    regions = sorted(healthcheck.regions.values_list("slug", "enabled"))
    enabled = [slug for slug, on in regions if on]
    if not enabled:
        names = ", ".join(slug for slug, _ in regions)
        raise RunRefused(
            f"This healthcheck has no enabled region to run from (its regions: {names}, all disabled)."
            if names
            else "This healthcheck has no region to run from; give it at least one."
        )
    progress = _progress_of(healthcheck)
    policy = RecheckPolicy(
        count=healthcheck.recheck_count, delay_seconds=float(healthcheck.recheck_delay_seconds)
    )
    scheduled = _latest_scheduled_slot(healthcheck, now)
    return [
        (
            region,
            *owed_run(
                progress.get(region), scheduled=scheduled, now=now, policy=policy, timeout=config.timeout
            ),
        )
        for region in enabled
    ]


def _latest_scheduled_slot(healthcheck: Healthcheck, now: datetime) -> datetime | None:
    """Return the slot the schedule claimed last, or is about to claim, once the check exists."""
    if healthcheck.next_check_at is None:
        return None
    interval = timedelta(seconds=healthcheck.interval_seconds)
    if healthcheck.next_check_at <= now:
        # Due and not claimed yet: the next tick claims the latest slot that has passed.
        slot = slot_after(now, interval_seconds=healthcheck.interval_seconds, offset=healthcheck.slot_offset)
        slot -= interval
    else:
        slot = healthcheck.next_check_at - interval
    return slot if slot >= healthcheck.created_at else None


def _progress_of(healthcheck: Healthcheck) -> dict[str, RegionProgress]:
    states = list(
        RegionState.objects.filter(healthcheck=healthcheck).values_list(
            "region__slug", "region_id", "status", "last_slot", "last_attempt", "last_result_at"
        )
    )
    runs = [
        Q(region_id=region_id, slot=slot, attempt=attempt)
        for _, region_id, _, slot, attempt, _ in states
        if slot is not None
    ]
    outcomes: dict[int, str] = {}
    if runs:
        outcomes = dict(
            ProbeResult.objects.filter(reduce(or_, runs), healthcheck=healthcheck).values_list(
                "region_id", "status"
            )
        )
    return {
        slug: RegionProgress(
            status=Status(status),
            last_slot=slot,
            last_attempt=attempt,
            last_outcome=Status(outcomes[region_id]) if region_id in outcomes else None,
            last_result_at=result_at,
        )
        for slug, region_id, status, slot, attempt, result_at in states
    }


async def _run_regions(
    config: CheckConfig, plan: Sequence[tuple[str, datetime, int]]
) -> list[tuple[tuple[str, datetime, int], ProbeOutcome]]:
    """Run each region's run at once, each as from its region (its User-Agent names it)."""
    batches = await asyncio.gather(*(run_batch([(run, config)], probe_env(run[0])) for run in plan))
    return [pair for batch in batches for pair in batch]


def _run_here(
    healthcheck: Healthcheck, config: CheckConfig, plan: Sequence[tuple[str, datetime, int]]
) -> None:
    """Run every region's run on one event loop, record each region's, and stage their rechecks."""
    outcomes = asyncio.run(_run_regions(config, plan))
    checked_at = timezone.now()
    rechecks: dict[tuple[str, float], list[BatchItem]] = defaultdict(list)
    for (region, slot, attempt), outcome in outcomes:
        result = services.RunResult(
            healthcheck_id=healthcheck.id, slot=slot, attempt=attempt, outcome=outcome, checked_at=checked_at
        )
        for recheck in services.outcomes_record(region_slug=region, results=[result]):
            rechecks[(region, recheck.delay_seconds)].append(
                [recheck.healthcheck_id, recheck.slot.isoformat(), recheck.attempt]
            )
    for (region, delay), items in rechecks.items():
        outbox_add([(region, items)], now=checked_at, publish_after=checked_at + timedelta(seconds=delay))


def _results_of(healthcheck: Healthcheck, plan: Sequence[tuple[str, datetime, int]]) -> list[ProbeResult]:
    runs = [Q(region__slug=region, slot=slot, attempt=attempt) for region, slot, attempt in plan]
    return list(
        ProbeResult.objects.filter(reduce(or_, runs), healthcheck=healthcheck)
        .select_related("region")
        .order_by("region__slug")
    )


def _wait_for_results(
    healthcheck: Healthcheck, plan: Sequence[tuple[str, datetime, int]], seconds: float
) -> list[ProbeResult]:
    deadline = time.monotonic() + seconds
    while True:
        results = _results_of(healthcheck, plan)
        if len(results) >= len(plan) or time.monotonic() >= deadline:
            return results
        time.sleep(0.25)
