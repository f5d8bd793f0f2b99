"""Check with tables when a slot's verdict is due, what silent regions do, and a failing check's cause."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitors.rules import (
    SETTLE_SLACK,
    Cause,
    HealthPolicy,
    RecheckPolicy,
    RegionVote,
    SlotCall,
    Verdict,
    cause_changed,
    cause_of,
    holds_split,
    overall_verdict,
    settle_window,
    slot_due,
)
from probes.types import Status

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
PENDING, UP, DEGRADED, DOWN = Status.PENDING, Status.UP, Status.DEGRADED, Status.DOWN
SETTLE = timedelta(seconds=45)
S0, S1, S2 = (NOW - timedelta(seconds=seconds) for seconds in (120, 60, 0))


def vote(status: Status, decided: datetime | None, *, ago: float = 1, kind: str = "") -> RegionVote:
    """Return a region's state: its status, the slot it decided last, its last result ``ago`` s ago."""
    return RegionVote(status, NOW - timedelta(seconds=ago), kind=kind or None, decided_slot=decided)


def waiting() -> RegionVote:
    """Return a region that has no result yet."""
    return RegionVote(PENDING, None)


def due(regions: dict[str, RegionVote], decided: datetime | None, *, now: datetime = NOW) -> SlotCall:
    return slot_due(regions=regions, decided=decided, policy=HealthPolicy(), settle=SETTLE, now=now)


@pytest.mark.parametrize(
    ("regions", "decided", "expected"),
    [
        # Every region decided S2: S2 is due, nobody is silent, nothing waits.
        ({"a": vote(UP, S2), "b": vote(DOWN, S2), "c": vote(UP, S2)}, S1, SlotCall(S2)),
        # One region still on S1 (awaiting its recheck of S2): S2 waits; S1 was decided already.
        (
            {"a": vote(DOWN, S2), "b": vote(UP, S1), "c": vote(DOWN, S2)},
            S1,
            SlotCall(None, settle_at=S2 + SETTLE),
        ),
        # ... but if S1 was not decided yet, the slot every region has decided is due now.
        (
            {"a": vote(DOWN, S2), "b": vote(UP, S1), "c": vote(DOWN, S2)},
            S0,
            SlotCall(S1, settle_at=S2 + SETTLE),
        ),
        # A new check: a region with no result yet is waiting, not absent.
        (
            {"a": vote(DOWN, S2), "b": waiting(), "c": waiting()},
            None,
            SlotCall(None, settle_at=S2 + SETTLE),
        ),
        # A region stale for longer than stale_after is not waited for.
        ({"a": vote(DOWN, S2), "b": vote(UP, S0, ago=600)}, S1, SlotCall(S2)),
        # Nothing newer than the decided slot: nothing is due, nothing waits.
        ({"a": vote(UP, S1), "b": vote(UP, S1)}, S1, SlotCall(None)),
        ({"a": waiting(), "b": waiting()}, None, SlotCall(None)),
        # Regions ahead of one another: the latest slot all have decided.
        ({"a": vote(UP, S2), "b": vote(UP, S1)}, S0, SlotCall(S1, settle_at=S2 + SETTLE)),
    ],
)
def test_a_slot_is_due_when_every_expected_region_decided_it(regions, decided, expected):
    assert due(regions, decided) == expected


@pytest.mark.parametrize(
    ("late", "expected"),
    [
        # One second before S1's window closes: still waiting for b.
        (SETTLE - timedelta(seconds=1), SlotCall(None, settle_at=S1 + SETTLE)),
        # At the close: S1 is decided without b, which is silent for it.
        (SETTLE, SlotCall(S1, ("b",))),
    ],
)
def test_a_silent_region_is_waited_for_until_the_settle_window_closes(late, expected):
    regions = {"a": vote(DOWN, S1), "b": vote(UP, S0, ago=90), "c": vote(DOWN, S1)}

    assert due(regions, S0, now=S1 + late) == expected


def test_an_overdue_slot_is_decided_while_a_later_one_keeps_waiting():
    regions = {"a": vote(DOWN, S1), "b": vote(UP, S0, ago=90), "c": vote(DOWN, S2)}

    assert due(regions, S0, now=S1 + SETTLE) == SlotCall(S1, ("b",), settle_at=S2 + SETTLE)


def test_a_complete_slot_beats_an_older_overdue_one():
    regions = {"a": vote(DOWN, S2), "b": vote(DOWN, S2)}

    assert due(regions, S0, now=S2 + SETTLE) == SlotCall(S2)


@pytest.mark.parametrize(
    ("timeout", "count", "delay", "window"),
    [(10, 2, 5, 3 * 10 + 2 * 5), (10, 0, 5, 10), (2.5, 1, 0, 5)],
)
def test_the_settle_window_covers_every_attempt_and_its_delay(timeout, count, delay, window):
    policy = RecheckPolicy(count=count, delay_seconds=delay)

    assert settle_window(timeout_seconds=timeout, recheck=policy) == timedelta(seconds=window) + SETTLE_SLACK


def test_silent_regions_do_not_vote_and_are_named():
    regions = {"a": vote(DOWN, S1, kind="connect"), "b": vote(UP, S0), "c": vote(UP, S0)}

    verdict = overall_verdict(
        regions=regions, policy=HealthPolicy(), paused=False, now=NOW, silent=("b", "c")
    )

    assert (verdict.status, verdict.quorum, verdict.silent_regions) == (DOWN, 1, ("b", "c"))
    assert verdict.reason == "Down in a (connect); not reporting: b, c"


# --- The cause ----------------------------------------------------------------------------------


def verdict(status: Status, failed: dict[str, str], slow: tuple[str, ...] = ()) -> Verdict:
    return Verdict(status, failed, slow, f"{status} because")


@pytest.mark.parametrize(
    ("status", "failed", "slow", "kind"),
    [
        (DOWN, {"a": "connect", "b": "connect", "c": "timeout"}, (), "connect"),
        # A tie goes to the first kind by name, so the cause does not flip between equal runs.
        (DOWN, {"a": "timeout", "b": "connect"}, (), "connect"),
        (DEGRADED, {"a": "missing_tools"}, (), "missing_tools"),
        (DEGRADED, {}, ("a", "b"), "slow"),
        (DOWN, {"a": ""}, (), ""),
    ],
)
def test_the_cause_kind_is_the_one_most_failing_regions_share(status, failed, slow, kind):
    cause = cause_of(verdict(status, failed, slow), ())

    assert cause is not None
    assert cause.kind == kind


@pytest.mark.parametrize(
    ("failed", "reasons", "reason"),
    [
        # The main kind's sentence, from the first region failing with it.
        (
            {"a": "timeout", "b": "missing_tools", "c": "missing_tools"},
            {"a": "Timed out", "b": "Required tools missing: search", "c": "Required tools missing: read"},
            "Required tools missing: search",
        ),
        # A region of the main kind without a sentence is passed over.
        ({"a": "connect", "b": "connect"}, {"a": "", "b": "Connection refused"}, "Connection refused"),
        # No sentence at all: the verdict's own.
        ({"a": "connect"}, {}, "down because"),
    ],
)
def test_the_cause_reason_is_the_main_kind_s_own_sentence(failed, reasons, reason):
    cause = cause_of(verdict(DOWN, failed), (), reasons)

    assert cause is not None
    assert cause.reason == reason


def test_a_cause_degraded_by_slowness_alone_says_so_in_the_verdict_s_words():
    cause = cause_of(Verdict(DEGRADED, {}, ("a", "b"), "Slow in 2 of 3 regions (over 500 ms)"), (), {})

    assert cause == Cause("slow", "Slow in 2 of 3 regions (over 500 ms)", {}, ())


def test_a_cause_degraded_by_warnings_alone_is_the_warning_regions_own():
    warned = {"a": "certificate_expiring", "b": "certificate_expiring"}
    degraded = Verdict(DEGRADED, {}, (), "Warning in 2 of 2 regions", warned_regions=warned)

    cause = cause_of(
        degraded, (), {"a": "Certificate expires in 3 days", "b": "Certificate expires in 3 days"}
    )

    assert cause == Cause("certificate_expiring", "Certificate expires in 3 days", warned, ())


@pytest.mark.parametrize("status", [UP, PENDING, Status.PAUSED])
def test_only_a_failing_verdict_has_a_cause(status):
    assert cause_of(verdict(status, {}), ()) is None


def cause(kinds: dict[str, str], missing: tuple[str, ...] = ()) -> Cause:
    return Cause("x", "reason", kinds, missing)


@pytest.mark.parametrize(
    ("previous", "current", "changed"),
    [
        # Connection refused, then the server is back but a required tool is missing: a new cause.
        (cause({"a": "connect"}), cause({"a": "missing_tools"}, ("search",)), True),
        (cause({"a": "missing_tools"}, ("search",)), cause({"a": "missing_tools"}, ("read", "search")), True),
        # Another region failing the same way is the same cause.
        (cause({"a": "connect"}), cause({"a": "connect", "b": "connect"}), False),
        (cause({"a": "connect"}), cause({"a": "connect"}), False),
        # Starting or ending a failure is a status change, not a cause change.
        (None, cause({"a": "connect"}), False),
        (cause({"a": "connect"}), None, False),
    ],
)
def test_a_cause_changes_with_its_kinds_or_missing_tools(previous, current, changed):
    assert cause_changed(previous, current) is changed


# --- A slot split across an outage's edge (holds_split) ---------------------------------------

SPLIT = Verdict(Status.DEGRADED, {"eu-west": "connect"}, (), "Down in 1 of 3 regions: eu-west (connect)")
SLOW_ONLY = Verdict(Status.DEGRADED, {}, ("eu-west",), "Slow in eu-west")


@pytest.mark.parametrize(
    ("verdict", "current", "held_last", "held"),
    [
        (SPLIT, Status.UP, False, True),
        (SPLIT, Status.DOWN, False, True),
        # Never two slots in a row: a partial outage that lasts is told.
        (SPLIT, Status.UP, True, False),
        # Already degraded, or no status yet: nothing to protect.
        (SPLIT, Status.DEGRADED, False, False),
        (SPLIT, Status.PENDING, False, False),
        # Slowness is no edge: every region saw the same server.
        (SLOW_ONLY, Status.UP, False, False),
        (
            Verdict(Status.DOWN, {"eu-west": "connect", "us-east": "connect"}, (), "Down"),
            Status.UP,
            False,
            False,
        ),
        (Verdict(Status.UP, {}, (), "Up"), Status.DOWN, False, False),
    ],
)
def test_a_split_verdict_is_held_once_at_an_outages_edge(verdict, current, held_last, held):
    assert holds_split(verdict=verdict, current=current, held_last=held_last) is held
