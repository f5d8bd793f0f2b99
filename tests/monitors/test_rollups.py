"""Check hourly and daily rollups and the pruning of raw results."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitors import latency
from monitors.models import Healthcheck, Plan, ProbeResult, Region, Rollup
from monitors.services import healthcheck_create, results_prune, rollups_refresh
from probes.checks.mcp import MCP

ELEVEN = datetime(2026, 11, 29, 11, 0, tzinfo=UTC)
DAY = datetime(2026, 11, 29, tzinfo=UTC)


def slot(minute: int, *, hour: datetime = ELEVEN) -> datetime:
    return hour + timedelta(minutes=minute, seconds=7)


@pytest.fixture
def check(org, now) -> Healthcheck:
    return healthcheck_create(
        organization=org,
        name="docs",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=now,
    )


def add(
    healthcheck: Healthcheck, at: datetime, *runs: tuple[str, float | None], region: str = "eu-west"
) -> None:
    """Store the runs of one slot: attempt 0, then the rechecks, each (status, total_ms)."""
    place = Region.objects.get(slug=region)
    ProbeResult.objects.bulk_create(
        ProbeResult(
            healthcheck=healthcheck,
            region=place,
            slot=at,
            attempt=attempt,
            checked_at=at + timedelta(seconds=1 + 5 * attempt),
            recorded_at=at + timedelta(seconds=2 + 5 * attempt),
            status=status,
            kind="timeout" if status == "down" else "",
            total_ms=ms,
        )
        for attempt, (status, ms) in enumerate(runs)
    )


def hourly(healthcheck: Healthcheck, *, region: str = "eu-west", start: datetime = ELEVEN) -> Rollup:
    return Rollup.objects.get(
        healthcheck=healthcheck, region__slug=region, period=Rollup.Period.HOUR, start=start
    )


def daily(healthcheck: Healthcheck, *, region: str = "eu-west") -> Rollup:
    return Rollup.objects.get(
        healthcheck=healthcheck, region__slug=region, period=Rollup.Period.DAY, start=DAY
    )


NOON_THIRTY = datetime(2026, 11, 29, 12, 30, tzinfo=UTC)


# --- hourly ----------------------------------------------------------------------------------


def test_each_slot_is_one_run(check):
    for minute in range(5):
        add(check, slot(minute), ("up", 100.0))

    rollups_refresh(now=NOON_THIRTY)

    rollup = hourly(check)
    assert (rollup.runs, rollup.failures, rollup.degraded) == (5, 0, 0)
    assert rollup.uptime == 1.0


def test_a_failure_cleared_by_a_recheck_is_not_a_failure(check):
    add(check, slot(0), ("up", 100.0))
    add(check, slot(1), ("down", 10_000.0), ("up", 120.0))

    rollups_refresh(now=NOON_THIRTY)

    rollup = hourly(check)
    assert (rollup.runs, rollup.failures) == (2, 0)


def test_a_failure_confirmed_by_its_rechecks_is_one_failure(check):
    add(check, slot(0), ("up", 100.0))
    add(check, slot(1), ("down", 10_000.0), ("down", 10_000.0), ("down", 10_000.0))

    rollups_refresh(now=NOON_THIRTY)

    rollup = hourly(check)
    assert (rollup.runs, rollup.failures) == (2, 1)
    assert rollup.uptime == 0.5


def test_runs_over_the_threshold_count_as_degraded_not_failed(check):
    Healthcheck.objects.filter(pk=check.pk).update(degraded_threshold_ms=500)
    add(check, slot(0), ("up", 100.0))
    add(check, slot(1), ("up", 800.0))
    add(check, slot(2), ("up", 500.0))  # at the threshold is not above it

    rollups_refresh(now=NOON_THIRTY)

    rollup = hourly(check)
    assert (rollup.runs, rollup.failures, rollup.degraded) == (3, 0, 1)


def test_without_a_threshold_nothing_is_degraded(check):
    add(check, slot(0), ("up", 9_000.0))

    rollups_refresh(now=NOON_THIRTY)

    assert hourly(check).degraded == 0


def test_hourly_percentiles_are_exact_over_the_last_attempts(check):
    times = [float(ms) for ms in range(10, 210, 10)]  # 20 slots: 10 .. 200 ms
    for minute, ms in enumerate(times):
        add(check, slot(minute), ("up", ms))
    add(check, slot(30), ("down", 10_000.0), ("up", 5.0))  # only the recheck's 5 ms counts

    rollups_refresh(now=NOON_THIRTY)

    rollup = hourly(check)
    assert rollup.runs == 21
    assert (rollup.p50_ms, rollup.p95_ms) == (100.0, 190.0)
    assert rollup.histogram == latency.histogram_of([*times, 5.0])


def test_failed_runs_count_as_failures_and_never_as_response_time(check):
    add(check, slot(0), ("up", 120.0))
    add(check, slot(1), ("up", 140.0))
    add(check, slot(2), ("down", 0.2))  # connection refused: over in a fifth of a millisecond
    add(check, slot(3), ("down", 0.3))
    add(check, slot(4), ("down", 0.2))

    rollups_refresh(now=NOON_THIRTY)

    rollup = hourly(check)
    assert (rollup.runs, rollup.failures) == (5, 3)
    assert (rollup.p50_ms, rollup.p95_ms) == (120.0, 140.0)
    assert rollup.histogram == latency.histogram_of([120.0, 140.0])


def test_runs_without_a_time_count_but_have_no_percentile(check):
    add(check, slot(0), ("down", None))

    rollups_refresh(now=NOON_THIRTY)

    rollup = hourly(check)
    assert (rollup.runs, rollup.failures, rollup.p50_ms, rollup.p95_ms) == (1, 1, None, None)
    assert rollup.histogram == []


def test_rollups_are_per_region_and_per_hour(check):
    add(check, slot(0), ("up", 100.0), region="eu-west")
    add(check, slot(0), ("down", 10_000.0), region="us-east")
    add(check, slot(0, hour=ELEVEN + timedelta(hours=1)), ("up", 100.0), region="eu-west")

    rollups_refresh(now=NOON_THIRTY)

    assert (hourly(check).runs, hourly(check).failures) == (1, 0)
    assert (hourly(check, region="us-east").runs, hourly(check, region="us-east").failures) == (1, 1)
    assert hourly(check, start=ELEVEN + timedelta(hours=1)).runs == 1


def test_only_the_last_hours_are_recomputed(check):
    old = ELEVEN - timedelta(hours=5)
    add(check, slot(0, hour=old), ("up", 100.0))

    rollups_refresh(now=NOON_THIRTY, hours=2)

    assert not Rollup.objects.filter(period=Rollup.Period.HOUR, start=old).exists()


def test_a_late_recheck_updates_the_hour_on_the_next_refresh(check):
    add(check, slot(0), ("down", 10_000.0))
    rollups_refresh(now=NOON_THIRTY)
    assert hourly(check).failures == 1

    ProbeResult.objects.create(
        healthcheck=check,
        region=Region.objects.get(slug="eu-west"),
        slot=slot(0),
        attempt=1,
        checked_at=slot(0) + timedelta(seconds=6),
        recorded_at=slot(0) + timedelta(seconds=7),
        status="up",
        total_ms=90.0,
    )
    rollups_refresh(now=NOON_THIRTY)

    assert (hourly(check).runs, hourly(check).failures) == (1, 0)


def test_refreshing_twice_changes_nothing(check):
    add(check, slot(0), ("up", 100.0))
    add(check, slot(1), ("down", 10_000.0))
    rollups_refresh(now=NOON_THIRTY)
    before = list(Rollup.objects.order_by("id").values())

    rollups_refresh(now=NOON_THIRTY)

    assert list(Rollup.objects.order_by("id").values()) == before


# --- daily -----------------------------------------------------------------------------------


def test_a_day_sums_its_hours(check):
    ten = ELEVEN - timedelta(hours=1)
    add(check, slot(0, hour=ten), ("up", 100.0))
    add(check, slot(1, hour=ten), ("down", 10_000.0))
    add(check, slot(0), ("up", 200.0))

    rollups_refresh(now=NOON_THIRTY, hours=3)

    day = daily(check)
    assert (day.runs, day.failures, day.degraded) == (3, 1, 0)
    assert day.uptime == pytest.approx(2 / 3)


def test_a_days_percentiles_come_from_the_merged_hourly_histograms(check):
    ten = ELEVEN - timedelta(hours=1)
    for minute in range(10):
        add(check, slot(minute, hour=ten), ("up", 100.0))
        add(check, slot(minute), ("up", 1000.0))

    rollups_refresh(now=NOON_THIRTY, hours=3)

    day = daily(check)
    assert day.histogram == latency.merge([hourly(check, start=ten).histogram, hourly(check).histogram])
    assert day.p50_ms == latency.percentile(day.histogram, 0.5)
    assert 100.0 <= day.p50_ms <= 110.0
    assert 1000.0 <= day.p95_ms <= 1100.0


def test_hours_of_the_previous_day_land_in_that_day(check):
    late = datetime(2026, 11, 28, 23, 0, tzinfo=UTC)
    add(check, slot(0, hour=late), ("up", 100.0))

    rollups_refresh(now=datetime(2026, 11, 29, 0, 10, tzinfo=UTC), hours=2)

    previous = Rollup.objects.get(healthcheck=check, period=Rollup.Period.DAY, start=late.replace(hour=0))
    assert previous.runs == 1
    assert not Rollup.objects.filter(period=Rollup.Period.DAY, start=DAY, runs__gt=0).exists()


def test_refreshing_a_day_twice_does_not_double_it(check):
    add(check, slot(0), ("up", 100.0))

    rollups_refresh(now=NOON_THIRTY)
    rollups_refresh(now=NOON_THIRTY)

    assert daily(check).runs == 1
    assert Rollup.objects.filter(period=Rollup.Period.DAY).count() == 1


# --- pruning ---------------------------------------------------------------------------------


@pytest.fixture
def free_check(make_org, now) -> Healthcheck:
    return healthcheck_create(
        organization=make_org(plan="free"),
        name="free",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=now,
    )


def test_prune_deletes_results_older_than_the_plans_retention(check, free_check, now):
    assert (Plan.objects.get(slug="free").retention_days, Plan.objects.get(slug="paid").retention_days) == (
        30,
        90,
    )
    for healthcheck in (check, free_check):
        add(healthcheck, now - timedelta(days=29), ("up", 100.0))
        add(healthcheck, now - timedelta(days=31), ("up", 100.0))
        add(healthcheck, now - timedelta(days=91), ("up", 100.0))

    deleted = results_prune(now=now, batch_size=1)

    assert deleted == 3
    assert sorted(ProbeResult.objects.filter(healthcheck=free_check).values_list("slot", flat=True)) == [
        now - timedelta(days=29)
    ]
    assert sorted(ProbeResult.objects.filter(healthcheck=check).values_list("slot", flat=True)) == [
        now - timedelta(days=31),
        now - timedelta(days=29),
    ]


def test_prune_keeps_the_rollups(free_check, now):
    hour = (now - timedelta(days=40)).replace(minute=0)
    add(free_check, hour + timedelta(seconds=7), ("up", 100.0))
    rollups_refresh(now=hour + timedelta(minutes=30), hours=1)

    results_prune(now=now)

    assert not ProbeResult.objects.exists()
    assert Rollup.objects.filter(healthcheck=free_check, period=Rollup.Period.HOUR, runs=1).exists()
    assert Rollup.objects.filter(healthcheck=free_check, period=Rollup.Period.DAY, runs=1).exists()


def test_prune_with_nothing_old_deletes_nothing(check, now):
    add(check, now - timedelta(minutes=5), ("up", 100.0))

    assert results_prune(now=now) == 0
    assert ProbeResult.objects.count() == 1
