"""Downtime from the status changes, from the first failing result to the first good one: stored as recorded, else from the raw results."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitors.models import ProbeResult, StatusChange
from monitors.selectors import uptime_history
from monitors.services import RunResult, outcomes_record
from monitors.uptime import Interval
from probes.types import FailureKind, ProbeOutcome, Status, Timings
from tests.reports.support import change, make_check, outage_results, result

pytestmark = pytest.mark.django_db

START = datetime(2026, 11, 1, tzinfo=UTC)
END = datetime(2026, 12, 1, tzinfo=UTC)
FIRST_FAILURE = datetime(2026, 11, 10, 8, 0, tzinfo=UTC)
DOWN_AT = FIRST_FAILURE + timedelta(seconds=10, milliseconds=300)  # after the two rechecks
FIRST_GOOD = datetime(2026, 11, 10, 8, 20, tzinfo=UTC)
UP_AT = FIRST_GOOD + timedelta(seconds=1)  # the verdict, once the slot settled


@pytest.fixture
def check(org):
    return make_check(org, created=START - timedelta(days=60))


def history(check):
    return uptime_history(healthchecks=[check], start=START, end=END)[check.id]


def test_downtime_runs_from_the_first_failing_result_to_the_first_good_one(check):
    outage_results(check, FIRST_FAILURE, FIRST_GOOD)
    change(check, DOWN_AT, "up", "down")
    change(check, UP_AT, "down", "up")

    found = history(check)

    assert found.downtime == [Interval(FIRST_FAILURE, FIRST_GOOD)]
    assert found.bounds_from_changes == 0


def test_pruned_results_fall_back_to_the_status_change_times(check):
    change(check, DOWN_AT, "up", "down")
    change(check, UP_AT, "down", "up")

    found = history(check)

    assert found.downtime == [Interval(DOWN_AT, UP_AT)]
    assert found.bounds_from_changes == 2


def test_a_quorum_of_two_regions_starts_at_the_second_region_s_failure(org):
    check = make_check(
        org, created=START - timedelta(days=60), regions=["eu-west", "us-east", "ap-southeast"]
    )
    outage_results(check, FIRST_FAILURE, FIRST_GOOD, region="eu-west")
    outage_results(
        check, FIRST_FAILURE + timedelta(seconds=2), FIRST_GOOD + timedelta(seconds=3), region="us-east"
    )
    result(check, FIRST_FAILURE, "up", region="ap-southeast")
    change(check, DOWN_AT + timedelta(seconds=2), "up", "down")
    change(check, UP_AT + timedelta(seconds=3), "down", "up")

    (interval,) = history(check).downtime

    # Down once two regions failed; up again once fewer than two failed (eu-west recovered first).
    assert interval == Interval(FIRST_FAILURE + timedelta(seconds=2), FIRST_GOOD)


def test_a_failure_from_an_earlier_episode_does_not_stretch_the_next(check):
    earlier = FIRST_FAILURE - timedelta(minutes=30)
    outage_results(check, earlier, earlier + timedelta(minutes=1))
    change(check, earlier + timedelta(seconds=11), "up", "down")
    change(check, earlier + timedelta(minutes=1, seconds=1), "down", "up")
    outage_results(check, FIRST_FAILURE, FIRST_GOOD)
    change(check, DOWN_AT, "up", "down")
    change(check, UP_AT, "down", "up")

    assert history(check).downtime == [
        Interval(earlier, earlier + timedelta(minutes=1)),
        Interval(FIRST_FAILURE, FIRST_GOOD),
    ]


def test_degraded_is_measured_but_not_downtime(check):
    change(check, DOWN_AT, "up", "degraded")
    change(check, UP_AT, "degraded", "up")

    found = history(check)

    assert found.downtime == []
    assert found.measured == [Interval(START, END)]


def test_paused_and_pending_time_is_not_measured(check):
    change(check, DOWN_AT, "up", "paused")
    change(check, UP_AT, "paused", "pending")
    change(check, UP_AT + timedelta(hours=1), "pending", "up")

    assert history(check).measured == [Interval(START, DOWN_AT), Interval(UP_AT + timedelta(hours=1), END)]


def test_an_outage_open_at_the_period_start_is_bounded_by_it(check):
    change(check, START + timedelta(hours=1), "down", "up")
    result(check, START + timedelta(minutes=59), "up")

    assert history(check).downtime == [Interval(START, START + timedelta(minutes=59))]


def test_the_bounds_read_in_one_query_for_all_checks(org, django_assert_num_queries):
    checks = [make_check(org, created=START - timedelta(days=60), name=f"c{i}") for i in range(4)]
    for check in checks:
        outage_results(check, FIRST_FAILURE, FIRST_GOOD)
        change(check, DOWN_AT, "up", "down")
        change(check, UP_AT, "down", "up")
    assert ProbeResult.objects.count() == 4 * 5

    with django_assert_num_queries(3):  # the changes, the oldest kept results, the results around the changes
        found = uptime_history(healthchecks=checks, start=START, end=END)

    assert all(found[c.id].downtime == [Interval(FIRST_FAILURE, FIRST_GOOD)] for c in checks)


def test_changes_older_than_the_oldest_kept_result_are_not_looked_up(check, django_assert_num_queries):
    old = FIRST_FAILURE - timedelta(days=5)  # its results were pruned
    change(check, old + timedelta(seconds=10), "up", "down")
    change(check, old + timedelta(minutes=20, seconds=1), "down", "up")
    outage_results(check, FIRST_FAILURE, FIRST_GOOD)
    change(check, DOWN_AT, "up", "down")
    change(check, UP_AT, "down", "up")

    found = history(check)

    assert found.downtime == [
        Interval(old + timedelta(seconds=10), old + timedelta(minutes=20, seconds=1)),
        Interval(FIRST_FAILURE, FIRST_GOOD),
    ]
    assert found.bounds_from_changes == 2


def test_no_results_kept_means_no_results_query(org, check, django_assert_num_queries):
    change(check, DOWN_AT, "up", "down")
    change(check, UP_AT, "down", "up")

    with django_assert_num_queries(2):  # the changes, and each check's oldest kept result
        assert history(check).downtime == [Interval(DOWN_AT, UP_AT)]


# --- the bounds stored as the recorder writes a change (StatusChange.effective_at) -------------


def run(check, slot: datetime, attempt: int, status: str) -> datetime:
    """Record one run in eu-west through the recorder; return when it was checked."""
    outcome = (
        ProbeOutcome(status=Status.UP, timings=Timings(total_ms=90.0))
        if status == "up"
        else ProbeOutcome(status=Status.DOWN, kind=FailureKind.TIMEOUT, reason="Timed out", timings=Timings())
    )
    checked_at = slot + timedelta(seconds=1 + 5 * attempt)
    outcomes_record(
        region_slug="eu-west",
        results=[RunResult(check.id, slot, attempt, outcome, checked_at)],
        now=checked_at + timedelta(milliseconds=300),
    )
    return checked_at


@pytest.mark.parametrize("rechecks", [0, 1, 2])
def test_the_recorder_stores_where_downtime_began_and_ended(org, rechecks):
    check = make_check(org, created=START, recheck_count=rechecks)
    slot = FIRST_FAILURE.replace(second=0)
    run(check, slot - timedelta(minutes=1), 0, "up")
    first_failure = run(check, slot, 0, "down")
    confirmed = [run(check, slot, attempt, "down") for attempt in range(1, rechecks + 1)]
    run(check, slot + timedelta(minutes=1), 0, "down")
    first_good = run(check, slot + timedelta(minutes=2), 0, "up")

    went_down, came_back = StatusChange.objects.filter(healthcheck=check, at__gt=slot).order_by("at")
    assert (went_down.to_status, came_back.to_status) == ("down", "up")
    assert went_down.effective_at == first_failure
    assert went_down.at > (
        confirmed[-1] if confirmed else first_failure
    )  # the verdict came after the rechecks
    assert came_back.effective_at == first_good


def test_a_stored_bound_outlives_the_pruned_results(org, django_assert_num_queries):
    check = make_check(org, created=START)
    slot = FIRST_FAILURE.replace(second=0)
    run(check, slot - timedelta(minutes=1), 0, "up")
    first_failure = run(check, slot, 0, "down")
    for attempt in (1, 2):
        run(check, slot, attempt, "down")
    first_good = run(check, slot + timedelta(minutes=1), 0, "up")
    ProbeResult.objects.filter(healthcheck=check).delete()  # pruned

    with django_assert_num_queries(1):  # the changes: their bounds are on them
        found = history(check)

    assert found.downtime == [Interval(first_failure, first_good)]
    assert found.bounds_from_changes == 0


def test_a_change_written_before_the_bounds_were_stored_still_reads_them_from_the_results(check):
    outage_results(check, FIRST_FAILURE, FIRST_GOOD)
    change(check, DOWN_AT, "up", "down")  # effective_at null, as every row before migration 0016
    StatusChange.objects.create(
        healthcheck=check, at=UP_AT, from_status="down", to_status="up", effective_at=FIRST_GOOD
    )

    found = history(check)

    assert found.downtime == [Interval(FIRST_FAILURE, FIRST_GOOD)]
    assert found.bounds_from_changes == 0
