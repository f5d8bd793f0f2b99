"""What a probe round stores per listing, which listings it claims, and the evidence read back in a fixed number of queries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from directory.models import (
    Listing,
    ListingProbeHour,
    ListingProbeState,
    ListingRemote,
    ListingToolChange,
    ListingToolList,
)
from directory.probing import ROBOTS_DISALLOWED, ProbeDone, ProbeTarget, next_probe_at
from directory.selectors import probe_evidence
from directory.services import listing_probes_claim, listing_probes_prune, listing_probes_record
from monitors.scorecard import Verdict, scorecard
from probes.types import FailureKind, ProbeOutcome, ServerInfo, Status, Timings, ToolInfo

pytestmark = pytest.mark.django_db

AT = datetime(2026, 12, 1, 12, 10, tzinfo=UTC)
HALF_HOUR = timedelta(minutes=30)


def listing(name: str, *remotes: tuple[str, bool], status: str = "active", latest: bool = True) -> Listing:
    made = Listing.objects.create(
        name=name, version="1.0.0", is_latest=latest, status=status, updated_at=AT, synced_at=AT
    )
    for position, (url, templated) in enumerate(remotes):
        ListingRemote.objects.create(
            listing=made, position=position, transport="streamable-http", url=url, templated=templated
        )
    return made


TOOLS = (
    ToolInfo("search", ("q",), "Search the documents by words.", '{"type":"object"}', True, None),
    ToolInfo("fetch", ("id",), "Fetch one document by its id.", '{"type":"object"}', True, None),
)


def listed(ms: float = 200.0, tools: tuple[ToolInfo, ...] = TOOLS) -> ProbeOutcome:
    from probes.mcp import tool_details_digest, tool_digest

    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(total_ms=ms),
        server=ServerInfo("docs", "1"),
        protocol="2025-06-18",
        tools=tools,
        tool_count=len(tools),
        tool_digest=tool_digest(tools),
        tool_details_digest=tool_details_digest(tools),
    )


def failed() -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.CONNECT,
        reason="Connection refused",
        timings=Timings(total_ms=3.0),
    )


def signin() -> ProbeOutcome:
    from probes.types import Access, SigninDiscovery

    return ProbeOutcome(
        status=Status.UP,
        http_status=401,
        access=Access.OAUTH,
        signin_discovery=SigninDiscovery.RESOURCE_METADATA,
        timings=Timings(total_ms=50.0),
    )


def record(made: Listing, at: datetime, outcome: ProbeOutcome | None, skipped: str = "") -> None:
    url = made.remotes.first().url
    listing_probes_record(done=[ProbeDone(ProbeTarget(made.id, url), at, outcome, skipped)])


# --- claims -----------------------------------------------------------------------------------------


def test_a_round_claims_visible_non_templated_remote_listings_only():
    probed = listing("com.example/open", ("https://mcp.example.com/mcp", False))
    listing("com.example/deprecated", ("https://old.example.com/mcp", False), status="deprecated")
    listing("com.gone/server", ("https://mcp.gone.com/mcp", False), status="deleted")
    listing("com.acme/tenant", ("https://{tenant}.acme.com/mcp", True))
    listing("io.example/local")
    listing("com.example/older", ("https://older.example.com/mcp", False), latest=False)

    claimed = listing_probes_claim(now=AT, interval=HALF_HOUR, limit=100)

    assert sorted(target.url for target in claimed) == [
        "https://mcp.example.com/mcp",
        "https://old.example.com/mcp",
    ]
    assert probed.id in {target.listing_id for target in claimed}


def test_the_first_remote_that_is_not_templated_is_probed():
    made = listing(
        "com.example/two", ("https://{region}.example.com/mcp", True), ("https://eu.example.com/mcp", False)
    )

    (target,) = listing_probes_claim(now=AT, interval=HALF_HOUR, limit=10)

    assert target == ProbeTarget(made.id, "https://eu.example.com/mcp")


def test_a_claimed_listing_waits_for_its_next_slot():
    made = listing("com.example/open", ("https://mcp.example.com/mcp", False))
    listing_probes_claim(now=AT, interval=HALF_HOUR, limit=10)
    slot = next_probe_at(made.id, after=AT, interval=HALF_HOUR)

    assert listing_probes_claim(now=slot - timedelta(seconds=1), interval=HALF_HOUR, limit=10) == []
    assert [t.listing_id for t in listing_probes_claim(now=slot, interval=HALF_HOUR, limit=10)] == [made.id]
    assert ListingProbeState.objects.get(pk=made.id).next_probe_at == slot + HALF_HOUR


def test_a_listing_deleted_after_its_first_probe_is_not_probed_again():
    made = listing("com.example/open", ("https://mcp.example.com/mcp", False))
    listing_probes_claim(now=AT, interval=HALF_HOUR, limit=10)
    Listing.objects.filter(pk=made.pk).update(status=Listing.Status.DELETED)

    assert listing_probes_claim(now=AT + timedelta(days=1), interval=HALF_HOUR, limit=10) == []


def test_a_round_claims_at_most_its_limit():
    for n in range(5):
        listing(f"com.example/s{n}", (f"https://s{n}.example.com/mcp", False))

    first = listing_probes_claim(now=AT, interval=HALF_HOUR, limit=3)
    second = listing_probes_claim(now=AT, interval=HALF_HOUR, limit=3)

    assert (len(first), len(second)) == (3, 2)
    assert not {t.listing_id for t in first} & {t.listing_id for t in second}


# --- what a probe stores ------------------------------------------------------------------------------


@pytest.fixture
def made() -> Listing:
    made = listing("com.example/open", ("https://mcp.example.com/mcp", False))
    listing_probes_claim(now=AT, interval=HALF_HOUR, limit=10)
    return made


def hour_counts(made: Listing) -> list[tuple[int, int, int, int, int]]:
    return list(
        ListingProbeHour.objects.filter(listing=made)
        .order_by("hour")
        .values_list("attempts", "successes", "successes_1s", "successes_3s", "skipped")
    )


@pytest.mark.parametrize(
    ("outcome", "counts"),
    [
        (listed(1000.0), (1, 1, 1, 1, 0)),
        (listed(1000.1), (1, 1, 0, 1, 0)),
        (listed(3000.0), (1, 1, 0, 1, 0)),
        (listed(3000.1), (1, 1, 0, 0, 0)),
        (failed(), (1, 0, 0, 0, 0)),
        # 401/403 answers are no attempts (check 8), nor is a probe robots.txt kept us from.
        (signin(), (0, 0, 0, 0, 0)),
        (None, (0, 0, 0, 0, 1)),
    ],
)
def test_each_probe_adds_to_its_hour_as_attempt_tally_counts(made, outcome, counts):
    record(made, AT, outcome, "" if outcome else ROBOTS_DISALLOWED)

    assert hour_counts(made) == [counts]


def test_probes_of_one_hour_add_up_in_one_row():
    made = listing("com.example/open", ("https://mcp.example.com/mcp", False))
    listing_probes_claim(now=AT, interval=HALF_HOUR, limit=10)
    for minutes, outcome in ((0, listed(500.0)), (20, failed()), (40, listed(2000.0))):
        record(made, AT.replace(minute=0) + timedelta(minutes=minutes), outcome)
    record(made, AT + timedelta(hours=1), listed(100.0))

    assert hour_counts(made) == [(3, 2, 1, 2, 0), (1, 1, 1, 1, 0)]


def test_the_latest_attempt_is_kept_and_a_skip_does_not_replace_it(made):
    record(made, AT, listed(250.0))
    record(made, AT + HALF_HOUR, None, ROBOTS_DISALLOWED)

    state = ListingProbeState.objects.get(pk=made.pk)
    assert (state.probed_at, state.tool_count, state.total_ms, state.protocol, state.server_name) == (
        AT,
        2,
        250.0,
        "2025-06-18",
        "docs",
    )
    assert (state.skipped_at, state.skipped_reason) == (AT + HALF_HOUR, ROBOTS_DISALLOWED)


def test_the_tool_list_is_stored_only_when_it_changes(made):
    record(made, AT, listed())
    record(made, AT + HALF_HOUR, listed())

    stored = ListingToolList.objects.get(pk=made.pk)
    assert (stored.current_since, stored.tool_count) == (AT, 2)
    (evidence,) = probe_evidence([made.id], now=AT + HALF_HOUR).values()
    assert evidence.tools.tools == TOOLS
    assert evidence.tools.observed_at == AT + HALF_HOUR


@pytest.mark.parametrize(
    ("after", "removed", "new_required"),
    [
        # A tool removed.
        ((TOOLS[0],), 1, 0),
        # A top-level input newly required.
        (
            (TOOLS[0], ToolInfo("fetch", ("id", "format"), TOOLS[1].description, '{"type":"object"}', True)),
            0,
            1,
        ),
        # A tool added or a description changed: no change to record (the list is still replaced).
        ((*TOOLS, ToolInfo("new", ())), 0, 0),
        (
            (
                TOOLS[0],
                ToolInfo("fetch", ("id",), "Another description, long enough.", '{"type":"object"}', True),
            ),
            0,
            0,
        ),
    ],
)
def test_a_removal_or_a_newly_required_input_is_a_tool_change(made, after, removed, new_required):
    record(made, AT, listed())
    record(made, AT + HALF_HOUR, listed(tools=after))

    changes = list(
        ListingToolChange.objects.filter(listing=made).values_list(
            "removed_count", "new_required_inputs_count"
        )
    )
    assert changes == ([(removed, new_required)] if removed or new_required else [])
    assert ListingToolList.objects.get(pk=made.pk).current_since == AT + HALF_HOUR


# --- the windows --------------------------------------------------------------------------------------


def test_the_windows_sum_whole_hours_7_and_30_days_back(made):
    now = AT
    # 8 days ago: in the 30-day window only; 31 days ago: in neither.
    for days, outcome in (
        (0, listed(100.0)),
        (6, listed(2000.0)),
        (8, listed(100.0)),
        (8, failed()),
        (31, listed(100.0)),
    ):
        record(made, now - timedelta(days=days), outcome)

    evidence = probe_evidence([made.id], now=now)[made.id]

    assert (evidence.attempts_30d.attempts, evidence.attempts_30d.successes) == (4, 3)
    assert (evidence.latency_7d.samples, evidence.latency_7d.within_1s, evidence.latency_7d.within_3s) == (
        2,
        1,
        2,
    )
    assert evidence.tool_history_30d.successes == 3


def test_a_tool_change_older_than_30_days_no_longer_fails_check_9(made):
    record(made, AT - timedelta(days=31), listed())
    record(made, AT - timedelta(days=30, hours=12), listed(tools=TOOLS[:1]))
    record(made, AT - timedelta(days=1), listed(tools=TOOLS[:1]))
    record(made, AT, listed(tools=TOOLS[:1]))

    verdict = scorecard(probe_evidence([made.id], now=AT)[made.id], now=AT).results[8]

    assert (verdict.number, verdict.verdict) == (9, Verdict.PASSED)


def test_pruning_drops_hours_and_changes_older_than_32_days(made):
    record(made, AT - timedelta(days=33), listed())
    record(made, AT - timedelta(days=32, hours=12), listed(tools=TOOLS[:1]))
    record(made, AT - timedelta(days=31), listed())

    pruned = listing_probes_prune(now=AT)

    assert pruned == 3  # two hours and one change
    assert len(hour_counts(made)) == 1


def test_a_sign_in_answer_gives_the_resource_metadata_evidence(made):
    record(made, AT, signin())

    evidence = probe_evidence([made.id], now=AT)[made.id]

    assert evidence.latest.auth_required
    assert (
        evidence.resource_metadata.url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    )
    assert (evidence.resource_metadata.http_status, evidence.resource_metadata.json_object) == (200, True)


def test_a_listing_never_probed_has_its_endpoint_and_no_attempt():
    made = listing("com.example/open", ("https://mcp.example.com/mcp", False))
    local = listing("io.example/local")

    evidence = probe_evidence([made.id, local.id], now=AT)

    assert (evidence[made.id].endpoint_url, evidence[made.id].latest) == ("https://mcp.example.com/mcp", None)
    assert evidence[local.id].endpoint_url is None


def test_the_evidence_of_any_number_of_listings_takes_six_queries(django_assert_num_queries):
    made = []
    for n in range(20):
        one = listing(f"com.example/s{n}", (f"https://s{n}.example.com/mcp", False))
        made.append(one)
    listing_probes_claim(now=AT, interval=HALF_HOUR, limit=100)
    for one in made:
        record(one, AT, listed())
        record(one, AT + HALF_HOUR, listed(tools=TOOLS[:1]))

    with django_assert_num_queries(6):
        one = probe_evidence([made[0].id], now=AT + HALF_HOUR)
    with django_assert_num_queries(6):
        all_of_them = probe_evidence([m.id for m in made], now=AT + HALF_HOUR)

    assert all_of_them[made[0].id] == one[made[0].id]
    assert all_of_them[made[19].id].tool_history_30d.removals == 1
