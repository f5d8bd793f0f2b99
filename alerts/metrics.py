"""Count alert deliveries for Prometheus; ``/metrics`` (uptimy/metrics.py) serves them beside monitors'.

Counted where the sending happens (alerts.services.sending calls :func:`observe_attempts`, in
multiprocess mode through PROMETHEUS_MULTIPROC_DIR like monitors' counters), and one gauge read
at scrape time (:class:`ScrapeTimeGauges`): deliveries due and not sent yet.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from datetime import datetime

from django.db import DatabaseError
from django.utils import timezone
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from alerts import selectors
from monitors.metrics import never_fails

logger = logging.getLogger(__name__)

REGISTRY = CollectorRegistry()

# Event → the receiver has it: a tick for the consumer, a tick for the sender, the send itself;
# the target is a p99 under 5 s, and a retried delivery lands minutes to days later.
ALERT_LAG_BUCKETS = (0.5, 1, 2, 3, 4, 5, 7.5, 10, 15, 30, 60, 300, 900, 3600, 86400)

ATTEMPTS = Counter(
    "uptimy_alert_deliveries",
    "Delivery attempts, by channel kind and result (delivered, retry, given_up).",
    ["kind", "result"],
    registry=REGISTRY,
)
ALERT_LAG = Histogram(
    "uptimy_alert_lag_seconds",
    "Seconds from an alert's event (the status change) to its delivery, by channel kind.",
    ["kind"],
    buckets=ALERT_LAG_BUCKETS,
    registry=REGISTRY,
)


@never_fails
def observe_attempts(attempts: Iterable[tuple[str, str, datetime | None, datetime]]) -> None:
    """Count a round's attempts: (channel kind, result, the event's time or None, when it was recorded)."""
    for kind, result, occurred_at, at in attempts:
        ATTEMPTS.labels(kind=kind, result=result).inc()
        if result == "delivered" and occurred_at is not None:
            ALERT_LAG.labels(kind=kind).observe(max(0.0, (at - occurred_at).total_seconds()))


class ScrapeTimeGauges:
    """Compute, when scraped, the deliveries that are due and not sent yet (a sender down or behind)."""

    def collect(self) -> Iterator[Metric]:
        try:
            waiting = selectors.deliveries_due_count(now=timezone.now())
        except DatabaseError as exc:
            logger.warning(
                "metrics: waiting deliveries not counted, the database did not answer (%s)",
                type(exc).__name__,
            )
            return
        yield GaugeMetricFamily(
            "uptimy_alert_deliveries_waiting",
            "Deliveries due now and not sent yet (new ones, and retries whose delay is up).",
            value=waiting,
        )
