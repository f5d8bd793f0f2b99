"""Check the schedule: slot math, spreading, claiming due checks, and racing dispatchers."""

from __future__ import annotations

import random
import threading
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from monitors.models import Healthcheck, OutboxBatch, Region
from monitors.services import healthcheck_create, healthcheck_pause, healthcheck_resume, healthcheck_update
from monitors.slots import first_slot_at_or_after, slot_after, slot_offset_for
from monitors.worker import scheduling
from monitors.worker.scheduling import Claim, batches_for, claim_and_stage, claim_due
from probes.checks.mcp import MCP

NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # a whole minute, hour and day in epoch seconds
HANG_SECONDS = 60.0  # only a hung thread takes this long: an upper bound, never a wait


def at(minutes: int = 0, seconds: float = 0) -> datetime:
    return NOON + timedelta(minutes=minutes, seconds=seconds)


def make_check(
    organization, now, *, offset: int = 7, next_at: datetime | None = None, **kwargs
) -> Healthcheck:
    """Create a 60 s MCP check, then pin its offset and next slot so the tests can reason in seconds."""
    healthcheck = healthcheck_create(
        organization=organization,
        name=kwargs.pop("name", "docs"),
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=now,
        interval_seconds=kwargs.pop("interval_seconds", 60),
        **kwargs,
    )
    if not healthcheck.paused:
        next_at = next_at or first_slot_at_or_after(
            now, interval_seconds=healthcheck.interval_seconds, offset=offset
        )
        Healthcheck.objects.filter(pk=healthcheck.pk).update(slot_offset=offset, next_check_at=next_at)
        healthcheck.refresh_from_db()
    return healthcheck


# --- slot math -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "interval", "offset", "at_or_after", "after"),
    [
        # slots at :07 of every minute
        (at(0, 0), 60, 7, at(0, 7), at(0, 7)),
        (at(0, 7), 60, 7, at(0, 7), at(1, 7)),  # a moment on a slot: itself, and the next one
        (at(0, 7.5), 60, 7, at(1, 7), at(1, 7)),
        (at(0, 6.999), 60, 7, at(0, 7), at(0, 7)),
        (at(0, 7) + timedelta(microseconds=1), 60, 7, at(1, 7), at(1, 7)),
        (at(0, 59), 60, 0, at(1, 0), at(1, 0)),
        (at(0, 0), 60, 0, at(0, 0), at(1, 0)),
        # hourly, offset 15 minutes
        (at(0, 0), 3600, 900, at(15), at(15)),
        (at(16), 3600, 900, at(75), at(75)),
        # daily at 01:00, the moment after it
        (at(0, 0), 86400, 3600, datetime(2026, 11, 30, 1, tzinfo=UTC), datetime(2026, 11, 30, 1, tzinfo=UTC)),
        # 45 s interval: slots are epoch multiples of 45 (+ offset), not minute-aligned
        (at(0, 0), 45, 0, at(0, 0), at(0, 45)),
        (at(0, 1), 45, 0, at(0, 45), at(0, 45)),
        (at(0, 46), 45, 0, at(1, 30), at(1, 30)),
    ],
)
def test_slot_math(moment, interval, offset, at_or_after, after):
    assert first_slot_at_or_after(moment, interval_seconds=interval, offset=offset) == at_or_after
    assert slot_after(moment, interval_seconds=interval, offset=offset) == after


def test_slots_are_utc_datetimes():
    slot = first_slot_at_or_after(at(0, 1), interval_seconds=60, offset=7)

    assert slot.tzinfo is not None
    assert slot.utcoffset() == timedelta(0)


@pytest.mark.parametrize("interval", [30, 60, 300, 3600])
def test_offset_is_stable_and_within_the_interval(interval):
    public_id = uuid.UUID("7f1e4b7a-3c2d-4e5f-8a9b-0c1d2e3f4a5b")

    offset = slot_offset_for(public_id, interval)

    assert 0 <= offset < interval
    assert slot_offset_for(public_id, interval) == offset


def test_offsets_spread_a_thousand_checks_over_the_interval():
    rng = random.Random(4)
    ids = [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(1000)]

    per_second = Counter(slot_offset_for(public_id, 60) for public_id in ids)

    # 1000 over 60 seconds is ~17 a second; uniform enough means every second is used and none is crowded.
    assert len(per_second) == 60
    assert max(per_second.values()) < 40


# --- creating, pausing, resuming ------------------------------------------------------------


def test_a_new_check_is_first_due_within_one_interval(org, now):
    healthcheck = healthcheck_create(
        organization=org, name="a", check_type=MCP, config={"uri": "https://x.example/mcp"}, now=now
    )

    assert now <= healthcheck.next_check_at < now + timedelta(seconds=healthcheck.interval_seconds)
    assert healthcheck.slot_offset == slot_offset_for(healthcheck.public_id, healthcheck.interval_seconds)
    assert healthcheck.next_check_at.timestamp() % healthcheck.interval_seconds == healthcheck.slot_offset


def test_a_paused_new_check_has_no_next_slot(org, now):
    healthcheck = make_check(org, now, paused=True)

    assert healthcheck.next_check_at is None


def test_pause_clears_the_schedule_and_resume_sets_the_next_slot(org, now):
    healthcheck = make_check(org, now)

    paused = healthcheck_pause(healthcheck=healthcheck, now=now)
    assert paused.next_check_at is None
    resumed = healthcheck_resume(healthcheck=paused, now=at(10, 30))

    assert at(10, 30) <= resumed.next_check_at < at(11, 30)
    assert resumed.next_check_at.timestamp() % 60 == resumed.slot_offset


def test_changing_the_interval_moves_the_next_slot_onto_the_new_grid(org, now):
    healthcheck = make_check(org, now)

    updated = healthcheck_update(
        healthcheck=healthcheck, changes={"interval_seconds": 300}, partial=True, now=at(1)
    ).healthcheck

    assert updated.slot_offset == slot_offset_for(updated.public_id, 300)
    assert at(1) <= updated.next_check_at < at(6)
    assert updated.next_check_at.timestamp() % 300 == updated.slot_offset


# --- claim_due ------------------------------------------------------------------------------


def test_claim_returns_the_due_check_with_its_slot_and_regions(org, now):
    healthcheck = make_check(org, now)

    claims = claim_due(now=at(0, 10))

    assert [(c.healthcheck_id, c.slot, c.regions) for c in claims] == [
        (healthcheck.id, at(0, 7), ("ap-southeast", "eu-west", "us-east"))
    ]


def test_claim_moves_next_check_at_to_the_first_slot_after_now(org, now):
    healthcheck = make_check(org, now)

    claim_due(now=at(0, 10))

    healthcheck.refresh_from_db()
    assert healthcheck.next_check_at == at(1, 7)


def test_claim_exactly_on_the_slot_runs_that_slot(org, now):
    healthcheck = make_check(org, now)

    claims = claim_due(now=at(0, 7))

    assert [c.slot for c in claims] == [at(0, 7)]
    healthcheck.refresh_from_db()
    assert healthcheck.next_check_at == at(1, 7)


def test_a_check_not_yet_due_is_not_claimed(org, now):
    healthcheck = make_check(org, now)

    assert claim_due(now=at(0, 6)) == []
    healthcheck.refresh_from_db()
    assert healthcheck.next_check_at == at(0, 7)


def test_a_paused_check_is_not_claimed(org, now):
    make_check(org, now, paused=True)
    # Even with a stale next slot left behind, paused means not scheduled.
    paused_with_slot = make_check(org, now, name="b")
    Healthcheck.objects.filter(pk=paused_with_slot.pk).update(paused=True)

    assert claim_due(now=at(5)) == []


def test_only_due_unpaused_checks_are_claimed(org, now):
    due = make_check(org, now, name="due", offset=7)
    make_check(org, now, name="later", offset=30)
    make_check(org, now, name="paused", paused=True)

    claims = claim_due(now=at(0, 10))

    assert [c.healthcheck_id for c in claims] == [due.id]


def test_a_missed_slot_long_ago_is_dropped_not_replayed(org, now):
    healthcheck = make_check(org, now, next_at=at(-60, 7))  # an hour of missed slots

    claims = claim_due(now=at(0, 10))

    assert [(c.healthcheck_id, c.slot) for c in claims] == [(healthcheck.id, at(0, 7))]
    healthcheck.refresh_from_db()
    assert healthcheck.next_check_at == at(1, 7)
    assert claim_due(now=at(0, 59)) == []


def test_a_duplicated_tick_claims_nothing_twice(org, now):
    make_check(org, now)
    make_check(org, now, name="b", offset=3)

    first = claim_due(now=at(0, 10))
    second = claim_due(now=at(0, 10))

    assert len(first) == 2
    assert second == []


def test_the_next_tick_after_the_next_slot_claims_that_slot(org, now):
    healthcheck = make_check(org, now)
    claim_due(now=at(0, 10))

    claims = claim_due(now=at(1, 8))

    assert [(c.healthcheck_id, c.slot) for c in claims] == [(healthcheck.id, at(1, 7))]


def test_disabled_regions_are_left_out_of_the_claim(org, now):
    make_check(org, now)
    Region.objects.filter(slug="ap-southeast").update(enabled=False)

    (claim,) = claim_due(now=at(0, 10))

    assert claim.regions == ("eu-west", "us-east")


def test_a_check_whose_regions_are_all_disabled_sends_nothing(org, now):
    make_check(org, now)
    Region.objects.update(enabled=False)

    assert claim_due(now=at(0, 10)) == []


def test_only_the_checks_own_regions_are_in_the_claim(org, now):
    make_check(org, now, region_slugs=["us-east"])

    (claim,) = claim_due(now=at(0, 10))

    assert claim.regions == ("us-east",)


def test_the_limit_caps_a_claim_and_the_rest_stay_due(org, now):
    for index in range(3):
        make_check(org, now, name=f"c{index}", offset=index)

    first = claim_due(now=at(0, 10), limit=2)
    rest = claim_due(now=at(0, 10), limit=2)

    assert len(first) == 2
    assert len(rest) == 1
    assert {c.healthcheck_id for c in first}.isdisjoint({c.healthcheck_id for c in rest})


def test_each_check_gets_its_own_slot_by_its_interval_and_offset(org, now):
    minutely = make_check(org, now, name="minutely", offset=7)
    five = make_check(org, now, name="five", interval_seconds=300, offset=20, next_at=at(-5, 20))

    claims = {c.healthcheck_id: c.slot for c in claim_due(now=at(3, 30))}

    assert claims == {minutely.id: at(3, 7), five.id: at(0, 20)}
    five.refresh_from_db()
    assert five.next_check_at == at(5, 20)


# --- PostgreSQL: SKIP LOCKED ------------------------------------------------------------------


# serialized_rollback: the flush after a transactional test would otherwise drop the seeded regions and plans.
pg = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pg
@pytest.mark.services
def test_postgresql_claim_moves_the_schedule_like_the_portable_path(postgres, org, now):
    healthcheck = make_check(org, now, next_at=at(-60, 7))

    claims = claim_due(now=at(0, 10))

    assert [(c.healthcheck_id, c.slot) for c in claims] == [(healthcheck.id, at(0, 7))]
    healthcheck.refresh_from_db()
    assert healthcheck.next_check_at == at(1, 7)


def claimed_runs(*, now: datetime, limit: int = scheduling.CLAIM_LIMIT) -> list[tuple[int, datetime]]:
    """Claim as claim_due does; return the claimed (healthcheck id, slot) pairs."""
    return [(c.healthcheck_id, c.slot) for c in claim_due(now=now, limit=limit)]


def staged_runs(*, now: datetime, limit: int = scheduling.CLAIM_LIMIT) -> list[tuple[int, datetime]]:
    """Claim as the dispatcher does (claim_and_stage); return the staged (healthcheck id, slot) pairs."""
    staged = claim_and_stage(now=now, limit=limit)
    return sorted(
        {(item[0], datetime.fromisoformat(item[1])) for batch in staged.batches for item in batch.items}
    )


both_claims = pytest.mark.parametrize(
    "claim", [claimed_runs, staged_runs], ids=["claim_due", "claim_and_stage"]
)


@pg
@pytest.mark.services
def test_postgresql_claim_and_stage_stages_the_batches_the_portable_path_groups(
    postgres, org, now, monkeypatch
):
    monkeypatch.setattr(scheduling, "BATCH_SIZE", 2)  # the statement cuts batches as batches_for does
    everywhere = [make_check(org, now, name=f"all{index}", offset=index) for index in range(3)]
    us_only = make_check(org, now, name="us", offset=5, region_slugs=["us-east"])
    hourly = make_check(org, now, name="hourly", interval_seconds=3600, offset=300, next_at=at(-55))
    make_check(org, now, name="later", offset=30)
    Region.objects.filter(slug="ap-southeast").update(enabled=False)
    regions = ("eu-west", "us-east")
    expected = [
        *(Claim(hc.id, at(0, index), regions) for index, hc in enumerate(everywhere)),
        Claim(us_only.id, at(0, 5), ("us-east",)),
        Claim(hourly.id, at(-55), regions),
    ]

    staged = claim_and_stage(now=at(0, 10))

    assert staged.claimed == len(expected)
    written = sorted((row.region, row.items) for row in OutboxBatch.objects.all())
    assert written == sorted(batches_for(expected))
    assert sorted((batch.region, batch.items) for batch in staged.batches) == written


@pg
@pytest.mark.services
@both_claims
def test_postgresql_claim_skips_rows_another_transaction_holds_without_waiting(postgres, org, now, claim):
    held = make_check(org, now, name="held")
    free = make_check(org, now, name="free", offset=3)
    locked, release = threading.Event(), threading.Event()
    released: list[bool] = []

    def hold() -> None:
        try:
            with transaction.atomic():
                list(Healthcheck.objects.select_for_update().filter(pk=held.pk))
                locked.set()
                # Hold the row until the claim below has returned, however long that takes;
                # the bound only ends a test that hangs.
                released.append(release.wait(HANG_SECONDS))
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(HANG_SECONDS)
        # "Without waiting", from PostgreSQL itself rather than a stopwatch: a claim that queued
        # on the held row's lock fails at once with "canceling statement due to lock timeout",
        # however busy the machine (a claim that never waits never meets the timeout).
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '1s'")
            claims = claim(now=at(0, 10))
    finally:
        release.set()
        holder.join()

    assert released == [True]  # the row stayed locked until the claim had returned
    assert [hc_id for hc_id, _ in claims] == [free.id]
    assert [hc_id for hc_id, _ in claim(now=at(0, 10))] == [held.id]


@pg
@pytest.mark.services
@both_claims
def test_postgresql_racing_dispatchers_never_claim_the_same_slot(postgres, org, now, claim):
    count = 300
    for index in range(count):
        make_check(org, now, name=f"c{index}", offset=index % 10)
    dispatchers = 4
    barrier = threading.Barrier(dispatchers)
    claimed: list[list[tuple[int, datetime]]] = [[] for _ in range(dispatchers)]
    errors: list[BaseException] = []

    def dispatch(index: int) -> None:
        try:
            barrier.wait()
            # Small claims, many rounds, at two moments within one minute: plenty of overlap.
            for moment in (at(0, 20), at(0, 40)):
                while batch := claim(now=moment, limit=7):
                    claimed[index].extend(batch)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=dispatch, args=(i,)) for i in range(dispatchers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    everything = [claim for claims in claimed for claim in claims]
    assert len(everything) == count
    assert len(set(everything)) == count
    assert sum(1 for claims in claimed if claims) > 1, "one dispatcher took everything: no race happened"
