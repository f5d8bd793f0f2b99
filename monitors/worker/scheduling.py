"""Claim the healthchecks that are due and move their schedule forward, in one short transaction.

The healthcheck table is the schedule. Each healthcheck runs at its slots: ``slot_offset + k *
interval`` seconds after the epoch, with ``slot_offset`` derived from its public id, so checks
created together spread over their interval instead of firing in the same second. Claiming
sets ``next_check_at`` to the first slot after now: a missed slot (a stopped scheduler, a long
pause) is dropped, never replayed in a burst.

On PostgreSQL the claim is one ``UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)``, so
two dispatchers racing never claim the same slot and never wait on each other. SQLite has one
writer at a time (IMMEDIATE transactions), which serializes dispatchers by itself.

The dispatcher claims through :func:`claim_and_stage`: the same transaction writes the claimed
runs, grouped into per-region batches, to the outbox (monitors.worker.outbox), so a slot whose
schedule moved is always published, even when the dispatcher dies right after the commit.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction

from monitors.models import Healthcheck
from monitors.slots import slot_after
from monitors.worker.execution import BatchItem
from monitors.worker.outbox import REPUBLISH_GRACE, Outbound, outbox_add

CLAIM_LIMIT = 50_000
BATCH_SIZE = 250


@dataclass(frozen=True, slots=True)
class Claim:
    """One due run: which healthcheck, for which slot, from which regions."""

    healthcheck_id: int
    slot: datetime
    regions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Staged:
    """How many checks one claim took, and the outbox rows it wrote for the dispatcher to publish."""

    claimed: int
    batches: list[Outbound]


def claim_and_stage(*, now: datetime, limit: int = CLAIM_LIMIT, grace: timedelta = REPUBLISH_GRACE) -> Staged:
    """Claim what is due at ``now`` and write its per-region batches to the outbox, in one transaction.

    The rows wait ``grace`` before a later tick may publish them: the caller publishes them
    itself right after this returns. On PostgreSQL the claim, the grouping into batches and the
    outbox rows are one statement (:data:`_CLAIM_AND_STAGE`), which holds the claimed rows' locks
    for less time than the claim alone did when the regions went to Python and back
    (tests/bench/pipeline.py claim); elsewhere :func:`batches_for` groups the same batches.
    """
    if connection.vendor == "postgresql":
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                _CLAIM_AND_STAGE, {"now": now, "lease": now + grace, "limit": limit, "size": BATCH_SIZE}
            )
            rows = cursor.fetchall()
        # Decoded after the commit: the locks are gone by then.
        batches = [Outbound(row_id, region, json.loads(items)) for _, row_id, region, items in rows]
        return Staged(claimed=rows[0][0] if rows else 0, batches=batches)
    with transaction.atomic():
        claims = _claim(now, limit)
        batches = outbox_add(batches_for(claims), now=now, publish_after=now + grace)
    return Staged(claimed=len(claims), batches=batches)


def claim_due(*, now: datetime, limit: int = CLAIM_LIMIT) -> list[Claim]:
    """Claim every unpaused healthcheck due at ``now``; each gets the latest slot that passed.

    This writes no outbox row: what it returns is published by no one unless the caller does
    it. The dispatcher claims through :func:`claim_and_stage`.
    """
    with transaction.atomic():
        return _claim(now, limit)


def batches_for(claims: Iterable[Claim]) -> list[tuple[str, list[BatchItem]]]:
    """Group claimed runs into per-region batches of at most BATCH_SIZE items, by slot and id."""
    by_region: dict[str, list[BatchItem]] = defaultdict(list)
    for claim in sorted(claims, key=lambda claim: (claim.slot, claim.healthcheck_id)):
        for region in claim.regions:
            by_region[region].append([claim.healthcheck_id, claim.slot.isoformat(), 0])
    return [
        (region, items[start : start + BATCH_SIZE])
        for region, items in sorted(by_region.items())
        for start in range(0, len(items), BATCH_SIZE)
    ]


def _claim(now: datetime, limit: int) -> list[Claim]:
    # Runs in the caller's transaction: the rows stay locked until it commits.
    claim = _claim_postgresql if connection.vendor == "postgresql" else _claim_portable
    rows = claim(now, limit)
    regions = _regions_of([row[0] for row in rows])
    return [
        Claim(healthcheck_id=hc_id, slot=slot, regions=regions.get(hc_id, ()))
        for hc_id, slot in rows
        if regions.get(hc_id)
    ]


# next_check_at becomes the first slot after now; the slot being run is the one before it,
# which is the latest slot at or before now (missed older slots are dropped). Slots are whole
# seconds: an integer offset plus a whole number of integer intervals.
_CLAIM = """
    UPDATE monitors_healthcheck AS h
    SET next_check_at = to_timestamp(
        (floor((extract(epoch FROM %(now)s::timestamptz) - h.slot_offset) / h.interval_seconds) + 1)
        * h.interval_seconds + h.slot_offset)
    WHERE h.id IN (
        SELECT id FROM monitors_healthcheck
        WHERE paused = false AND next_check_at <= %(now)s
        ORDER BY next_check_at
        LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED
    )
    RETURNING h.id, h.next_check_at - make_interval(secs => h.interval_seconds) AS slot
"""

# The claim, its runs in the enabled regions, numbered per region by (slot, id) and cut into
# batches of %(size)s, and one outbox row per batch, as batches_for and outbox_add would write
# them (the slot as Python's isoformat() of a whole-second UTC time); returns the number of
# checks claimed with a region, and each row.
_CLAIM_AND_STAGE = f"""
    WITH claimed AS ({_CLAIM}),
    runs AS (
        SELECT c.id, c.slot, r.slug,
               (row_number() OVER (PARTITION BY r.slug ORDER BY c.slot, c.id) - 1) / %(size)s AS part
        FROM claimed c
        JOIN monitors_healthcheck_regions t ON t.healthcheck_id = c.id
        JOIN monitors_region r ON r.id = t.region_id AND r.enabled
    ),
    staged AS (
        INSERT INTO monitors_outboxbatch (region, items, created_at, publish_after, republished)
        SELECT slug,
               json_agg(
                   json_build_array(
                       id, to_char(slot AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'), 0
                   ) ORDER BY slot, id
               )::jsonb,
               %(now)s, %(lease)s, 0
        FROM runs
        GROUP BY slug, part
        RETURNING id, region, items::text
    )
    SELECT (SELECT count(DISTINCT id) FROM runs), id, region, items FROM staged ORDER BY region, id
"""  # noqa: S608 (constants only: the claim above)


def _claim_postgresql(now: datetime, limit: int) -> list[tuple[int, datetime]]:
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM, {"now": now, "limit": limit})
        return [(row[0], row[1]) for row in cursor.fetchall()]


def _claim_portable(now: datetime, limit: int) -> list[tuple[int, datetime]]:
    due = list(
        Healthcheck.objects.filter(paused=False, next_check_at__lte=now)
        .order_by("next_check_at")
        .values_list("id", "interval_seconds", "slot_offset")[:limit]
    )
    updates = []
    claimed = []
    for hc_id, interval, offset in due:
        following = slot_after(now, interval_seconds=interval, offset=offset)
        updates.append(Healthcheck(id=hc_id, next_check_at=following))
        claimed.append((hc_id, following - timedelta(seconds=interval)))
    Healthcheck.objects.bulk_update(updates, ["next_check_at"], batch_size=500)
    return claimed


def _regions_of(healthcheck_ids: list[int]) -> dict[int, tuple[str, ...]]:
    through = Healthcheck.regions.through
    regions: dict[int, list[str]] = defaultdict(list)
    for start in range(0, len(healthcheck_ids), 5000):
        chunk = healthcheck_ids[start : start + 5000]
        rows = through.objects.filter(healthcheck_id__in=chunk, region__enabled=True).values_list(
            "healthcheck_id", "region__slug"
        )
        for hc_id, slug in rows:
            regions[hc_id].append(slug)
    return {hc_id: tuple(sorted(slugs)) for hc_id, slugs in regions.items()}
