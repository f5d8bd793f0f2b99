"""Check that recording flags results taken in maintenance, uptime leaves them out, and the selectors alerts read.

Run on SQLite by default and on PostgreSQL with DATABASE_URL (the recorder writes results
through jsonb there); test_the_flag_is_written_through_postgresqls_bulk_path requires it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitors.models import Healthcheck, HealthcheckTag, ProbeResult, Rollup, StatusChange
from monitors.selectors import maintenance_active, maintenance_covering, maintenance_ended, uptime_of
from monitors.services import (
    RunResult,
    healthcheck_create,
    maintenance_window_create,
    maintenance_window_delete,
    outcomes_record,
    rollups_refresh,
)
from probes.checks.mcp import MCP
from probes.types import FailureKind, ProbeOutcome, Status, Timings

REGION = "eu-west"
# A window from 12:00 to 13:00 UTC on 29 November 2026.
OPENS = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
CLOSES = OPENS + timedelta(hours=1)
UP = ProbeOutcome(status=Status.UP, timings=Timings(total_ms=100.0))
DOWN = ProbeOutcome(
    status=Status.DOWN,
    kind=FailureKind.TIMEOUT,
    reason="Timed out after 10 s",
    timings=Timings(total_ms=10_000.0),
)


@pytest.fixture
def make_check(now):
    def make(organization, name: str = "docs", *, tags: tuple[str, ...] = ()) -> Healthcheck:
        return healthcheck_create(
            organization=organization,
            name=name,
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=now,
            region_slugs=[REGION],
            tags=tags,
            rules={"recheck_count": 0},
        )

    return make


def window(organization, *, healthchecks=(), tags=(), starts_at=OPENS, duration=timedelta(hours=1), **extra):
    return maintenance_window_create(
        organization=organization,
        name="upgrade",
        starts_at=starts_at,
        duration=duration,
        healthchecks=[check.public_id for check in healthchecks],
        tags=tags,
        **extra,
    )


def record(*runs: tuple[Healthcheck, datetime], outcome: ProbeOutcome = UP) -> None:
    """Record, in one group, one run per (healthcheck, time it was checked); its slot is the minute before."""
    outcomes_record(
        region_slug=REGION,
        results=[
            RunResult(check.id, at.replace(second=0, microsecond=0), 0, outcome, at) for check, at in runs
        ],
        now=max(at for _, at in runs) + timedelta(seconds=1),
    )


def flagged(check: Healthcheck) -> list[tuple[datetime, bool]]:
    return list(
        ProbeResult.objects.filter(healthcheck=check)
        .order_by("checked_at")
        .values_list("checked_at", "in_maintenance")
    )


# --- recording ----------------------------------------------------------------------------------


def test_a_result_checked_inside_a_window_is_flagged_and_one_outside_is_not(org, make_check):
    check = make_check(org)
    window(org, healthchecks=[check])
    before, inside, at_end = OPENS - timedelta(seconds=1), OPENS + timedelta(minutes=30), CLOSES

    record((check, before))
    record((check, inside))
    record((check, at_end))

    assert flagged(check) == [(before, False), (inside, True), (at_end, False)]


def test_one_group_flags_each_result_by_its_own_check_time(org, make_check):
    first, second = make_check(org, "a"), make_check(org, "b")
    window(org, healthchecks=[first, second])

    record((first, CLOSES - timedelta(seconds=1)), (second, CLOSES + timedelta(seconds=1)))

    assert flagged(first)[0][1] is True
    assert flagged(second)[0][1] is False


def test_a_window_holds_only_its_healthchecks(org, make_check):
    held, free = make_check(org, "held"), make_check(org, "free")
    window(org, healthchecks=[held])

    record((held, OPENS + timedelta(minutes=1)), (free, OPENS + timedelta(minutes=1)))

    assert flagged(held)[0][1] is True
    assert flagged(free)[0][1] is False


def test_a_window_holds_the_healthchecks_with_its_tag_even_ones_tagged_after_it_was_made(org, make_check):
    window(org, tags=["database"])
    tagged, untagged = make_check(org, "db", tags=("database", "eu")), make_check(org, "web", tags=("web",))

    record((tagged, OPENS + timedelta(minutes=1)), (untagged, OPENS + timedelta(minutes=1)))

    assert flagged(tagged)[0][1] is True
    assert flagged(untagged)[0][1] is False


def test_a_tag_window_never_holds_another_organizations_check_with_the_same_tag(org, other_org, make_check):
    window(org, tags=["database"])
    theirs = make_check(other_org, "db", tags=("database",))

    record((theirs, OPENS + timedelta(minutes=1)))

    assert flagged(theirs)[0][1] is False


def test_a_recurring_window_flags_by_local_time(org, make_check):
    check = make_check(org)
    # Every Sunday 02:00–03:00 in Berlin; 29 November 2026 is a Sunday, CET (+01:00).
    window(
        org,
        healthchecks=[check],
        starts_at=datetime(2026, 11, 1, 1, 0, tzinfo=UTC),
        rrule="FREQ=WEEKLY;BYDAY=SU",
        timezone="Europe/Berlin",
    )
    inside = datetime(2026, 11, 29, 1, 30, tzinfo=UTC)  # 02:30 in Berlin
    outside = datetime(2026, 11, 29, 2, 30, tzinfo=UTC)  # 03:30 in Berlin

    record((check, inside), (check, outside))

    assert flagged(check) == [(inside, True), (outside, False)]


def test_a_deleted_window_flags_nothing_more_and_keeps_what_it_flagged(org, make_check):
    check = make_check(org)
    held = window(org, healthchecks=[check])
    record((check, OPENS + timedelta(minutes=1)))

    maintenance_window_delete(window=held)
    record((check, OPENS + timedelta(minutes=2)))

    assert [flag for _, flag in flagged(check)] == [True, False]


def test_status_changes_are_still_recorded_in_maintenance(org, make_check):
    check = make_check(org)
    window(org, healthchecks=[check])

    record((check, OPENS + timedelta(minutes=1)), outcome=UP)
    record((check, OPENS + timedelta(minutes=2)), outcome=DOWN)

    assert list(
        StatusChange.objects.filter(healthcheck=check).order_by("id").values_list("to_status", flat=True)
    ) == [
        "up",
        "down",
    ]


def test_the_flag_is_written_through_postgresqls_bulk_path(postgres, org, make_check):
    check = make_check(org)
    window(org, healthchecks=[check])

    record((check, OPENS + timedelta(minutes=1)), (check, CLOSES + timedelta(minutes=1)))

    assert [flag for _, flag in flagged(check)] == [True, False]


# --- uptime ------------------------------------------------------------------------------------


def test_uptime_leaves_out_the_runs_taken_in_maintenance(org, make_check):
    check = make_check(org)
    window(org, healthchecks=[check], starts_at=OPENS + timedelta(minutes=10), duration=timedelta(minutes=20))
    for minute in range(0, 60, 5):
        outcome = DOWN if 10 <= minute < 30 else UP  # down only while under maintenance
        record((check, OPENS + timedelta(minutes=minute, seconds=7)), outcome=outcome)

    rollups_refresh(now=CLOSES + timedelta(minutes=5))

    hour = Rollup.objects.get(healthcheck=check, period=Rollup.Period.HOUR, start=OPENS)
    assert (hour.runs, hour.failures) == (8, 0)
    figures = uptime_of(healthcheck=check, start=OPENS, end=CLOSES)
    assert figures["overall"]["uptime"] == 1.0
    assert figures["overall"]["runs"] == 8


def test_a_slot_counts_by_its_last_attempt_in_or_out_of_maintenance(org, make_check):
    check = make_check(org)
    window(org, healthchecks=[check], starts_at=OPENS + timedelta(minutes=1), duration=timedelta(minutes=1))
    slot = OPENS
    # Attempt 0 failed before the window; its recheck ran inside it: the slot is left out.
    outcomes_record(
        region_slug=REGION,
        results=[RunResult(check.id, slot, 0, DOWN, OPENS + timedelta(seconds=50))],
        now=OPENS + timedelta(seconds=51),
    )
    outcomes_record(
        region_slug=REGION,
        results=[RunResult(check.id, slot, 1, DOWN, OPENS + timedelta(seconds=65))],
        now=OPENS + timedelta(seconds=66),
    )

    rollups_refresh(now=CLOSES)

    assert not Rollup.objects.filter(healthcheck=check, period=Rollup.Period.HOUR).exists()


# --- selectors alerts read -----------------------------------------------------------------------


def test_maintenance_active_names_the_held_checks_and_until_when(org, make_check):
    held, tagged, free = make_check(org, "a"), make_check(org, "b", tags=("db",)), make_check(org, "c")
    first = window(org, healthchecks=[held])
    second = window(org, tags=["db"], duration=timedelta(hours=2))

    active = maintenance_active(
        healthcheck_ids=[held.id, tagged.id, free.id], at=OPENS + timedelta(minutes=5)
    )

    assert set(active) == {held.id, tagged.id}
    assert active[held.id].until == CLOSES
    assert active[held.id].window_ids == (first.id,)
    assert active[tagged.id].until == OPENS + timedelta(hours=2)
    assert active[tagged.id].window_ids == (second.id,)


def test_maintenance_active_answers_the_latest_end_of_overlapping_windows(org, make_check):
    check = make_check(org)
    window(org, healthchecks=[check])
    window(org, healthchecks=[check], starts_at=OPENS + timedelta(minutes=30))

    active = maintenance_active(healthcheck_ids=[check.id], at=OPENS + timedelta(minutes=45))

    assert active[check.id].until == CLOSES + timedelta(minutes=30)
    assert len(active[check.id].window_ids) == 2


@pytest.mark.parametrize(
    ("since", "until", "ends"),
    [
        (OPENS, CLOSES, [CLOSES]),
        (OPENS, CLOSES - timedelta(seconds=1), []),  # not over yet
        (CLOSES, CLOSES + timedelta(minutes=5), []),  # ended at `since`: told the time before
    ],
)
def test_maintenance_ended_lists_windows_that_ended_in_the_range(org, make_check, since, until, ends):
    check = make_check(org)
    window(org, healthchecks=[check])

    ended = maintenance_ended(since=since, until=until)

    assert [item.ended_at for item in ended] == ends


def test_maintenance_ended_names_the_checks_held_by_id_and_by_tag_within_the_organization(
    org, other_org, make_check
):
    held, tagged = make_check(org, "a"), make_check(org, "b", tags=("db",))
    make_check(other_org, "theirs", tags=("db",))
    made = window(org, healthchecks=[held], tags=["db"])

    (ended,) = maintenance_ended(since=OPENS, until=CLOSES + timedelta(minutes=1))

    assert ended.window_id == made.id
    assert ended.healthcheck_ids == {held.id, tagged.id}
    assert maintenance_ended(since=OPENS, until=CLOSES, healthcheck_ids=[tagged.id])[0].healthcheck_ids == {
        tagged.id
    }


def test_maintenance_covering_costs_one_query_when_no_window_is_live(
    org, make_check, django_assert_num_queries
):
    check = make_check(org)
    window(org, healthchecks=[check], starts_at=OPENS - timedelta(days=2))  # long over

    with django_assert_num_queries(1):
        covering = maintenance_covering(organizations={check.id: org.id}, start=OPENS, end=CLOSES)

    assert covering == {}


def test_a_check_tagged_for_a_window_is_read_with_its_current_tags(org, make_check):
    check = make_check(org)
    window(org, tags=["db"])
    HealthcheckTag.objects.create(healthcheck=check, name="db")

    assert check.id in maintenance_active(healthcheck_ids=[check.id], at=OPENS)
