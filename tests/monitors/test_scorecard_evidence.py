"""The scorecard's evidence read from the database: windows at their boundaries, from rollups and raw results alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitors.models import Healthcheck, ProbeResult, Region, Rollup, ToolChange
from monitors.scorecard import NO_LISTING, PUBLISHER_CHECKS, AttemptTally, Verdict
from monitors.selectors import (
    NotAnMcpCheck,
    ScorecardReads,
    listing_of,
    newest_results,
    scorecard_evidence,
    scorecard_of,
    tool_list_latest,
)
from monitors.services import healthcheck_create, outcomes_record, rollups_refresh
from monitors.services.recording import RunResult
from probes.checks.http import HTTP
from probes.checks.mcp import MCP
from probes.mcp import tool_details_digest, tool_digest
from probes.types import Access, ProbeOutcome, ServerInfo, SigninDiscovery, Status, Timings, ToolInfo

P, F, N = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_MEASURED
NOW = datetime(2026, 11, 29, 12, 30, tzinfo=UTC)
HOUR = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
# The windows' first instants: whole hours, the current one and the 7×24 (30×24) before it.
WEEK_EDGE = HOUR - timedelta(days=7)
MONTH_EDGE = HOUR - timedelta(days=30)
SECOND = timedelta(seconds=1)


@pytest.fixture
def check(org) -> Healthcheck:
    return healthcheck_create(
        organization=org,
        name="docs",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=NOW - timedelta(days=40),
    )


_attempts = iter(range(1, 1_000_000))


def result(
    check: Healthcheck,
    slot: datetime,
    *,
    ms: float | None = 200.0,
    listed: bool = True,
    http_status: int | None = None,
    kind: str = "",
    in_maintenance: bool = False,
    **fields,
) -> ProbeResult:
    """Store one attempt at ``slot`` (each its own attempt number, so any number fit one slot)."""
    return ProbeResult.objects.create(
        healthcheck=check,
        region=Region.objects.get(slug="eu-west"),
        slot=slot,
        attempt=next(_attempts) % 30_000,
        checked_at=slot + SECOND,
        recorded_at=slot + 2 * SECOND,
        status="up" if listed and not kind else "down",
        kind=kind,
        http_status=http_status,
        tool_count=3 if listed else None,
        total_ms=ms,
        in_maintenance=in_maintenance,
        **{"protocol": "2025-06-18", "server_name": "docs", **fields},
    )


def roll_up(*moments: datetime) -> None:
    """Run the rollup job as it ran at the end of each moment's hour."""
    for hour in sorted({moment.replace(minute=0, second=0, microsecond=0) for moment in moments}):
        rollups_refresh(now=hour + timedelta(minutes=59), hours=1)


def verdicts(check: Healthcheck, *numbers: int) -> dict[int, Verdict]:
    card = scorecard_of(healthcheck=check, now=NOW)
    return {result.number: result.verdict for result in card.results if result.number in numbers}


# --- the 7-day latency window (checks 6 and 7) ---------------------------------------------------


@pytest.mark.parametrize(
    ("fifth", "samples", "fast"),
    [
        pytest.param(WEEK_EDGE, 5, P, id="fifth sample at the window's first instant: 5, measured"),
        pytest.param(WEEK_EDGE - SECOND, 4, N, id="fifth sample a second before the window: 4, not measured"),
    ],
)
def test_fast_p50_needs_five_samples_in_the_window(check, fifth, samples, fast):
    moments = [HOUR - timedelta(days=day) for day in (1, 2, 3, 4)] + [fifth]
    for moment in moments:
        result(check, moment, ms=300.0)
    roll_up(*moments)

    evidence = scorecard_evidence(healthcheck=check, now=NOW)

    assert evidence.latency_7d is not None
    assert evidence.latency_7d.samples == samples
    assert verdicts(check, 6) == {6: fast}


def test_the_current_and_previous_hours_count_from_raw_results_before_any_rollup(check):
    for minute in range(3):
        result(check, HOUR - timedelta(minutes=50 - minute), ms=900.0)
        result(check, HOUR + timedelta(minutes=minute), ms=1500.0)

    window = scorecard_evidence(healthcheck=check, now=NOW).latency_7d

    assert window is not None
    assert (window.samples, window.within_1s, window.within_3s) == (6, 3, 6)


def test_a_rolled_up_previous_hour_is_not_counted_twice(check):
    moment = HOUR - timedelta(minutes=30)
    result(check, moment)
    roll_up(moment)

    window = scorecard_evidence(healthcheck=check, now=NOW).latency_7d

    assert window is not None
    assert window.samples == 1


@pytest.mark.parametrize(
    ("fast_ones", "verdict"),
    [
        pytest.param(3, P, id="3 of 5 within 1 s: the median is within"),
        pytest.param(2, F, id="2 of 5 within 1 s: the median is over"),
    ],
)
def test_fast_p50_is_nearest_rank_over_the_hourly_counts(check, fast_ones, verdict):
    moments = [HOUR - timedelta(hours=5 + index) for index in range(5)]
    for index, moment in enumerate(moments):
        result(check, moment, ms=1000.0 if index < fast_ones else 1000.5)
    roll_up(*moments)

    assert verdicts(check, 6) == {6: verdict}


def test_failed_attempts_are_no_latency_samples(check):
    moments = [HOUR - timedelta(hours=3 + index) for index in range(5)]
    for moment in moments:
        result(check, moment, listed=False, kind="timeout", ms=10_000.0)
    roll_up(*moments)

    window = scorecard_evidence(healthcheck=check, now=NOW).latency_7d

    assert window is not None
    assert window.samples == 0


# --- the 30-day reliability window (check 8) ---------------------------------------------------


def _successes(check: Healthcheck, count: int, *, first: datetime) -> list[datetime]:
    moments = [first + timedelta(hours=index) for index in range(count)]
    for moment in moments:
        result(check, moment)
    return moments


@pytest.mark.parametrize(
    ("first", "attempts", "verdict"),
    [
        pytest.param(MONTH_EDGE, 30, P, id="30 attempts from the window's first instant: measured"),
        pytest.param(MONTH_EDGE - SECOND, 29, N, id="the first a second before it: 29, not measured"),
    ],
)
def test_reliable_needs_thirty_attempts_in_thirty_days(check, first, attempts, verdict):
    moments = [first, *_successes(check, 29, first=HOUR - timedelta(days=10))]
    result(check, first)
    roll_up(*moments)

    counts = scorecard_evidence(healthcheck=check, now=NOW).attempts_30d

    assert counts is not None
    assert counts.attempts == attempts
    assert verdicts(check, 8) == {8: verdict}


def test_one_failure_in_thirty_attempts_is_under_99_percent(check):
    moments = _successes(check, 29, first=HOUR - timedelta(days=5))
    failed = HOUR - timedelta(days=6)
    result(check, failed, listed=False, kind="connect")
    roll_up(failed, *moments)

    assert verdicts(check, 8) == {8: F}


def test_auth_answers_and_skipped_results_are_no_attempts(check):
    moments = _successes(check, 30, first=HOUR - timedelta(days=3))
    for moment in moments[:4]:
        later = moment + timedelta(minutes=1)
        result(check, later, listed=False, http_status=401, kind="signin_not_discoverable")
        result(check, later, listed=False, http_status=403, kind="key_refused")
        result(check, later, listed=False, kind="config")
        result(check, later + timedelta(minutes=1), listed=False, kind="timeout", in_maintenance=True)
    roll_up(*moments)

    counts = scorecard_evidence(healthcheck=check, now=NOW).attempts_30d

    assert counts is not None
    assert (counts.attempts, counts.successes) == (30, 30)
    assert verdicts(check, 8) == {8: P}


def test_hours_rolled_up_before_the_counts_existed_count_nothing(check):
    region = Region.objects.get(slug="eu-west")
    Rollup.objects.create(
        healthcheck=check, region=region, period=Rollup.Period.HOUR, start=HOUR - timedelta(days=2), runs=60
    )

    counts = scorecard_evidence(healthcheck=check, now=NOW).attempts_30d

    assert counts is not None
    assert counts.attempts == 0


def test_the_rollup_job_and_the_raw_count_apply_one_rule(check):
    hour = HOUR - timedelta(hours=3)
    rows = [
        result(check, hour + timedelta(minutes=1), ms=999.0),
        result(check, hour + timedelta(minutes=2), ms=3000.0),
        result(check, hour + timedelta(minutes=3), ms=3001.0),
        result(check, hour + timedelta(minutes=4), ms=None),
        result(check, hour + timedelta(minutes=5), listed=False, kind="timeout"),
        result(check, hour + timedelta(minutes=6), listed=False, http_status=401),
        result(check, hour + timedelta(minutes=7), listed=False, kind="config"),
        result(check, hour + timedelta(minutes=8), in_maintenance=True),
    ]
    expected = AttemptTally()
    for row in rows:
        expected.add(
            kind=row.kind,
            http_status=row.http_status,
            in_maintenance=row.in_maintenance,
            tools_listed=row.tool_count is not None,
            total_ms=row.total_ms,
        )
    counted_raw = scorecard_evidence(healthcheck=check, now=hour + timedelta(minutes=30)).latency_7d
    roll_up(hour)
    rollup = Rollup.objects.get(healthcheck=check, period=Rollup.Period.HOUR, start=hour)

    assert (expected.attempts, expected.successes, expected.within_1s, expected.within_3s) == (5, 4, 1, 2)
    assert (rollup.attempts, rollup.successes, rollup.successes_1s, rollup.successes_3s) == (5, 4, 1, 2)
    assert counted_raw is not None
    assert (counted_raw.samples, counted_raw.within_1s, counted_raw.within_3s) == (4, 1, 2)


def test_a_day_rollup_sums_its_hours_counts(check):
    hours = [HOUR - timedelta(hours=back) for back in (2, 3)]
    for hour in hours:
        result(check, hour, ms=500.0)
        result(check, hour, listed=False, kind="timeout")
    roll_up(*hours)

    day = Rollup.objects.get(healthcheck=check, period=Rollup.Period.DAY)

    assert (day.attempts, day.successes, day.successes_1s, day.successes_3s) == (4, 2, 2, 2)


# --- the 30-day tool stability window (check 9) -----------------------------------------------


@pytest.mark.parametrize(
    ("days_ago", "verdict"),
    [
        pytest.param(29, F, id="a removal 29 days ago fails"),
        pytest.param(31, P, id="a removal 31 days ago is outside the window"),
    ],
)
def test_a_tool_removal_fails_the_stable_tool_list_for_thirty_days(check, days_ago, verdict):
    result(check, HOUR + timedelta(minutes=1))
    result(check, HOUR + timedelta(minutes=2))
    ToolChange.objects.create(
        healthcheck=check,
        at=NOW - timedelta(days=days_ago),
        region=Region.objects.get(slug="eu-west"),
        previous_digest="a",
        digest="b",
        removed=["search"],
        removed_count=1,
    )

    assert verdicts(check, 9) == {9: verdict}


def test_an_added_tool_alone_keeps_the_tool_list_stable(check):
    result(check, HOUR + timedelta(minutes=1))
    result(check, HOUR + timedelta(minutes=2))
    ToolChange.objects.create(
        healthcheck=check,
        at=NOW - timedelta(days=1),
        region=Region.objects.get(slug="eu-west"),
        previous_digest="a",
        digest="b",
        added=["new_tool"],
        added_count=1,
    )

    assert verdicts(check, 9) == {9: P}


def test_a_newly_required_input_fails_the_stable_tool_list(check):
    result(check, HOUR + timedelta(minutes=1))
    result(check, HOUR + timedelta(minutes=2))
    change = ToolChange.objects.create(
        healthcheck=check,
        at=NOW - timedelta(days=1),
        region=Region.objects.get(slug="eu-west"),
        previous_digest="a",
        digest="b",
        new_required_inputs={"search": ["scope"]},
        new_required_inputs_count=1,
    )

    card = scorecard_of(healthcheck=check, now=NOW)

    stable = card.results[8]
    assert (stable.number, stable.verdict) == (9, F)
    assert stable.evidence["tool_changes"] == [change.id]


# --- the latest attempt, the tool list, sign-in -------------------------------------------------

SEARCH = ToolInfo(
    "search_docs",
    ("query",),
    description="Search the documentation by keyword.",
    input_schema='{"type":"object","properties":{"query":{"type":"string","description":"Words"}}}',
    read_only_hint=True,
)
ECHO = ToolInfo("echo", (), description="Echo.", input_schema='{"type":"object"}', destructive_hint=False)


def test_the_tool_checks_read_the_latest_tool_list_version(check):
    tools = (SEARCH, ECHO)
    outcome = ProbeOutcome(
        status=Status.UP,
        timings=Timings(total_ms=120.0),
        server=ServerInfo("docs", "1.0"),
        protocol="2025-06-18",
        access=Access.OPEN,
        tools=tools,
        tool_count=2,
        tool_digest=tool_digest(tools),
        tool_details_digest=tool_details_digest(tools),
    )
    outcomes_record(
        region_slug="eu-west",
        results=[RunResult(check.id, HOUR + timedelta(minutes=5), 0, outcome, HOUR + timedelta(minutes=5))],
        now=HOUR + timedelta(minutes=5),
    )

    evidence = scorecard_evidence(healthcheck=check, now=NOW)

    assert evidence.tools is not None
    assert sorted(tool.name for tool in evidence.tools.tools) == ["echo", "search_docs"]
    # "Echo." is under 20 characters; both schemas are objects; the one property is described; both hint.
    assert verdicts(check, 1, 2, 3, 4, 10, 13, 14, 15, 16) == {
        1: P, 2: P, 3: P, 4: P, 10: P, 13: F, 14: P, 15: P, 16: P
    }  # fmt: skip


def test_the_latest_attempt_is_the_newest_result_uptimy_could_run(check):
    result(check, HOUR + timedelta(minutes=1), protocol="2025-03-26")
    result(check, HOUR + timedelta(minutes=2), listed=False, kind="config", protocol="")

    latest = scorecard_evidence(healthcheck=check, now=NOW).latest

    assert latest is not None
    assert (latest.at, latest.protocol, latest.tools_listed) == (
        HOUR + timedelta(minutes=1, seconds=1),
        "2025-03-26",
        True,
    )


def test_the_newest_result_and_the_latest_attempt_are_read_together(check):
    attempt = result(check, HOUR + timedelta(minutes=1))
    newest = result(check, HOUR + timedelta(minutes=2), listed=False, kind="timeout", in_maintenance=True)

    with CaptureQueriesContext(connection) as captured:
        found = newest_results(healthcheck=check)

    assert (found.newest, found.latest_attempt) == (newest, attempt)
    assert found.newest is not None
    assert found.newest.region.slug == "eu-west"  # read with it, no query more
    assert len(captured) == 1


def test_the_evidence_from_what_a_page_read_is_the_evidence_read_afresh(check):
    result(check, HOUR + timedelta(minutes=1), protocol="2025-03-26")
    result(check, HOUR + timedelta(minutes=2), listed=False, kind="config", protocol="")
    known = ScorecardReads(
        latest_attempt=newest_results(healthcheck=check).latest_attempt,
        tool_list=tool_list_latest(healthcheck_id=check.id),
        listing=listing_of(healthcheck=check),
    )

    with CaptureQueriesContext(connection) as captured:
        shared = scorecard_evidence(healthcheck=check, now=NOW, known=known)

    assert shared == scorecard_evidence(healthcheck=check, now=NOW)
    assert len(captured) == 4  # the seven less the latest attempt, the tool list version and the listing


@pytest.mark.parametrize(
    ("http_status", "discovery", "verdict"),
    [
        pytest.param(401, SigninDiscovery.RESOURCE_METADATA, P, id="sign-in found by resource metadata"),
        pytest.param(401, SigninDiscovery.LEGACY_FALLBACK, F, id="only the 2025-03-26 fallback found it"),
        pytest.param(401, "", F, id="a keyless 401 whose sign-in discovery found no metadata"),
        pytest.param(None, "", N, id="no authentication required"),
    ],
)
def test_standard_auth_reads_the_recorded_sign_in_discovery(check, http_status, discovery, verdict):
    result(
        check,
        HOUR + timedelta(minutes=1),
        listed=http_status is None,
        http_status=http_status,
        access=Access.OAUTH if http_status else Access.OPEN,
        signin_discovery=discovery,
    )

    assert verdicts(check, 11) == {11: verdict}


def test_standard_auth_names_the_metadata_address_of_the_endpoint(check):
    result(
        check,
        HOUR + timedelta(minutes=1),
        listed=False,
        http_status=401,
        signin_discovery=SigninDiscovery.RESOURCE_METADATA,
    )

    metadata = scorecard_evidence(healthcheck=check, now=NOW).resource_metadata

    assert metadata is not None
    assert metadata.url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


def test_a_customer_s_check_has_no_listing_so_the_publisher_checks_are_not_measured(check):
    card = scorecard_of(healthcheck=check, now=NOW)

    publisher = [result for result in card.results if result.number in PUBLISHER_CHECKS]
    assert [(result.verdict, result.reason) for result in publisher] == [(N, NO_LISTING)] * 6
    assert card.total == 22


def test_a_check_with_no_result_has_nothing_measured_but_https(check):
    card = scorecard_of(healthcheck=check, now=NOW)

    assert {result.number: result.verdict for result in card.results if result.verdict is not N} == {5: P}


def test_an_http_check_has_no_scorecard(org):
    site = healthcheck_create(
        organization=org, name="site", check_type=HTTP, config={"uri": "https://example.com/"}, now=NOW
    )

    with pytest.raises(NotAnMcpCheck, match="Only MCP healthchecks have a scorecard"):
        scorecard_evidence(healthcheck=site, now=NOW)


def test_the_evidence_takes_seven_queries_however_long_the_history(check):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            scorecard_evidence(healthcheck=check, now=NOW)
        return len(captured)

    before = queries()
    moments = _successes(check, 50, first=HOUR - timedelta(days=3))
    roll_up(*moments)
    for days in range(5):
        ToolChange.objects.create(
            healthcheck=check,
            at=NOW - timedelta(days=days),
            region=Region.objects.get(slug="eu-west"),
            previous_digest="a",
            digest="b",
            removed_count=1,
        )

    # The six of the attempts and tool lists, and the check's own listing (none here).
    assert before == queries() == 7
