"""Check the pure status rules with tables: rechecks, quorum, staleness, tool diffs, rollups."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from monitors.rules import (
    HealthPolicy,
    RecheckPolicy,
    RegionVerdict,
    RegionVote,
    ToolDiff,
    default_quorum,
    overall_verdict,
    region_verdict,
    rollup_figures,
    tool_diff,
)
from probes.types import Status, ToolInfo

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
PENDING, UP, DEGRADED, DOWN, PAUSED = Status.PENDING, Status.UP, Status.DEGRADED, Status.DOWN, Status.PAUSED
SLUGS = ("eu-west", "us-east", "ap-south")


def up(ms: float | None = 100.0, *, ago: float = 30) -> RegionVote:
    return RegionVote(UP, NOW - timedelta(seconds=ago), response_ms=ms)


def down(kind: str | None = "timeout", *, ago: float = 30) -> RegionVote:
    return RegionVote(DOWN, NOW - timedelta(seconds=ago), kind=kind, reason="timed out after 10 s")


def warns(kind: str = "certificate_expiring", *, ago: float = 30) -> RegionVote:
    return RegionVote(
        UP, NOW - timedelta(seconds=ago), response_ms=100.0, kind=kind, reason="expires in 3 days"
    )


def pending() -> RegionVote:
    return RegionVote(PENDING, None)


def regions(*states: RegionVote) -> dict[str, RegionVote]:
    return dict(zip(SLUGS, states, strict=False))


# --- region_verdict ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "outcome", "attempt", "count", "expected"),
    [
        # Success decides at once, whatever came before and whichever attempt it is.
        (UP, UP, 0, 2, RegionVerdict(UP, False)),
        (DOWN, UP, 0, 2, RegionVerdict(UP, False)),
        (PENDING, UP, 0, 2, RegionVerdict(UP, False)),
        (UP, UP, 2, 2, RegionVerdict(UP, False)),
        # A degraded run (answered, with a warning) is a success for its region.
        (UP, DEGRADED, 0, 2, RegionVerdict(UP, False)),
        (DOWN, DEGRADED, 0, 2, RegionVerdict(UP, False)),
        # A first failure is rechecked from any state that is not down ...
        (UP, DOWN, 0, 2, RegionVerdict(None, True)),
        (PENDING, DOWN, 0, 2, RegionVerdict(None, True)),
        (DEGRADED, DOWN, 0, 2, RegionVerdict(None, True)),
        (PAUSED, DOWN, 0, 2, RegionVerdict(None, True)),
        (UP, DOWN, 1, 2, RegionVerdict(None, True)),
        # ... until the last recheck also fails.
        (UP, DOWN, 2, 2, RegionVerdict(DOWN, False)),
        (UP, DOWN, 5, 2, RegionVerdict(DOWN, False)),
        (UP, DOWN, 0, 1, RegionVerdict(None, True)),
        (UP, DOWN, 1, 1, RegionVerdict(DOWN, False)),
        # No rechecks configured: down at the first failure.
        (UP, DOWN, 0, 0, RegionVerdict(DOWN, False)),
        (PENDING, DOWN, 0, 0, RegionVerdict(DOWN, False)),
        # Already down: no rechecks while down.
        (DOWN, DOWN, 0, 2, RegionVerdict(DOWN, False)),
        (DOWN, DOWN, 0, 0, RegionVerdict(DOWN, False)),
    ],
)
def test_region_verdict(previous, outcome, attempt, count, expected):
    policy = RecheckPolicy(count=count)

    assert region_verdict(previous=previous, outcome=outcome, attempt=attempt, policy=policy) == expected


@pytest.mark.parametrize(
    ("outcome", "attempt", "message"),
    [
        (PENDING, 0, "a check run is up, degraded or down"),
        (PAUSED, 0, "a check run is up, degraded or down"),
        (UP, -1, "attempt must be 0 or more"),
        (DOWN, -1, "attempt must be 0 or more"),
    ],
)
def test_region_verdict_refuses_impossible_runs(outcome, attempt, message):
    with pytest.raises(ValueError, match=message):
        region_verdict(previous=UP, outcome=outcome, attempt=attempt, policy=RecheckPolicy())


@pytest.mark.parametrize("kwargs", [{"count": -1}, {"delay_seconds": -0.1}])
def test_recheck_policy_refuses_negative_values(kwargs):
    with pytest.raises(ValueError, match="0 or more"):
        RecheckPolicy(**kwargs)


def test_recheck_policy_defaults_match_the_issue():
    assert RecheckPolicy() == RecheckPolicy(count=2, delay_seconds=5.0)


# --- Flapping and recovery: runs through region_verdict, then overall_verdict ------------------


def run_slots(outcomes: Sequence[Status], *, count: int = 2, start: Status = PENDING) -> list[Status]:
    """Play one region's runs in order (rechecks draw the next run) and return its status after each slot."""
    policy = RecheckPolicy(count=count)
    runs: Iterator[Status] = iter(outcomes)
    status, after_slots = start, []
    for outcome in runs:
        attempt = 0
        verdict = region_verdict(previous=status, outcome=outcome, attempt=attempt, policy=policy)
        while verdict.recheck:
            attempt += 1
            # A recheck with no run left in the table means the episode is still open.
            next_run = next(runs, None)
            if next_run is None:
                break
            verdict = region_verdict(previous=status, outcome=next_run, attempt=attempt, policy=policy)
        status = verdict.status or status
        after_slots.append(status)
    return after_slots


@pytest.mark.parametrize(
    ("outcomes", "count", "expected"),
    [
        # Flapping up/down every run never survives 2 rechecks: each failure is followed by a success.
        ([UP, DOWN, UP, DOWN, UP, DOWN, UP], 2, [UP, UP, UP, UP]),
        # Two failures in a row still recover at the second recheck.
        ([UP, DOWN, DOWN, UP, UP], 2, [UP, UP, UP]),
        # Three failures in a row (the run and 2 rechecks) is down.
        ([UP, DOWN, DOWN, DOWN], 2, [UP, DOWN]),
        # Recovery: one success while down is up again, no rechecks either way.
        ([UP, DOWN, DOWN, DOWN, DOWN, UP], 2, [UP, DOWN, DOWN, UP]),
        # Without rechecks the same flapping is seen run by run.
        ([UP, DOWN, UP, DOWN], 0, [UP, DOWN, UP, DOWN]),
        # Failing from the very first run: pending straight to down after the rechecks.
        ([DOWN, DOWN, DOWN, DOWN], 2, [DOWN, DOWN]),
    ],
)
def test_region_runs_through_rechecks(outcomes, count, expected):
    assert run_slots(outcomes, count=count) == expected


@pytest.mark.parametrize(
    ("runs_by_region", "expected"),
    [
        # Every region flapping: each failure clears at its recheck, so the check never leaves up.
        ({slug: [UP, DOWN, UP, DOWN, UP, DOWN, UP] for slug in SLUGS}, [UP, UP, UP, UP]),
        # One region truly down (all 3 runs fail) while the others flap: degraded, never down.
        (
            {
                "eu-west": [UP, DOWN, DOWN, DOWN, DOWN, DOWN],
                "us-east": [UP, DOWN, UP, UP, DOWN, UP],
                "ap-south": [UP, UP, DOWN, UP, UP],
            },
            [UP, DEGRADED, DEGRADED, DEGRADED],
        ),
        # Outage and recovery everywhere: up, down after rechecks, up at the first success.
        ({slug: [UP, DOWN, DOWN, DOWN, UP] for slug in SLUGS}, [UP, DOWN, UP]),
    ],
)
def test_flapping_and_recovery_through_both_rules(runs_by_region, expected):
    statuses = {slug: run_slots(runs) for slug, runs in runs_by_region.items()}
    slots = min(len(history) for history in statuses.values())

    verdicts = [
        overall_verdict(
            regions={slug: RegionVote(history[i], NOW) for slug, history in statuses.items()},
            policy=HealthPolicy(),
            paused=False,
            now=NOW,
        ).status
        for i in range(slots)
    ]

    assert verdicts == expected


# --- overall_verdict ----------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "expected"), [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4)])
def test_default_quorum_is_more_than_half_and_at_least_one(count, expected):
    assert default_quorum(count) == expected


@pytest.mark.parametrize(
    ("states", "paused", "status", "reason"),
    [
        # Paused wins over everything, even an outage.
        (regions(down(), down(), down()), True, PAUSED, "Paused"),
        (regions(), True, PAUSED, "Paused"),
        # No result yet: no region, or every region pending.
        (regions(), False, PENDING, "No result yet"),
        (regions(pending(), pending(), pending()), False, PENDING, "No result yet"),
        # A decided status without a timestamp is not a result.
        ({"eu-west": RegionVote(UP, None)}, False, PENDING, "No result yet"),
        # One pending region does not hold back the others; it does count for the quorum.
        (regions(up(), pending(), pending()), False, UP, "Up in 1 region"),
        (regions(up(), up(), up()), False, UP, "Up in 3 regions"),
    ],
)
def test_paused_and_pending(states, paused, status, reason):
    verdict = overall_verdict(regions=states, policy=HealthPolicy(), paused=paused, now=NOW)

    assert (verdict.status, verdict.reason) == (status, reason)
    assert verdict.failed_regions == {}


@pytest.mark.parametrize(
    ("states", "status", "failed", "reason"),
    [
        # Default quorum with 3 regions is 2.
        (
            regions(up(), up(), down()),
            DEGRADED,
            {"ap-south": "timeout"},
            "Down in 1 of 3 regions: ap-south (timeout)",
        ),
        (
            regions(down(), down(), up()),
            DOWN,
            {"eu-west": "timeout", "us-east": "timeout"},
            "Down in eu-west, us-east (timeout)",
        ),
        (
            regions(down("dns"), down("tls"), down("dns")),
            DOWN,
            {"ap-south": "dns", "eu-west": "dns", "us-east": "tls"},
            "Down in ap-south (dns), eu-west (dns), us-east (tls)",
        ),
        # An unknown kind is kept as "" and left out of the sentence.
        (regions(down(None), down(None)), DOWN, {"eu-west": "", "us-east": ""}, "Down in eu-west, us-east"),
        (
            regions(down("timeout"), down(None)),
            DOWN,
            {"eu-west": "timeout", "us-east": ""},
            "Down in eu-west (timeout), us-east",
        ),
        # Two regions: quorum 2, so one down is only degraded.
        (
            regions(down(), up()),
            DEGRADED,
            {"eu-west": "timeout"},
            "Down in 1 of 2 regions: eu-west (timeout)",
        ),
        # One region: its failure is the check's.
        (regions(down("connect")), DOWN, {"eu-west": "connect"}, "Down in eu-west (connect)"),
        # A pending region counts toward the default quorum (3 -> 2) but does not vote, so the
        # quorum shrinks to the one voter.
        (regions(down(), pending(), pending()), DOWN, {"eu-west": "timeout"}, "Down in eu-west (timeout)"),
    ],
)
def test_down_and_degraded_by_default_quorum(states, status, failed, reason):
    verdict = overall_verdict(regions=states, policy=HealthPolicy(), paused=False, now=NOW)

    assert verdict.status == status
    assert verdict.failed_regions == failed
    assert list(verdict.failed_regions) == sorted(failed)
    assert verdict.reason == reason


@pytest.mark.parametrize(
    ("quorum", "states", "status", "applied"),
    [
        # Quorum 1: any region down is down.
        (1, regions(down(), up(), up()), DOWN, 1),
        # Quorum 3 of 3: two down is only degraded, three is down.
        (3, regions(down(), down(), up()), DEGRADED, 3),
        (3, regions(down(), down(), down()), DOWN, 3),
        # A quorum above the region count is capped by the voters: all of them down is down.
        (5, regions(down(), down(), down()), DOWN, 3),
        (5, regions(down(), down(), up()), DEGRADED, 3),
        # Quorum 2 of 5 overrides the default 3.
        (2, {f"r{i}": down() if i < 2 else up() for i in range(5)}, DOWN, 2),
        (None, {f"r{i}": down() if i < 2 else up() for i in range(5)}, DEGRADED, 3),
    ],
)
def test_quorum_override(quorum, states, status, applied):
    verdict = overall_verdict(regions=states, policy=HealthPolicy(quorum=quorum), paused=False, now=NOW)

    assert (verdict.status, verdict.quorum) == (status, applied)


@pytest.mark.parametrize(
    ("states", "quorum", "status", "stale", "reason"),
    [
        # The exact boundary (5 minutes) still votes; a second more does not.
        (regions(down(ago=300), down(), up()), None, DOWN, (), "Down in eu-west, us-east (timeout)"),
        (
            regions(down(ago=301), down(), up()),
            None,
            DEGRADED,
            ("eu-west",),
            "Down in 1 of 2 regions: us-east (timeout); not reporting: eu-west",
        ),
        # A stale region's old DOWN does not keep the check down: recovery is seen.
        (
            regions(down(ago=900), up(), up()),
            None,
            UP,
            ("eu-west",),
            "Up in 2 regions; not reporting: eu-west",
        ),
        # Two of three regions lost: the last voter's DOWN must still be down, quorum shrinks to 1.
        (
            regions(up(ago=600), up(ago=600), down()),
            None,
            DOWN,
            ("eu-west", "us-east"),
            "Down in ap-south (timeout); not reporting: eu-west, us-east",
        ),
        # The same with an explicit quorum of 3.
        (
            regions(up(ago=600), down(), down()),
            3,
            DOWN,
            ("eu-west",),
            "Down in ap-south, us-east (timeout); not reporting: eu-west",
        ),
        # Every region stale: nothing is known, so pending, saying for how long (from the newest result).
        (
            regions(up(ago=420), down(ago=400), up(ago=3600)),
            None,
            PENDING,
            ("ap-south", "eu-west", "us-east"),
            "No region has reported for 6 minutes",
        ),
        (regions(up(ago=3 * 3600)), None, PENDING, ("eu-west",), "No region has reported for 3 hours"),
        (regions(up(ago=3 * 86400)), None, PENDING, ("eu-west",), "No region has reported for 3 days"),
    ],
)
def test_a_region_that_stops_reporting(states, quorum, status, stale, reason):
    verdict = overall_verdict(regions=states, policy=HealthPolicy(quorum=quorum), paused=False, now=NOW)

    assert (verdict.status, verdict.stale_regions, verdict.reason) == (status, stale, reason)


@pytest.mark.parametrize(
    ("stale_after", "ago", "status"),
    [(timedelta(minutes=1), 61, PENDING), (timedelta(minutes=1), 60, DOWN), (timedelta(hours=1), 3000, DOWN)],
)
def test_stale_after_is_the_policy_s(stale_after, ago, status):
    policy = HealthPolicy(stale_after=stale_after)

    verdict = overall_verdict(regions=regions(down(ago=ago)), policy=policy, paused=False, now=NOW)

    assert verdict.status == status


@pytest.mark.parametrize(
    ("states", "threshold", "quorum", "status", "slow", "reason"),
    [
        # 2 of 3 regions over 800 ms reach the default quorum of 2.
        (
            regions(up(900), up(801), up(100)),
            800,
            None,
            DEGRADED,
            ("eu-west", "us-east"),
            "Slow in 2 of 3 regions (over 800 ms)",
        ),
        # Exactly at the threshold is not slow; one slow region is below the quorum.
        (regions(up(800), up(900), up(100)), 800, None, UP, ("us-east",), "Up in 3 regions"),
        # No threshold: nothing is slow.
        (regions(up(9000), up(9000), up(9000)), None, None, UP, (), "Up in 3 regions"),
        # Quorum 1 makes one slow region enough.
        (
            regions(up(900), up(100), up(100)),
            800,
            1,
            DEGRADED,
            ("eu-west",),
            "Slow in 1 of 3 regions (over 800 ms)",
        ),
        # A region with no response time is not slow.
        (regions(up(None), up(900), up(100)), 800, None, UP, ("us-east",), "Up in 3 regions"),
        # A down region is not slow; one down and one slow, each short of quorum, is degraded by the down one.
        (
            regions(down(), up(900), up(100)),
            800,
            None,
            DEGRADED,
            ("us-east",),
            "Down in 1 of 3 regions: eu-west (timeout)",
        ),
        # Both causes at once (quorum 2 of 4: one down, two slow) are both said.
        (
            {"a": down(), "b": up(900), "c": up(900), "d": up(100)},
            800,
            2,
            DEGRADED,
            ("b", "c"),
            "Down in 1 of 4 regions: a (timeout); slow in 2 of 4 regions (over 800 ms)",
        ),
        # Down reaching quorum wins over slowness.
        (
            regions(down(), down(), up(900)),
            800,
            None,
            DOWN,
            ("ap-south",),
            "Down in eu-west, us-east (timeout)",
        ),
        # A stale slow region does not vote; the quorum shrinks to the 2 voters, both slow.
        (
            regions(up(900, ago=600), up(900), up(900)),
            800,
            3,
            DEGRADED,
            ("ap-south", "us-east"),
            "Slow in 2 of 2 regions (over 800 ms); not reporting: eu-west",
        ),
    ],
)
def test_degraded_by_threshold(states, threshold, quorum, status, slow, reason):
    policy = HealthPolicy(quorum=quorum, degraded_threshold_ms=threshold)

    verdict = overall_verdict(regions=states, policy=policy, paused=False, now=NOW)

    assert (verdict.status, verdict.slow_regions, verdict.reason) == (status, slow, reason)


@pytest.mark.parametrize(
    "kwargs", [{"quorum": 0}, {"quorum": -1}, {"degraded_threshold_ms": -1}, {"stale_after": timedelta(0)}]
)
def test_health_policy_refuses_impossible_settings(kwargs):
    with pytest.raises(ValueError, match="must be"):
        HealthPolicy(**kwargs)


@pytest.mark.parametrize("status", [DEGRADED, PAUSED])
def test_region_state_is_only_pending_up_or_down(status):
    with pytest.raises(ValueError, match="pending, up or down"):
        RegionVote(status, NOW)


# --- tool_diff ----------------------------------------------------------------------------------


def tools(*specs: str) -> list[ToolInfo]:
    """Build tools from "name" or "name:input,input" (the inputs are required)."""
    built = []
    for spec in specs:
        name, _, inputs = spec.partition(":")
        built.append(ToolInfo(name, tuple(inputs.split(",")) if inputs else ()))
    return built


@pytest.mark.parametrize(
    ("previous", "current", "removed", "added", "new_inputs", "matters"),
    [
        (tools("a", "b"), tools("b", "a"), (), (), {}, False),
        # The first listing is all additions: not an event.
        ([], tools("b", "a"), (), ("a", "b"), {}, False),
        (tools("a"), tools("a", "c", "b"), (), ("b", "c"), {}, False),
        (tools("c", "a", "b"), tools("a"), ("b", "c"), (), {}, True),
        (tools("a", "b"), tools("a", "c"), ("b",), ("c",), {}, True),
        # A new required input on a kept tool matters; one dropped does not.
        (tools("search:q"), tools("search:q,limit,filter"), (), (), {"search": ("filter", "limit")}, True),
        (tools("search:q,limit"), tools("search:q"), (), (), {}, False),
        (tools("search"), tools("search:q"), (), (), {"search": ("q",)}, True),
        # Renaming an input is a new required input.
        (tools("search:q"), tools("search:query"), (), (), {"search": ("query",)}, True),
        # An added tool's inputs are not "new required inputs": the tool itself is new.
        (tools("a"), tools("a", "b:x"), (), ("b",), {}, False),
        # Duplicate names merge their inputs instead of hiding a change.
        (tools("a:x", "a:y"), tools("a:x,y"), (), (), {}, False),
        (tools("a:x", "a"), tools("a:x,z"), (), (), {"a": ("z",)}, True),
        (
            tools("z:p", "b", "a:p"),
            tools("a:p,q", "z:p,r"),
            ("b",),
            (),
            {"a": ("q",), "z": ("r",)},
            True,
        ),
    ],
)
def test_tool_diff(previous, current, removed, added, new_inputs, matters):
    diff = tool_diff(previous, current)

    assert diff == ToolDiff(removed=removed, added=added, new_required_inputs=new_inputs)
    assert list(diff.new_required_inputs) == sorted(new_inputs)
    assert diff.matters is matters


@pytest.mark.parametrize(
    ("previous", "current", "reason"),
    [
        (tools("a"), tools("a"), "No change"),
        (tools("a", "b", "c"), tools("a", "d"), "Removed: b, c; added: d"),
        (tools("s:q"), tools("s:q,k", "t"), "New required inputs: s (k); added: t"),
    ],
)
def test_tool_diff_reason(previous, current, reason):
    assert tool_diff(previous, current).reason == reason


# --- rollup_figures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("samples", "runs", "failures", "degraded", "uptime", "p50", "p95"),
    [
        ([], 0, 0, 0, None, None, None),
        ([(UP, 120.0)], 1, 0, 0, 1.0, 120.0, 120.0),
        ([(DOWN, None)], 1, 1, 0, 0.0, None, None),
        # Nearest rank: the median of an even count is the lower middle value, never an average.
        ([(UP, 40.0), (UP, 10.0), (UP, 30.0), (UP, 20.0)], 4, 0, 0, 1.0, 20.0, 40.0),
        ([(UP, float(ms)) for ms in range(1, 101)], 100, 0, 0, 1.0, 50.0, 95.0),
        # 20 values: 0.95 * 20 is rank 19 exactly, not rounded up to the maximum.
        ([(UP, float(ms)) for ms in range(1, 21)], 20, 0, 0, 1.0, 10.0, 19.0),
        ([(UP, float(ms)) for ms in range(1, 22)], 21, 0, 0, 1.0, 11.0, 20.0),
        # Degraded runs count as up for uptime; down runs are failures, with no response time.
        ([(UP, 100.0), (DEGRADED, 900.0), (DOWN, 10000.0), (DOWN, None)], 4, 2, 1, 0.5, 100.0, 900.0),
        # A refused connection's fraction of a millisecond is no speed.
        ([(DOWN, 0.2), (DOWN, 0.3), (UP, 80.0), (UP, 90.0)], 4, 2, 0, 0.5, 80.0, 90.0),
        ([(DOWN, 5.0)], 1, 1, 0, 0.0, None, None),
        # A NaN time is dropped rather than scrambling the order.
        ([(UP, float("nan")), (UP, 3.0)], 2, 0, 0, 1.0, 3.0, 3.0),
    ],
)
def test_rollup_figures(samples, runs, failures, degraded, uptime, p50, p95):
    figures = rollup_figures(iter(samples))

    assert (figures.runs, figures.failures, figures.degraded) == (runs, failures, degraded)
    assert figures.uptime == (pytest.approx(uptime) if uptime is not None else None)
    assert (figures.p50_ms, figures.p95_ms) == (p50, p95)


@pytest.mark.parametrize("status", [PENDING, PAUSED])
def test_rollup_figures_refuses_statuses_a_run_cannot_have(status):
    with pytest.raises(ValueError, match="up, degraded or down"):
        rollup_figures([(UP, 1.0), (status, 1.0)])


# --- Warnings: degraded runs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("states", "status", "warned", "reason"),
    [
        # Every region warns: degraded, naming the warning's kind.
        (
            regions(warns(), warns(), warns()),
            DEGRADED,
            {
                "ap-south": "certificate_expiring",
                "eu-west": "certificate_expiring",
                "us-east": "certificate_expiring",
            },
            "Warning in 3 of 3 regions: ap-south, eu-west, us-east (certificate_expiring)",
        ),
        # The quorum (2 of 3) warns: degraded.
        (
            regions(warns(), warns(), up()),
            DEGRADED,
            {"eu-west": "certificate_expiring", "us-east": "certificate_expiring"},
            "Warning in 2 of 3 regions: eu-west, us-east (certificate_expiring)",
        ),
        # One region of three warns: below the quorum, up (and the warning region is still named).
        (regions(warns(), up(), up()), UP, {"eu-west": "certificate_expiring"}, "Up in 3 regions"),
        # A down quorum outranks warnings.
        (
            regions(down(), down(), warns()),
            DOWN,
            {"ap-south": "certificate_expiring"},
            "Down in eu-west, us-east (timeout)",
        ),
    ],
)
def test_warning_regions_degrade_the_check_at_the_quorum(states, status, warned, reason):
    verdict = overall_verdict(regions=states, policy=HealthPolicy(), paused=False, now=NOW)

    assert (verdict.status, verdict.warned_regions, verdict.reason) == (status, warned, reason)
