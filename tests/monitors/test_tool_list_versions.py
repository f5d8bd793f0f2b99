"""Each distinct version of a check's tool list, details included, is stored once, when it changes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitors.models import MAX_REPLACED_VERSIONS, ToolChange, ToolListVersion
from monitors.selectors import tool_list_latest, tool_lists_latest
from monitors.services import healthcheck_create, outcomes_record, results_prune
from monitors.services.recording import RunResult, storable_outcome
from probes.checks.mcp import MCP
from probes.mcp import tool_details_digest, tool_digest
from probes.mcp.tools import MAX_TOOL_DETAILS, MAX_TOOL_SCHEMA
from probes.text import REPLACEMENT
from probes.types import Access, FailureKind, ProbeOutcome, ServerInfo, Status, Timings, ToolInfo

SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
SEARCH = ToolInfo(
    "search_docs",
    ("query",),
    description="Search the documentation by keyword.",
    input_schema='{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}',
    read_only_hint=True,
)
READ = ToolInfo("read_page", ("url",), description="Read one page.", destructive_hint=False)
TOOLS = (SEARCH, READ)


def listing(tools: tuple[ToolInfo, ...] = TOOLS) -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(total_ms=120.0),
        http_status=200,
        server=ServerInfo("docs", "1.2"),
        protocol="2025-06-18",
        access=Access.OPEN,
        tools=tools,
        tool_count=len(tools),
        tool_digest=tool_digest(tools),
        tool_details_digest=tool_details_digest(tools),
    )


def reworded() -> tuple[ToolInfo, ...]:
    return (
        ToolInfo(
            SEARCH.name, SEARCH.required_inputs, description="Find pages.", input_schema=SEARCH.input_schema
        ),
        READ,
    )


@pytest.fixture
def check(org, now):
    return healthcheck_create(
        organization=org,
        name="docs",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=now,
        region_slugs=["eu-west"],
    )


def record(check, *outcomes: ProbeOutcome, slot: datetime = SLOT) -> datetime:
    """Record the outcomes as consecutive slots in one group; return when they were recorded."""
    now = slot + len(outcomes) * MINUTE
    outcomes_record(
        region_slug="eu-west",
        results=[
            RunResult(
                check.id, slot + index * MINUTE, 0, outcome, slot + index * MINUTE + timedelta(seconds=1)
            )
            for index, outcome in enumerate(outcomes)
        ],
        now=now,
    )
    return now


def versions(check) -> list[tuple[str, datetime | None]]:
    return sorted(ToolListVersion.objects.filter(healthcheck=check).values_list("digest", "replaced_at"))


def test_the_first_list_is_stored_with_its_details_and_is_current(check):
    at = record(check, listing())

    (version,) = ToolListVersion.objects.filter(healthcheck=check)
    assert version.digest == tool_details_digest(TOOLS)
    assert (version.tool_count, version.first_seen_at, version.current_since, version.replaced_at) == (
        2,
        at,
        at,
        None,
    )
    assert version.tools[0] == {
        "name": "search_docs",
        "required_inputs": ["query"],
        "description": "Search the documentation by keyword.",
        "input_schema": SEARCH.input_schema,
        "read_only_hint": True,
        "destructive_hint": None,
        "description_kept": True,
        "schema_kept": True,
    }
    check.refresh_from_db()
    assert check.tool_details_digest == version.digest


def test_the_latest_version_reads_back_as_the_engine_kept_it(check):
    record(check, listing())

    latest = tool_list_latest(healthcheck_id=check.id)

    assert latest is not None
    assert latest.tools == TOOLS
    assert latest.replaced_at is None


def test_a_check_without_a_listed_tool_list_has_no_latest_version(check):
    assert tool_list_latest(healthcheck_id=check.id) is None


def test_an_unchanged_list_writes_nothing_to_the_versions(check):
    record(check, listing())

    with CaptureQueriesContext(connection) as queries:
        record(check, listing(), slot=SLOT + timedelta(hours=1))

    assert not [q["sql"] for q in queries.captured_queries if "toollistversion" in q["sql"].lower()]
    assert len(versions(check)) == 1


def test_a_reworded_description_is_a_new_version_and_no_tool_change(check):
    record(check, listing())

    at = record(check, listing(reworded()), slot=SLOT + timedelta(hours=1))

    assert versions(check) == sorted(
        [(tool_details_digest(TOOLS), at), (tool_details_digest(reworded()), None)]
    )
    assert not ToolChange.objects.filter(healthcheck=check).exists()
    latest = tool_list_latest(healthcheck_id=check.id)
    assert latest is not None
    assert latest.tools[0].description == "Find pages."


def test_a_list_that_comes_back_is_current_again_and_keeps_its_first_sighting(check):
    first = record(check, listing())
    record(check, listing(reworded()), slot=SLOT + timedelta(hours=1))

    back = record(check, listing(), slot=SLOT + timedelta(hours=2))

    original = ToolListVersion.objects.get(healthcheck=check, digest=tool_details_digest(TOOLS))
    assert (original.first_seen_at, original.current_since, original.replaced_at) == (first, back, None)
    assert (
        ToolListVersion.objects.get(healthcheck=check, digest=tool_details_digest(reworded())).replaced_at
        == back
    )


def test_a_list_that_flaps_back_within_one_group_stays_current(check):
    at = record(check, listing(), listing(reworded()), listing())

    assert versions(check) == sorted(
        [(tool_details_digest(TOOLS), None), (tool_details_digest(reworded()), at)]
    )


def test_a_failed_run_keeps_the_current_version(check):
    record(check, listing())

    record(
        check,
        ProbeOutcome(status=Status.DOWN, kind=FailureKind.TIMEOUT, reason="Timed out"),
        slot=SLOT + timedelta(hours=1),
    )

    assert versions(check) == [(tool_details_digest(TOOLS), None)]


def test_the_latest_versions_of_many_checks_take_one_query(check, org, now):
    other = healthcheck_create(
        organization=org,
        name="other",
        check_type=MCP,
        config={"uri": "https://other.example.com/mcp"},
        now=now,
        region_slugs=["eu-west"],
    )
    record(check, listing())
    record(other, listing(reworded()))

    with CaptureQueriesContext(connection) as queries:
        latest = tool_lists_latest(healthcheck_ids=[check.id, other.id])

    assert len(queries.captured_queries) == 1
    assert {hc_id: view.tools[0].description for hc_id, view in latest.items()} == {
        check.id: SEARCH.description,
        other.id: "Find pages.",
    }


def test_hostile_details_are_stored_clean(check):
    hostile = (
        ToolInfo(
            "t",
            description="nul\x00 and \ud800",
            input_schema='{"type":"object","default":"a\\u0000b","k\\ud800":1}',
        ),
    )

    record(check, storable_outcome(listing(hostile)))

    latest = tool_list_latest(healthcheck_id=check.id)
    assert latest is not None
    (tool,) = latest.tools
    assert tool.description == f"nul and {REPLACEMENT}"
    assert json.loads(tool.input_schema or "") == {"type": "object", "default": "ab", f"k{REPLACEMENT}": 1}


def test_a_schema_over_the_cap_is_dropped_before_storage():
    big = ToolInfo("t", input_schema=json.dumps({"d": "x" * MAX_TOOL_SCHEMA}))

    (tool,) = storable_outcome(listing((big,))).tools

    assert (tool.input_schema, tool.schema_kept) == (None, False)


def test_pruning_deletes_versions_replaced_before_the_retention_and_keeps_the_current_one(check):
    record(check, listing())
    record(check, listing(reworded()), slot=SLOT + timedelta(hours=1))

    results_prune(now=SLOT + timedelta(days=400))

    assert versions(check) == [(tool_details_digest(reworded()), None)]


def test_a_server_that_rewords_its_tools_every_run_keeps_only_the_newest_replaced_versions(check):
    runs = [
        listing((ToolInfo("t", description=f"Answer number {index}."),))
        for index in range(MAX_REPLACED_VERSIONS + 5)
    ]

    for index, outcome in enumerate(runs):
        record(check, outcome, slot=SLOT + index * timedelta(hours=1))

    kept = ToolListVersion.objects.filter(healthcheck=check)
    assert kept.count() == MAX_REPLACED_VERSIONS + 1
    assert kept.get(replaced_at__isnull=True).digest == runs[-1].tool_details_digest
    assert not kept.filter(digest=runs[0].tool_details_digest).exists()


def test_details_past_the_list_cap_are_dropped_before_storage():
    schema = json.dumps({"d": "x" * (MAX_TOOL_SCHEMA - 100)})
    many = tuple(ToolInfo(f"t{index}", input_schema=schema) for index in range(40))

    stored = storable_outcome(listing(many)).tools

    assert sum(len(tool.input_schema or "") for tool in stored) <= MAX_TOOL_DETAILS
    assert [tool.name for tool in stored] == [tool.name for tool in many]
    assert stored[0].schema_kept
    assert not stored[-1].schema_kept
