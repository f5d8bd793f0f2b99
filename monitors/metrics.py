"""Count what the worker does, for Prometheus; the worker calls one ``observe_*`` function per step.

Every metric is named ``uptimy_…``. Two kinds live here:

- **Counted where the work happens** (checks run, claims, recordings, the embedded worker's
  pending batches): the worker calls :func:`observe_claim`, :func:`observe_checks`,
  :func:`observe_recording` and :func:`observe_embedded_queue`. With
  ``PROMETHEUS_MULTIPROC_DIR`` set before ``prometheus_client`` is imported (``manage.py serve``
  sets it for every part it starts) each process writes its values to files there, and a scrape
  in any web process sums them (prometheus_client's multiprocess mode); without it they stay in
  this process's :data:`REGISTRY`.
- **Read at scrape time** (:class:`ScrapeTimeGauges`): checks due but unclaimed, and each
  region's broker queue length. The scraping process computes them itself, once per scrape, so
  they need no file and no other process.

The ``/metrics`` view that puts both together is ``uptimy/metrics.py``: it is the top floor's,
so that apps above this one can add theirs beside these.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter as Tally
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import ParamSpec, Protocol

import redis
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from monitors import selectors
from monitors.models import region_queue
from probes.checks import CheckConfig, UnknownCheckKind, kind_of_config
from probes.types import ProbeOutcome

logger = logging.getLogger(__name__)
P = ParamSpec("P")

# This process's own values when there is no multiprocess directory; never the library's
# global registry, which also holds its process and platform collectors.
REGISTRY = CollectorRegistry()

# Slot → recorded: a healthy check waits for the next tick (2 s) and its own run; the issue's
# targets are a p99 under 5 s, and a hanging check within its timeout (≤ 60 s) plus 2 s.
LAG_BUCKETS = (0.5, 1, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 300)
# One claim transaction, or one recording transaction of a group of results.
STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

CHECKS = Counter(
    "uptimy_checks",
    "Checks run, by region, check type and result kind (ok for a check that was up or degraded).",
    ["region", "type", "kind"],
    registry=REGISTRY,
)
CLAIMED = Counter("uptimy_checks_claimed", "Checks claimed by the scheduler's tick.", registry=REGISTRY)
CLAIM_SECONDS = Histogram(
    "uptimy_claim_duration_seconds",
    "How long one claim of the due checks took (one transaction).",
    buckets=STEP_BUCKETS,
    registry=REGISTRY,
)
RECORDED = Counter(
    "uptimy_results_recorded",
    "Results handed to recording, by region (a redelivered batch counts again, though it inserts nothing).",
    ["region"],
    registry=REGISTRY,
)
RECORDING_SECONDS = Histogram(
    "uptimy_recording_duration_seconds",
    "How long recording one group of results took, by region.",
    ["region"],
    buckets=STEP_BUCKETS,
    registry=REGISTRY,
)
LAG_SECONDS = Histogram(
    "uptimy_result_lag_seconds",
    "Seconds from a result's slot to when it was recorded, by region (first attempts; rechecks wait on purpose).",
    ["region"],
    buckets=LAG_BUCKETS,
    registry=REGISTRY,
)
# livesum: one embedded worker writes it; a process that is gone (gunicorn's child_exit, see
# uptimy/gunicorn_conf.py) stops counting instead of leaving its last value behind.
EMBEDDED_QUEUE = Gauge(
    "uptimy_embedded_queue_depth",
    "Batches the embedded worker holds and has not started, by region (rechecks waiting for their delay included).",
    ["region"],
    multiprocess_mode="livesum",
    registry=REGISTRY,
)
_embedded_regions: set[str] = set()

OK_KIND = "ok"
UNKNOWN_TYPE = "unknown"  # a config no registered type makes (a type unregistered since)


class SlotRun(Protocol):
    """Name what the lag needs of a recorded result: the slot it ran for, and which attempt it was."""

    @property
    def slot(self) -> datetime: ...

    @property
    def attempt(self) -> int: ...


def never_fails(observe: Callable[P, None]) -> Callable[P, None]:
    """Log, never raise, a failure of ``observe``: counting a step must not cost its results."""

    @functools.wraps(observe)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            observe(*args, **kwargs)
        except Exception:
            logger.exception("metrics: %s failed; the step it counts goes on", observe.__name__)

    return guarded


@never_fails
def observe_claim(seconds: float, claimed: int) -> None:
    """Count one claim of the due checks: how long it took and how many checks it claimed."""
    CLAIM_SECONDS.observe(seconds)
    CLAIMED.inc(claimed)


@never_fails
def observe_checks(region: str, runs: Iterable[tuple[CheckConfig, ProbeOutcome]]) -> None:
    """Count checks run in ``region``, each as its config and outcome, by check type and result kind."""
    # One increment per label set, not per check: a batch holds hundreds of checks and few kinds.
    tally = Tally((_type_name(config), outcome.kind or OK_KIND) for config, outcome in runs)
    for (check_type, kind), count in tally.items():
        CHECKS.labels(region=region, type=check_type, kind=str(kind)).inc(count)


def _type_name(config: CheckConfig) -> str:
    try:
        return kind_of_config(config).name
    except UnknownCheckKind:
        return UNKNOWN_TYPE


@never_fails
def observe_recording(region: str, results: Iterable[SlotRun], seconds: float, recorded_at: datetime) -> None:
    """Count one recorded group of ``region``'s results: how long recording took and each slot's lag.

    The lag is the first attempts': a recheck runs its delay after the slot on purpose, and
    would hide a late pipeline behind the rechecks' own schedule.
    """
    lag = LAG_SECONDS.labels(region=region)
    count = 0
    for result in results:
        if result.attempt == 0:
            lag.observe(max(0.0, (recorded_at - result.slot).total_seconds()))
        count += 1
    RECORDED.labels(region=region).inc(count)
    RECORDING_SECONDS.labels(region=region).observe(seconds)


@never_fails
def observe_embedded_queue(pending: Mapping[str, int]) -> None:
    """Set the embedded worker's pending batches per region; a region it no longer holds goes to 0."""
    for region in _embedded_regions - set(pending):
        EMBEDDED_QUEUE.labels(region=region).set(0)
    for region, batches in pending.items():
        EMBEDDED_QUEUE.labels(region=region).set(batches)
    _embedded_regions.update(pending)


class ScrapeTimeGauges:
    """Compute, when scraped, the gauges no worker counts: due checks nobody claimed, queue lengths.

    Each part fails alone: a database or broker that does not answer leaves its gauge out of this
    scrape (and logs why) instead of failing the whole answer, so the counters still arrive.
    """

    def collect(self) -> Iterator[Metric]:
        yield from self._due_unclaimed()
        if settings.REDIS_URL:
            yield from self._queue_depths(settings.REDIS_URL)

    def _due_unclaimed(self) -> Iterator[Metric]:
        # A tick claims everything due, so a check still due a whole tick later was missed: the
        # scheduler is down, late, or slower than the schedule.
        overdue_since = timezone.now() - timedelta(seconds=settings.UPTIMY_TICK_SECONDS)
        try:
            count = selectors.healthchecks_overdue_count(before=overdue_since)
        except DatabaseError as exc:
            logger.warning(
                "metrics: due checks not counted, the database did not answer (%s)", type(exc).__name__
            )
            return
        yield GaugeMetricFamily(
            "uptimy_checks_due_unclaimed",
            "Unpaused healthchecks whose next check is more than a tick in the past (not claimed yet).",
            value=count,
        )

    def _queue_depths(self, url: str) -> Iterator[Metric]:
        try:
            slugs = sorted(selectors.regions_enabled().values_list("slug", flat=True))
            client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
            try:
                pipe = client.pipeline(transaction=False)
                for slug in slugs:
                    pipe.llen(region_queue(slug))
                lengths = pipe.execute()
            finally:
                client.close()
        except (DatabaseError, redis.RedisError) as exc:
            # The URL may carry a password: log the error type only.
            logger.warning("metrics: queue depths not read (%s)", type(exc).__name__)
            return
        family = GaugeMetricFamily(
            "uptimy_queue_depth",
            "Batches waiting in each enabled region's broker queue (Redis LLEN of probes.<region>).",
            labels=["region"],
        )
        for slug, length in zip(slugs, lengths, strict=True):
            family.add_metric([slug], int(length))
        yield family
