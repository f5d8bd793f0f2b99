"""The uptime maths, defined once (monitors.uptime): downtime bounds from raw results, a period's figures, SLA budgets."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitors.uptime import (
    Availability,
    Interval,
    Run,
    availability,
    down_since,
    down_until,
    merge,
    sla_outcome,
    uptime_percent,
)

T0 = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def runs(*items: tuple[float, int, str]) -> list[Run]:
    return [Run(at(second), region, outcome == "fail") for second, region, outcome in items]


# --- where downtime starts -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "quorum", "expected"),
    [
        # One region: the scheduled run fails, two rechecks confirm: down from the scheduled run.
        ([(0, 1, "ok"), (60, 1, "fail"), (65, 1, "fail"), (70, 1, "fail")], None, 60),
        # A blip a recheck cleared is not where the outage began.
        ([(0, 1, "fail"), (5, 1, "ok"), (60, 1, "fail"), (65, 1, "fail")], None, 60),
        # Two regions of three must fail: down from the second region's first failure.
        ([(0, 1, "fail"), (1, 2, "ok"), (2, 3, "ok"), (60, 1, "fail"), (61, 2, "fail")], None, 61),
        # A quorum of one: the first region that fails.
        ([(0, 1, "ok"), (1, 2, "ok"), (60, 1, "fail"), (61, 2, "fail")], 1, 60),
        # A quorum above the regions seen shrinks to them (lost regions don't block it).
        ([(60, 1, "fail"), (61, 2, "fail")], 5, 61),
        # Failing from the first result seen: the look-back's first result.
        ([(10, 1, "fail"), (15, 1, "fail")], None, 10),
    ],
    ids=["rechecks", "blip-before", "quorum-2-of-3", "quorum-1", "quorum-shrinks", "from-first-seen"],
)
def test_downtime_starts_at_the_first_failing_result_that_led_to_down(items, quorum, expected):
    assert down_since(runs(*items), quorum=quorum) == at(expected)


@pytest.mark.parametrize(
    "items",
    [[], [(0, 1, "ok"), (60, 1, "ok")], [(0, 1, "fail"), (60, 1, "ok")]],
    ids=["pruned", "all-good", "recovered"],
)
def test_no_start_is_found_where_the_results_do_not_show_down(items):
    assert down_since(runs(*items), quorum=None) is None


@pytest.mark.parametrize(
    ("items", "quorum", "expected"),
    [
        # The first good result ends it, not the verdict taken when the slot settled.
        ([(0, 1, "fail"), (60, 1, "ok")], None, 60),
        # Two of three regions must fail: one recovering region ends it (one left failing).
        ([(0, 1, "fail"), (0, 2, "fail"), (0, 3, "fail"), (60, 1, "ok"), (61, 2, "ok")], None, 61),
        ([(0, 1, "fail"), (0, 2, "fail"), (60, 1, "ok")], None, 60),
        # Good, failing again, then good for good: the last recovery counts.
        ([(0, 1, "ok"), (5, 1, "fail"), (60, 1, "ok")], None, 60),
    ],
    ids=["one-region", "quorum-2-of-3", "quorum-2-of-2", "relapse"],
)
def test_downtime_ends_at_the_first_good_result_of_the_recovery(items, quorum, expected):
    assert down_until(runs(*items), quorum=quorum) == at(expected)


def test_no_end_is_found_while_the_results_still_fail():
    assert down_until(runs((0, 1, "fail"), (60, 1, "fail")), quorum=None) is None
    assert down_until([], quorum=None) is None


# --- a period's figures ----------------------------------------------------------------------------

DAY = 86_400


def test_maintenance_leaves_the_denominator_and_its_downtime_is_not_counted():
    figures = availability(
        start=at(0),
        end=at(DAY),
        downtime=[Interval(at(3600), at(7200))],
        maintenance=[Interval(at(3600), at(5400))],
        data=[Interval(at(0), at(DAY))],
    )
    assert figures == Availability(DAY - 1800, 1800, 1800, (1800,))


def test_unmonitored_time_leaves_the_denominator():
    figures = availability(start=at(0), end=at(DAY), downtime=[], data=[Interval(at(DAY / 2), at(DAY))])
    assert (figures.counted_seconds, figures.percent) == (DAY // 2, "100.00")
    assert availability(start=at(0), end=at(DAY), downtime=[], data=[]).percent is None


def test_episodes_give_the_incident_count_mttr_and_longest():
    figures = availability(
        start=at(0),
        end=at(DAY),
        downtime=[Interval(at(100), at(160)), Interval(at(1000), at(1300)), Interval(at(1300), at(1400))],
        data=[Interval(at(0), at(DAY))],
    )
    # Touching episodes are one: 60 s, then 400 s.
    assert (figures.incidents, figures.mttr_seconds, figures.longest_seconds) == (2, 230, 400)
    assert figures.downtime_minutes == 8  # 460 s, rounded up


def test_an_episode_across_the_period_end_is_cut_there():
    figures = availability(
        start=at(0),
        end=at(DAY),
        downtime=[Interval(at(DAY - 60), at(DAY + 600))],
        data=[Interval(at(0), at(DAY))],
    )
    assert (figures.downtime_seconds, figures.incidents) == (60, 1)


def test_an_episode_wholly_inside_maintenance_is_no_incident():
    figures = availability(
        start=at(0),
        end=at(DAY),
        downtime=[Interval(at(100), at(200))],
        maintenance=[Interval(at(0), at(3600))],
        data=[Interval(at(0), at(DAY))],
    )
    assert (figures.downtime_seconds, figures.incidents, figures.mttr_seconds) == (0, 0, None)


# --- service-level targets -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "down", "counted", "met", "budget", "used"),
    [
        ("99.9", 0, 2_592_000, True, 2_592, "0.00"),
        ("99.9", 2_592, 2_592_000, True, 2_592, "100.00"),  # exactly on target: met, budget spent
        ("99.9", 2_593, 2_592_000, False, 2_592, "100.03"),
        ("99.9", 1_296, 2_592_000, True, 2_592, "50.00"),
        ("99.999", 1, 86_400, False, 0, None),  # a budget below a second: any downtime misses it
        ("99.999", 0, 86_400, True, 0, "0.00"),
        ("100", 0, 10, True, 0, "0.00"),
        ("0", 10, 10, True, 10, "100.00"),
        ("99.9", 0, 0, None, 0, None),  # nothing counted: no verdict
    ],
)
def test_the_sla_is_met_from_integers_and_the_budget_is_floored(target, down, counted, met, budget, used):
    outcome = sla_outcome(Availability(counted, down, 0), target=Decimal(target))
    assert (outcome.met, outcome.budget_seconds, outcome.budget_used_percent) == (met, budget, used)


@pytest.mark.parametrize("target", ["100.001", "-1", "99.9999"])
def test_a_target_out_of_range_or_too_precise_is_refused(target):
    with pytest.raises(ValueError, match="target"):
        sla_outcome(Availability(10, 0, 0), target=Decimal(target))


# --- properties ------------------------------------------------------------------------------------

moments = st.integers(min_value=0, max_value=3 * DAY).map(at)
intervals = st.tuples(moments, moments).map(lambda pair: Interval(min(pair), max(pair)))


@given(st.lists(intervals, max_size=12))
def test_merging_overlapping_intervals_is_idempotent(items):
    merged = merge(items)
    assert merge(merged) == merged
    assert merge([*merged, *items]) == merged
    assert all(a.end < b.start for a, b in itertools.pairwise(merged))


@given(st.lists(intervals, max_size=8), st.lists(intervals, max_size=4), st.lists(intervals, max_size=4))
def test_availability_never_flatters(downtime, maintenance, data):
    figures = availability(
        start=at(0), end=at(2 * DAY), downtime=downtime, maintenance=maintenance, data=data
    )
    assert figures.downtime_seconds <= figures.counted_seconds
    if figures.counted_seconds == 0:
        assert figures.percent is None
    else:
        assert figures.percent is not None
        assert Decimal(figures.percent) <= 100
        assert (figures.percent == "100.00") == (figures.downtime_seconds == 0)


@given(
    st.lists(intervals, max_size=8),
    st.lists(intervals, max_size=4),
    st.lists(intervals, max_size=4),
    st.integers(min_value=1, max_value=2 * DAY - 1),
)
def test_a_period_s_seconds_are_the_sum_of_its_parts(downtime, maintenance, data, cut):
    whole = availability(start=at(0), end=at(2 * DAY), downtime=downtime, maintenance=maintenance, data=data)
    first = availability(start=at(0), end=at(cut), downtime=downtime, maintenance=maintenance, data=data)
    second = availability(
        start=at(cut), end=at(2 * DAY), downtime=downtime, maintenance=maintenance, data=data
    )
    assert first.counted_seconds + second.counted_seconds == whole.counted_seconds
    assert first.downtime_seconds + second.downtime_seconds == whole.downtime_seconds
    assert first.maintenance_seconds + second.maintenance_seconds == whole.maintenance_seconds


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=10**9))
def test_uptime_is_never_above_100_nor_100_with_downtime(down, counted):
    percent = uptime_percent(downtime_seconds=down, counted_seconds=counted)
    assert percent is not None
    assert Decimal(percent) <= 100
    assert (percent == "100.00") == (down == 0)


@given(
    st.lists(st.tuples(st.integers(0, 600), st.integers(1, 3), st.booleans()), max_size=20),
    st.one_of(st.none(), st.integers(1, 3)),
)
def test_a_found_bound_is_one_of_the_results(items, quorum):
    given_runs = [Run(at(second), region, failing) for second, region, failing in items]
    for bound in (down_since(given_runs, quorum=quorum), down_until(given_runs, quorum=quorum)):
        assert bound is None or bound in {run.at for run in given_runs}
