"""Keep every batch in the database until it is handed over: the dispatcher's outbox.

The claim writes its per-region batches here (:class:`monitors.models.OutboxBatch`) in the
transaction that moves the schedule forward; the dispatcher publishes them right after
commit and deletes what it sent. A dispatcher that dies between commit and publish, or a
broker that refuses a batch, leaves rows behind, and every tick first publishes the rows whose
``publish_after`` has passed: a claimed slot is published at least once.

At least once, not exactly once: a dispatcher that dies after sending but before deleting, or
one stalled past the grace, lets a later tick send the same batch again. That is harmless,
because recording is idempotent: a result is unique per healthcheck, region, slot and attempt
(``ProbeResult`` constraint ``result_once``), and a region state ignores a (slot, attempt) it
has already applied, so a doubled batch runs its checks twice and records them once.

A fresh row waits ``REPUBLISH_GRACE`` before a tick may take it, so a second dispatcher does
not send a batch its own dispatcher is sending. Taking rows works like claiming checks: on
PostgreSQL one ``UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)`` pushes
``publish_after`` a grace ahead, so two dispatchers never take the same row within the grace
and never wait on each other; SQLite serializes writers by itself. A row left unsent for
``MAX_UNSENT_AGE`` is dropped (logged), as the claim drops missed slots: a broker back after a
long outage gets the current slots, not a burst of stale ones.

The outbox also carries delayed batches across processes: a run-now in the web process of
the embedded default writes its rechecks here with ``publish_after`` at their delay, and the
embedded worker's tick hands them to its regions (monitors.worker.manual).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import F

from monitors.models import OutboxBatch
from monitors.worker.execution import BatchItem, Enqueue

logger = logging.getLogger(__name__)

# Longer than a healthy dispatcher takes from commit to the last publish (0.2 s for 120 batches).
REPUBLISH_GRACE = timedelta(seconds=10)
# Counted from the row's creation: a recheck's row is due at most 60 s after it (the longest delay).
MAX_UNSENT_AGE = timedelta(minutes=5)
# Rows one tick takes; more (after a long broker outage) wait for the following ticks.
TAKE_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class Outbound:
    """One outbox row to publish: the region whose queue takes it and the batch's items."""

    id: int
    region: str
    items: list[BatchItem]


def outbox_add(
    batches: Iterable[tuple[str, list[BatchItem]]], *, now: datetime, publish_after: datetime
) -> list[Outbound]:
    """Write ``batches`` to the outbox in the caller's transaction; return them with their ids."""
    rows = OutboxBatch.objects.bulk_create(
        [
            OutboxBatch(region=region, items=items, created_at=now, publish_after=publish_after)
            for region, items in batches
        ],
        batch_size=500,
    )
    return [Outbound(row.pk, row.region, row.items) for row in rows]


def outbox_take_due(
    *, now: datetime, limit: int = TAKE_LIMIT, grace: timedelta = REPUBLISH_GRACE
) -> list[Outbound]:
    """Take the rows whose ``publish_after`` has passed, for a grace; drop those unsent too long."""
    with transaction.atomic():
        _drop_stale(now - MAX_UNSENT_AGE)
        if connection.vendor == "postgresql":
            rows = _take_postgresql(now, limit, grace)
        else:
            rows = _take_portable(now, limit, grace)
    return [Outbound(row_id, region, _json(items)) for row_id, region, items in rows]


def outbox_publish(batches: Sequence[Outbound], *, enqueue: Enqueue) -> int:
    """Hand each batch to its region's queue and delete the rows sent; return how many were sent.

    Stops at the first batch ``enqueue`` refuses (a broker that refuses one refuses the next):
    the error is raised, and that row and the rest stay for a later tick.
    """
    sent: list[int] = []
    try:
        for batch in batches:
            enqueue(batch.region, batch.items, 0)
            sent.append(batch.id)
    finally:
        if sent:
            OutboxBatch.objects.filter(id__in=sent).delete()
    return len(sent)


def _drop_stale(before: datetime) -> None:
    if connection.vendor == "postgresql":
        # Only rows no other tick holds: a held row is being taken right now.
        sql = """
            DELETE FROM monitors_outboxbatch WHERE id IN (
                SELECT id FROM monitors_outboxbatch WHERE created_at < %s FOR UPDATE SKIP LOCKED
            )
        """
        with connection.cursor() as cursor:
            cursor.execute(sql, [before])
            dropped = cursor.rowcount
    else:
        dropped, _ = OutboxBatch.objects.filter(created_at__lt=before).delete()
    if dropped:
        logger.warning(
            "outbox: dropped %d batches left unsent for over %s (was the broker down?); "
            "their slots are missed, as the claim drops missed slots",
            dropped,
            MAX_UNSENT_AGE,
        )


def _take_postgresql(now: datetime, limit: int, grace: timedelta) -> list[tuple[int, str, object]]:
    sql = """
        UPDATE monitors_outboxbatch AS b
        SET publish_after = %(lease)s, republished = b.republished + 1
        WHERE b.id IN (
            SELECT id FROM monitors_outboxbatch
            WHERE publish_after <= %(now)s
            ORDER BY publish_after, id
            LIMIT %(limit)s
            FOR UPDATE SKIP LOCKED
        )
        RETURNING b.id, b.region, b.items
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"now": now, "lease": now + grace, "limit": limit})
        return sorted((row[0], row[1], row[2]) for row in cursor.fetchall())


def _take_portable(now: datetime, limit: int, grace: timedelta) -> list[tuple[int, str, object]]:
    rows = list(
        OutboxBatch.objects.filter(publish_after__lte=now)
        .order_by("publish_after", "id")
        .values_list("id", "region", "items")[:limit]
    )
    OutboxBatch.objects.filter(id__in=[row[0] for row in rows]).update(
        publish_after=now + grace, republished=F("republished") + 1
    )
    return rows


def _json(items: object) -> list[BatchItem]:
    # A raw cursor gets jsonb as text from Django's psycopg setup; the ORM gets it decoded.
    value = json.loads(items) if isinstance(items, str) else items
    assert isinstance(value, list)
    return value
