"""Check outcomes_record: idempotent results, rechecks, quorum, status changes and tool-list events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitors.models import (
    CauseChange,
    Healthcheck,
    ProbeResult,
    RegionState,
    SlotVerdict,
    StatusChange,
    ToolChange,
    ToolList,
)
from monitors.services import (
    Recheck,
    RunResult,
    healthcheck_create,
    healthcheck_delete,
    healthcheck_pause,
    outcomes_record,
    verdicts_settle,
)
from probes.checks.mcp import MCP
from probes.types import (
    Access,
    FailureKind,
    ProbeOutcome,
    ServerInfo,
    Status,
    Timings,
    ToolInfo,
    Transport,
)

SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
REGIONS = ("ap-southeast", "eu-west", "us-east")
TOOLS = (ToolInfo("search_docs", ("query",)), ToolInfo("read_page", ("url",)))


def up(ms: float = 120.0, *, tools: tuple[ToolInfo, ...] = TOOLS, digest: str = "d-two") -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(dns_ms=1.0, tcp_ms=2.0, ttfb_ms=50.0, total_ms=ms),
        http_status=200,
        server=ServerInfo("docs", "1.2"),
        protocol="2025-06-18",
        access=Access.OPEN,
        tools=tools,
        tool_count=len(tools),
        tool_digest=digest,
        transport=Transport.STREAMABLE_HTTP,
    )


def down(
    kind: FailureKind = FailureKind.TIMEOUT, reason: str = "Timed out after 10 s", **extra
) -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.DOWN, kind=kind, reason=reason, timings=Timings(total_ms=10_000.0), **extra
    )


def missing(*names: str) -> ProbeOutcome:
    kept = tuple(tool for tool in TOOLS if tool.name not in names)
    return ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.MISSING_TOOLS,
        reason=f"Required tools missing: {', '.join(names)}",
        timings=Timings(total_ms=90.0),
        tools=kept,
        tool_count=len(kept),
        tool_digest="d-" + "-".join(tool.name for tool in kept),
        missing_tools=names,
    )


@pytest.fixture
def make(org, now):
    def make(**rules) -> Healthcheck:
        regions = rules.pop("regions", REGIONS)
        return healthcheck_create(
            organization=org,
            name="docs",
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp", "requiredTools": ["search_docs", "read_page"]},
            now=now,
            region_slugs=regions,
            rules=rules,
        )

    return make


def record(
    healthcheck: Healthcheck, region: str, outcome: ProbeOutcome, *, slot: datetime = SLOT, attempt: int = 0
) -> list[Recheck]:
    """Record one run; it was checked a second after its slot (plus rechecks) and recorded a second later."""
    checked_at = slot + timedelta(seconds=1 + 5 * attempt)
    return outcomes_record(
        region_slug=region,
        results=[RunResult(healthcheck.id, slot, attempt, outcome, checked_at)],
        now=checked_at + timedelta(seconds=1),
    )


def record_everywhere(healthcheck: Healthcheck, outcome: ProbeOutcome, *, slot: datetime = SLOT) -> None:
    for region in REGIONS:
        record(healthcheck, region, outcome, slot=slot)


def record_slot(
    healthcheck: Healthcheck, outcomes: dict[str, ProbeOutcome], *, slot: datetime = SLOT
) -> None:
    """Record one slot's run in each region, in the order given; the other regions report up."""
    for region in REGIONS:
        record(healthcheck, region, outcomes.get(region, up()), slot=slot)


def go_down(healthcheck: Healthcheck, region: str, outcome: ProbeOutcome, *, slot: datetime = SLOT) -> None:
    """Fail the scheduled run and every recheck, so the region counts as down."""
    for attempt in range(healthcheck.recheck_count + 1):
        record(healthcheck, region, outcome, slot=slot, attempt=attempt)


def status_of(healthcheck: Healthcheck) -> str:
    healthcheck.refresh_from_db()
    return healthcheck.status


def region_status(healthcheck: Healthcheck, region: str) -> str:
    return RegionState.objects.get(healthcheck=healthcheck, region__slug=region).status


def changes(healthcheck: Healthcheck) -> list[tuple[str, str]]:
    return [(c.from_status, c.to_status) for c in healthcheck.status_changes.order_by("id")]


NEXT = SLOT + timedelta(minutes=1)
AFTER_NEXT = SLOT + timedelta(minutes=2)


# --- results ----------------------------------------------------------------------------------


def test_a_result_is_stored_with_the_engine_fields(make):
    healthcheck = make()

    record(healthcheck, "eu-west", up(ms=150.0))

    result = ProbeResult.objects.get(healthcheck=healthcheck)
    assert (result.region.slug, result.slot, result.attempt, result.status) == ("eu-west", SLOT, 0, "up")
    assert (result.server_name, result.server_version, result.protocol) == ("docs", "1.2", "2025-06-18")
    assert (result.access, result.transport, result.http_status) == ("open", "streamable-http", 200)
    assert (result.tool_count, result.tool_digest, result.total_ms, result.ttfb_ms) == (
        2,
        "d-two",
        150.0,
        50.0,
    )
    assert result.checked_at == SLOT + timedelta(seconds=1)


def test_a_failed_result_stores_its_kind_reason_and_missing_tools(make):
    healthcheck = make()

    record(healthcheck, "eu-west", missing("read_page"))

    result = ProbeResult.objects.get(healthcheck=healthcheck)
    assert (result.status, result.kind) == ("down", "missing_tools")
    assert result.missing_tools == ["read_page"]
    assert result.reason == "Required tools missing: read_page"


def test_recording_the_same_batch_twice_inserts_nothing_twice(make):
    healthcheck = make()
    batch = [RunResult(healthcheck.id, SLOT, 0, up(), SLOT + timedelta(seconds=1))]

    outcomes_record(region_slug="eu-west", results=batch, now=SLOT + timedelta(seconds=2))
    outcomes_record(region_slug="eu-west", results=batch, now=SLOT + timedelta(seconds=30))

    assert ProbeResult.objects.filter(healthcheck=healthcheck).count() == 1


def test_recording_the_same_batch_twice_changes_no_state_twice(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())
    batch = [RunResult(healthcheck.id, NEXT, 0, down(), NEXT + timedelta(seconds=1))]
    outcomes_record(region_slug="eu-west", results=batch, now=NEXT + timedelta(seconds=2))
    state_before = RegionState.objects.get(healthcheck=healthcheck, region__slug="eu-west")
    changes_before = changes(healthcheck)

    again = outcomes_record(region_slug="eu-west", results=batch, now=NEXT + timedelta(seconds=40))

    state_after = RegionState.objects.get(healthcheck=healthcheck, region__slug="eu-west")
    assert again == []
    assert changes(healthcheck) == changes_before
    assert (state_after.status, state_after.since, state_after.last_result_at) == (
        state_before.status,
        state_before.since,
        state_before.last_result_at,
    )


def test_a_redelivered_recheck_asks_for_no_second_recheck(make):
    healthcheck = make()
    record_everywhere(healthcheck, up())

    first = record(healthcheck, "eu-west", down(), slot=NEXT)
    again = record(healthcheck, "eu-west", down(), slot=NEXT)

    assert len(first) == 1
    assert again == []


def test_an_older_run_arriving_late_changes_nothing(make):
    healthcheck = make(recheck_count=0)
    record(healthcheck, "eu-west", up(), slot=NEXT)

    record(healthcheck, "eu-west", down(), slot=SLOT)  # stored, but overtaken by the newer slot

    assert ProbeResult.objects.filter(healthcheck=healthcheck).count() == 2
    assert region_status(healthcheck, "eu-west") == "up"


def test_a_result_for_a_deleted_healthcheck_is_ignored(make):
    kept, gone = make(), make()
    gone_id = gone.id
    healthcheck_delete(healthcheck=gone)

    rechecks = outcomes_record(
        region_slug="eu-west",
        results=[
            RunResult(gone_id, SLOT, 0, down(), SLOT + timedelta(seconds=1)),
            RunResult(kept.id, SLOT, 0, up(), SLOT + timedelta(seconds=1)),
        ],
        now=SLOT + timedelta(seconds=2),
    )

    assert rechecks == []
    assert list(ProbeResult.objects.values_list("healthcheck_id", flat=True)) == [kept.id]
    assert not RegionState.objects.filter(healthcheck_id=gone_id).exists()


def test_an_empty_batch_records_nothing(make):
    assert outcomes_record(region_slug="eu-west", results=[], now=SLOT) == []
    assert not ProbeResult.objects.exists()


# --- rechecks ---------------------------------------------------------------------------------


def test_a_failure_in_a_region_that_was_up_asks_for_a_recheck_with_the_checks_delay(make):
    healthcheck = make(recheck_delay_seconds=9)
    record_everywhere(healthcheck, up())

    rechecks = record(healthcheck, "eu-west", down(), slot=NEXT)

    assert rechecks == [Recheck(healthcheck.id, NEXT, 1, 9.0)]


def test_a_failure_awaiting_its_recheck_changes_no_status(make):
    healthcheck = make()
    record_everywhere(healthcheck, up())

    record(healthcheck, "eu-west", down(), slot=NEXT)

    assert region_status(healthcheck, "eu-west") == "up"
    assert status_of(healthcheck) == "up"
    assert changes(healthcheck) == [("pending", "up")]


def test_each_failed_recheck_asks_for_the_next_until_the_count(make):
    healthcheck = make(recheck_count=2)
    record_everywhere(healthcheck, up())

    asked = [record(healthcheck, "eu-west", down(), slot=NEXT, attempt=attempt) for attempt in range(3)]

    assert [[r.attempt for r in rechecks] for rechecks in asked] == [[1], [2], []]


def test_after_the_failed_rechecks_the_region_is_down(make):
    healthcheck = make(recheck_count=2)
    record_everywhere(healthcheck, up())

    go_down(healthcheck, "eu-west", down(), slot=NEXT)

    assert region_status(healthcheck, "eu-west") == "down"


def test_a_recheck_that_succeeds_keeps_the_region_up_and_changes_nothing(make):
    healthcheck = make()
    record_everywhere(healthcheck, up())

    record(healthcheck, "eu-west", down(), slot=NEXT)
    rechecks = record(healthcheck, "eu-west", up(), slot=NEXT, attempt=1)

    assert rechecks == []
    assert region_status(healthcheck, "eu-west") == "up"
    assert changes(healthcheck) == [("pending", "up")]


def test_a_region_already_down_is_not_rechecked(make):
    healthcheck = make(recheck_count=1)
    go_down(healthcheck, "eu-west", down())

    assert record(healthcheck, "eu-west", down(), slot=NEXT) == []


def test_with_no_rechecks_the_first_failure_counts(make):
    healthcheck = make(recheck_count=0, regions=["eu-west"])
    record(healthcheck, "eu-west", up())

    rechecks = record(healthcheck, "eu-west", down(), slot=NEXT)

    assert rechecks == []
    assert status_of(healthcheck) == "down"


def test_a_failing_run_awaiting_its_recheck_does_not_make_the_check_slow(make):
    # The region still counts as up; the time of the run that failed is not its response time.
    healthcheck = make(degraded_threshold_ms=500, regions=["eu-west"])
    record(healthcheck, "eu-west", up(ms=100.0))

    record(healthcheck, "eu-west", down(), slot=NEXT)

    assert status_of(healthcheck) == "up"
    assert changes(healthcheck) == [("pending", "up")]


# --- the overall verdict ---------------------------------------------------------------------


def test_the_first_results_make_a_pending_check_up(make):
    healthcheck = make()

    record_everywhere(healthcheck, up())

    assert status_of(healthcheck) == "up"
    assert changes(healthcheck) == [("pending", "up")]


@pytest.mark.parametrize(
    ("quorum", "regions_down", "expected"),
    [
        (None, 1, "degraded"),  # default quorum of 3 regions is 2
        (None, 2, "down"),
        (None, 3, "down"),
        (1, 1, "down"),
        (3, 2, "degraded"),
        (3, 3, "down"),
    ],
)
def test_the_quorum_decides_down_or_degraded(make, quorum, regions_down, expected):
    healthcheck = make(quorum=quorum, recheck_count=0)
    record_everywhere(healthcheck, up())

    # Two slots: a split slot is held for the next (rules.holds_split).
    record_slot(healthcheck, dict.fromkeys(REGIONS[:regions_down], down()), slot=NEXT)
    record_slot(healthcheck, dict.fromkeys(REGIONS[:regions_down], down()), slot=AFTER_NEXT)

    assert status_of(healthcheck) == expected


def test_a_status_change_records_from_to_reason_and_failed_regions(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())

    record_slot(
        healthcheck,
        {"eu-west": down(FailureKind.TIMEOUT), "us-east": down(FailureKind.CONNECT, "Connection refused")},
        slot=NEXT,
    )

    change = healthcheck.status_changes.order_by("-id").first()
    assert (change.from_status, change.to_status) == ("up", "down")
    assert change.failed_regions == {"eu-west": "timeout", "us-east": "connect"}
    assert change.reason == "Down in eu-west (timeout), us-east (connect)"
    assert change.at == NEXT + timedelta(seconds=2)
    assert change.missing_tools == []


@pytest.mark.parametrize(
    ("before", "split_at_next", "after", "expected"),
    [
        # A server that stops during a slot: up -> down, never through degraded.
        (up, "outage", down, [("pending", "up"), ("up", "down")]),
        # One that comes back during a slot: down -> up.
        (down, "recovery", up, [("pending", "down"), ("down", "up")]),
        # A one-slot blip in one region changes nothing.
        (up, "outage", up, [("pending", "up")]),
    ],
)
def test_a_slot_split_across_an_outages_edge_is_held_for_the_next(
    make, before, split_at_next, after, expected
):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, before())

    # At NEXT, one region checked after the outage began and the others before it; or, as it
    # ended, one region before and the others after.
    if split_at_next == "outage":
        record_slot(healthcheck, {"us-east": down()}, slot=NEXT)
    else:
        record_slot(healthcheck, {"eu-west": down(), "us-east": up(), "ap-southeast": up()}, slot=NEXT)
    assert status_of(healthcheck) == before().status
    record_everywhere(healthcheck, after(), slot=AFTER_NEXT)

    assert changes(healthcheck) == expected


def test_a_partial_outage_that_lasts_is_degraded_one_slot_later(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())

    record_slot(healthcheck, {"eu-west": down()}, slot=NEXT)
    assert status_of(healthcheck) == "up"
    record_slot(healthcheck, {"eu-west": down()}, slot=AFTER_NEXT)

    assert status_of(healthcheck) == "degraded"


def test_a_degraded_status_change_names_the_one_failed_region(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())

    record_slot(healthcheck, {"eu-west": down()}, slot=NEXT)
    record_slot(healthcheck, {"eu-west": down()}, slot=AFTER_NEXT)

    change = healthcheck.status_changes.order_by("-id").first()
    assert (change.from_status, change.to_status) == ("up", "degraded")
    assert change.failed_regions == {"eu-west": "timeout"}
    assert change.reason == "Down in 1 of 3 regions: eu-west (timeout)"


def test_a_missing_tools_failure_lists_the_missing_tools_in_the_status_change(make):
    healthcheck = make(recheck_count=0, quorum=3)
    record_everywhere(healthcheck, up())

    record_everywhere(healthcheck, missing("read_page"), slot=NEXT)

    change = healthcheck.status_changes.order_by("-id").first()
    assert (change.from_status, change.to_status) == ("up", "down")
    assert change.missing_tools == ["read_page"]
    assert change.failed_regions == dict.fromkeys(REGIONS, "missing_tools")


def test_down_after_rechecks_makes_one_status_change(make):
    healthcheck = make(recheck_count=2, regions=["eu-west"])
    record(healthcheck, "eu-west", up())

    go_down(healthcheck, "eu-west", down(), slot=NEXT)

    assert changes(healthcheck) == [("pending", "up"), ("up", "down")]


def test_recovery_makes_a_status_change_back_to_up_with_a_reason(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())
    record_everywhere(healthcheck, down(), slot=NEXT)

    later = NEXT + timedelta(minutes=1)
    record_everywhere(healthcheck, up(), slot=later)

    # Each region records its own batch, but a slot has one verdict: no degraded on the way.
    assert changes(healthcheck) == [("pending", "up"), ("up", "down"), ("down", "up")]
    change = healthcheck.status_changes.order_by("-id").first()
    assert change.reason == "Up in 3 regions"
    assert change.failed_regions == {}
    assert status_of(healthcheck) == "up"


def test_recovery_in_a_single_region_check_goes_straight_back_to_up(make):
    healthcheck = make(recheck_count=0, regions=["eu-west"])
    record(healthcheck, "eu-west", down())

    record(healthcheck, "eu-west", up(), slot=NEXT)

    assert changes(healthcheck) == [("pending", "down"), ("down", "up")]


def test_the_status_changed_at_follows_the_change(make):
    healthcheck = make(recheck_count=0, regions=["eu-west"])

    record(healthcheck, "eu-west", up())

    healthcheck.refresh_from_db()
    assert healthcheck.status_changed_at == SLOT + timedelta(seconds=2)


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ((800.0, 900.0, 100.0), "degraded"),  # 2 of 3 slow reach the default quorum
        ((800.0, 100.0, 100.0), "up"),
        ((500.0, 500.0, 500.0), "up"),  # at the threshold is not above it
    ],
)
def test_slow_responses_in_a_quorum_of_regions_make_the_check_degraded(make, times, expected):
    healthcheck = make(degraded_threshold_ms=500)

    for region, ms in zip(REGIONS, times, strict=True):
        record(healthcheck, region, up(ms=ms))

    assert status_of(healthcheck) == expected


def test_a_degraded_by_threshold_change_says_slow(make):
    healthcheck = make(degraded_threshold_ms=500)
    record_everywhere(healthcheck, up(ms=100.0))

    record_everywhere(healthcheck, up(ms=900.0), slot=NEXT)

    change = healthcheck.status_changes.order_by("-id").first()
    assert (change.from_status, change.to_status) == ("up", "degraded")
    assert change.reason == "Slow in 3 of 3 regions (over 500 ms)"


def test_a_paused_check_stays_paused_whatever_results_arrive(make, now):
    healthcheck = make(recheck_count=0)
    healthcheck_pause(healthcheck=healthcheck, now=now)

    record_everywhere(healthcheck, down())

    assert status_of(healthcheck) == "paused"
    assert [change.to_status for change in healthcheck.status_changes.all()] == ["paused"]


def test_two_checks_reporting_in_one_batch_each_decide_once(make):
    healthcheck = make(recheck_count=0, regions=["eu-west"])
    other = make(recheck_count=0, regions=["eu-west"])
    checked = SLOT + timedelta(seconds=1)

    outcomes_record(
        region_slug="eu-west",
        results=[
            RunResult(healthcheck.id, SLOT, 0, up(), checked),
            RunResult(other.id, SLOT, 0, down(), checked),
        ],
        now=checked,
    )

    assert status_of(healthcheck) == "up"
    assert status_of(other) == "down"
    assert StatusChange.objects.count() == 2


# --- tool lists ------------------------------------------------------------------------------


def test_the_first_tool_list_is_stored_without_a_change_event(make):
    healthcheck = make()

    record(healthcheck, "eu-west", up())

    (tool_list,) = ToolList.objects.filter(healthcheck=healthcheck)
    assert tool_list.digest == "d-two"
    assert tool_list.tools == [
        {"name": "search_docs", "required_inputs": ["query"]},
        {"name": "read_page", "required_inputs": ["url"]},
    ]
    assert not ToolChange.objects.exists()
    healthcheck.refresh_from_db()
    assert healthcheck.tool_digest == "d-two"


def test_a_tool_list_is_stored_once_per_digest(make):
    healthcheck = make()

    record_everywhere(healthcheck, up())
    record_everywhere(healthcheck, up(), slot=NEXT)

    assert ToolList.objects.filter(healthcheck=healthcheck).count() == 1


def test_a_tool_removed_while_up_makes_a_tool_change(make):
    healthcheck = make()
    record_everywhere(healthcheck, up())
    fewer = (ToolInfo("search_docs", ("query",)),)

    record(healthcheck, "us-east", up(tools=fewer, digest="d-one"), slot=NEXT)

    (change,) = ToolChange.objects.filter(healthcheck=healthcheck)
    assert (change.removed, change.added, change.new_required_inputs) == (["read_page"], [], {})
    assert (change.previous_digest, change.digest, change.region.slug) == ("d-two", "d-one", "us-east")
    assert change.at == NEXT + timedelta(seconds=2)
    assert status_of(healthcheck) == "up"


def test_a_new_required_input_makes_a_tool_change(make):
    healthcheck = make()
    record(healthcheck, "eu-west", up())
    stricter = (ToolInfo("search_docs", ("query", "lang")), ToolInfo("read_page", ("url",)))

    record(healthcheck, "eu-west", up(tools=stricter, digest="d-strict"), slot=NEXT)

    (change,) = ToolChange.objects.filter(healthcheck=healthcheck)
    assert change.new_required_inputs == {"search_docs": ["lang"]}
    assert change.removed == []


def test_added_tools_alone_make_no_tool_change_but_are_stored(make):
    healthcheck = make()
    record(healthcheck, "eu-west", up())
    more = (*TOOLS, ToolInfo("list_pages"))

    record(healthcheck, "eu-west", up(tools=more, digest="d-three"), slot=NEXT)

    assert not ToolChange.objects.exists()
    assert set(ToolList.objects.filter(healthcheck=healthcheck).values_list("digest", flat=True)) == {
        "d-two",
        "d-three",
    }
    healthcheck.refresh_from_db()
    assert healthcheck.tool_digest == "d-three"


def test_a_failed_run_without_tools_is_not_a_tool_change(make):
    healthcheck = make(recheck_count=0)
    record(healthcheck, "eu-west", up())

    record(healthcheck, "eu-west", down(), slot=NEXT)

    assert not ToolChange.objects.exists()
    healthcheck.refresh_from_db()
    assert healthcheck.tool_digest == "d-two"


def test_a_tool_change_is_recorded_once_when_every_region_sees_it(make):
    healthcheck = make()
    record_everywhere(healthcheck, up())
    fewer = (ToolInfo("search_docs", ("query",)),)

    record_everywhere(healthcheck, up(tools=fewer, digest="d-one"), slot=NEXT)

    assert ToolChange.objects.filter(healthcheck=healthcheck).count() == 1


def test_a_missing_tool_is_both_a_tool_change_and_a_status_change(make):
    healthcheck = make(recheck_count=0, regions=["eu-west"])
    record(healthcheck, "eu-west", up())

    record(healthcheck, "eu-west", missing("read_page"), slot=NEXT)

    assert ToolChange.objects.get(healthcheck=healthcheck).removed == ["read_page"]
    assert changes(healthcheck)[-1] == ("up", "down")


# --- one verdict per slot ---------------------------------------------------------------------


def test_a_full_outage_with_rechecks_goes_from_up_to_down_without_degraded(make):
    healthcheck = make(recheck_count=2)
    record_everywhere(healthcheck, up())

    # The regions' attempts interleave, as their workers' batches do.
    for attempt in range(3):
        for region in REGIONS:
            record(healthcheck, region, down(), slot=NEXT, attempt=attempt)

    assert changes(healthcheck) == [("pending", "up"), ("up", "down")]


def test_a_region_awaiting_its_recheck_holds_the_slot_s_verdict(make):
    healthcheck = make(recheck_count=1)
    record_everywhere(healthcheck, up())
    record(healthcheck, "eu-west", down(), slot=NEXT)
    record(healthcheck, "us-east", down(), slot=NEXT)
    record(healthcheck, "ap-southeast", up(), slot=NEXT)
    record(healthcheck, "eu-west", down(), slot=NEXT, attempt=1)

    # us-east's recheck is still out: nothing is decided, not even "down in 1 of 3".
    assert changes(healthcheck) == [("pending", "up")]

    record(healthcheck, "us-east", down(), slot=NEXT, attempt=1)

    assert changes(healthcheck) == [("pending", "up"), ("up", "down")]


def test_a_new_check_waits_for_every_region_s_first_result(make):
    healthcheck = make(recheck_count=0)

    record(healthcheck, "eu-west", down())
    record(healthcheck, "us-east", down())

    assert status_of(healthcheck) == "pending"

    record(healthcheck, "ap-southeast", up())

    assert changes(healthcheck) == [("pending", "down")]


def slot_verdict(healthcheck: Healthcheck) -> tuple[datetime | None, datetime | None]:
    """Return the check's (verdict slot, settle time), both None before its first result."""
    row = SlotVerdict.objects.filter(healthcheck=healthcheck).first()
    return (row.slot, row.settle_at) if row else (None, None)


def settle(healthcheck: Healthcheck, *, after: timedelta = timedelta(0)) -> int:
    """Run the settle pass at the check's settle_at plus ``after``."""
    _, settle_at = slot_verdict(healthcheck)
    assert settle_at is not None
    return verdicts_settle(now=settle_at + after)


def test_a_slot_one_region_never_reports_is_decided_when_its_settle_window_closes(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())
    record(healthcheck, "eu-west", down(), slot=NEXT)
    record(healthcheck, "us-east", down(), slot=NEXT)

    assert settle(healthcheck, after=-timedelta(seconds=1)) == 0
    assert status_of(healthcheck) == "up"

    assert settle(healthcheck) == 1

    change = healthcheck.status_changes.order_by("-id").first()
    assert (change.from_status, change.to_status) == ("up", "down")
    assert change.reason == "Down in eu-west, us-east (timeout); not reporting: ap-southeast"
    assert slot_verdict(healthcheck) == (NEXT, None)


def test_the_settle_window_is_the_check_s_attempts_and_slack(make):
    healthcheck = make(recheck_count=2, recheck_delay_seconds=5)

    record(healthcheck, "eu-west", up())

    # 3 attempts of the default 10 s timeout, 2 delays of 5 s, 10 s of slack.
    assert slot_verdict(healthcheck) == (None, SLOT + timedelta(seconds=50))


def test_a_region_reporting_late_after_the_settle_changes_nothing_for_that_slot(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())
    record(healthcheck, "eu-west", down(), slot=NEXT)
    record(healthcheck, "us-east", down(), slot=NEXT)
    settle(healthcheck)

    record(healthcheck, "ap-southeast", up(), slot=NEXT)

    assert changes(healthcheck) == [("pending", "up"), ("up", "down")]


def test_the_settle_pass_leaves_a_slot_still_inside_its_window(make):
    healthcheck = make(recheck_count=0)
    record(healthcheck, "eu-west", up())

    assert verdicts_settle(now=SLOT + timedelta(seconds=5)) == 0
    assert status_of(healthcheck) == "pending"


# --- the current cause -------------------------------------------------------------------------


def test_a_down_check_carries_its_cause(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())

    record_everywhere(healthcheck, down(FailureKind.CONNECT, "Connection refused"), slot=NEXT)

    healthcheck.refresh_from_db()
    assert healthcheck.cause_kind == "connect"
    assert healthcheck.cause_reason == "Connection refused"
    assert healthcheck.cause_regions == dict.fromkeys(REGIONS, "connect")
    assert healthcheck.cause_missing_tools == []
    assert healthcheck.cause_since == NEXT + timedelta(seconds=2)


def test_a_degraded_run_everywhere_degrades_the_check_with_the_warning_as_its_cause(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())
    expiring = ProbeOutcome(
        status=Status.DEGRADED,
        kind=FailureKind.CERTIFICATE_EXPIRING,
        reason="Certificate expires in 3 days",
        details={"certificate": {"serial": "0a1b", "days_left": 3}},
    )

    record_everywhere(healthcheck, expiring, slot=NEXT)

    healthcheck.refresh_from_db()
    assert (healthcheck.status, healthcheck.cause_kind, healthcheck.cause_reason) == (
        "degraded",
        "certificate_expiring",
        "Certificate expires in 3 days",
    )
    latest = healthcheck.results.order_by("-slot").first()
    assert latest is not None
    assert (latest.status, latest.details) == (
        "degraded",
        {"certificate": {"serial": "0a1b", "days_left": 3}},
    )


def test_a_result_s_details_are_stored_without_nul_or_lone_surrogates(make):
    healthcheck = make(recheck_count=0)

    # PostgreSQL's jsonb refuses \u0000: one such text would fail its whole group's insert.
    record_everywhere(
        healthcheck, ProbeOutcome(status=Status.UP, details={"re\x00ply": ["a\x00b", "\ud800"]})
    )

    latest = healthcheck.results.first()
    assert latest is not None
    assert latest.details == {"reply": ["ab", "\ufffd"]}


def test_a_result_keeps_at_most_16_kib_of_details(make):
    healthcheck = make(recheck_count=0)

    record_everywhere(healthcheck, ProbeOutcome(status=Status.UP, details={"answer": ["x" * 1000] * 40}))

    latest = healthcheck.results.first()
    assert latest is not None
    assert latest.details["omitted"].startswith("The details were ")


def test_a_status_change_carries_the_cause_it_was_decided_with(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up())

    record_everywhere(healthcheck, down(FailureKind.CONNECT, "Connection refused"), slot=NEXT)
    record_everywhere(healthcheck, up(), slot=NEXT + timedelta(seconds=60))

    causes = list(
        healthcheck.status_changes.order_by("id").values_list("to_status", "cause_kind", "cause_reason")
    )
    assert causes == [("up", "", ""), ("down", "connect", "Connection refused"), ("up", "", "")]


def test_a_changed_cause_while_down_is_a_cause_change(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, down(FailureKind.CONNECT, "Connection refused"))

    # The server is back, but a required tool is missing: still down, for another reason.
    record_everywhere(healthcheck, missing("read_page"), slot=NEXT)

    assert changes(healthcheck) == [("pending", "down")]
    (change,) = CauseChange.objects.filter(healthcheck=healthcheck)
    assert (change.status, change.from_kind, change.to_kind) == ("down", "connect", "missing_tools")
    assert change.missing_tools == ["read_page"]
    assert change.previous_reason == "Connection refused"
    assert change.reason == "Required tools missing: read_page"
    healthcheck.refresh_from_db()
    assert (healthcheck.cause_kind, healthcheck.cause_missing_tools) == ("missing_tools", ["read_page"])
    assert healthcheck.cause_since == NEXT + timedelta(seconds=2)


def test_the_same_cause_in_the_next_slot_is_no_event_and_keeps_its_since(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, down(FailureKind.CONNECT))

    record_everywhere(healthcheck, down(FailureKind.CONNECT), slot=NEXT)

    assert not CauseChange.objects.exists()
    healthcheck.refresh_from_db()
    assert healthcheck.cause_since == SLOT + timedelta(seconds=2)


def test_recovery_clears_the_cause(make):
    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, down(FailureKind.CONNECT))

    record_everywhere(healthcheck, up(), slot=NEXT)

    healthcheck.refresh_from_db()
    assert (healthcheck.cause_kind, healthcheck.cause_regions, healthcheck.cause_since) == ("", {}, None)
    assert not CauseChange.objects.exists()


# --- PostgreSQL: regions recording at once ---------------------------------------------------


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.services
def test_postgresql_regions_recording_at_once_see_each_other(postgres, make):
    # Each batch locks its healthchecks (in id order, so no deadlock) before reading the other
    # regions' states: without it, three regions would each see the others pending and each
    # write its own pending -> up change.
    import threading

    from django.db import connection

    checks = [make(recheck_count=0) for _ in range(40)]
    barrier = threading.Barrier(len(REGIONS))
    errors: list[BaseException] = []

    def region_batch(region: str) -> None:
        try:
            barrier.wait()
            checked = SLOT + timedelta(seconds=1)
            outcomes_record(
                region_slug=region,
                results=[RunResult(hc.id, SLOT, 0, up(), checked) for hc in checks],
                now=checked,
            )
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=region_batch, args=(region,)) for region in REGIONS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert ProbeResult.objects.count() == 40 * len(REGIONS)
    assert RegionState.objects.filter(status="up").count() == 40 * len(REGIONS)
    assert StatusChange.objects.count() == 40
    assert set(Healthcheck.objects.values_list("status", flat=True)) == {"up"}


@pytest.mark.services
def test_postgresql_region_states_read_by_the_recorder_match_the_orm(postgres, make):
    # The recorder reads region states with psycopg's C timestamp loader instead of Django's
    # pure-Python one (monitors.services.recording._c_timestamp_loader): the datetimes must be the same.
    from monitors.services.recording import _c_timestamp_loader

    healthcheck = make(recheck_count=0)
    record_everywhere(healthcheck, up(), slot=SLOT + timedelta(microseconds=123_456))
    fields = ("since", "last_slot", "last_result_at")
    by_orm = list(RegionState.objects.order_by("id").values_list(*fields))

    with _c_timestamp_loader():
        by_recorder = list(RegionState.objects.order_by("id").values_list(*fields))

    assert by_recorder == by_orm
    assert {value.tzinfo for row in by_recorder for value in row} == {UTC}
    assert by_recorder[0][1].microsecond == 123_456
