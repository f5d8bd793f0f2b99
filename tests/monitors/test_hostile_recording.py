"""A target's text never fails a batch, and tool lists stay bounded (issue 8, classes 1 and 4).

These run on whichever database the suite runs on: SQLite here, PostgreSQL under .ci/run (where
a NUL fails a text column and a lone surrogate fails jsonb); both must record the batch.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime, timedelta

import pytest
from django.db import OperationalError

from monitors.models import (
    MAX_CHANGE_NAMES,
    MAX_STORED_TOOLS,
    MAX_TOOL_NAME,
    Healthcheck,
    ProbeResult,
    RegionState,
    StatusChange,
    ToolChange,
    ToolList,
)
from monitors.services import (
    RunResult,
    healthcheck_create,
    outcomes_record,
    recording,
    results_prune,
    storable_outcome,
)
from probes.checks.mcp import MCP
from probes.text import is_storable, storable, text_fault
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
REGION = "eu-west"
POISON = "\ud800\x00"


def poisoned(text: str) -> str:
    return f"{POISON}{text}\udfff\x00"


def hostile_outcome(*, status: Status = Status.DOWN) -> ProbeOutcome:
    """Return an outcome carrying a lone surrogate and a NUL in every string it has."""
    tools = (
        ToolInfo(poisoned("search"), (poisoned("query"), poisoned("limit"))),
        ToolInfo(poisoned("fetch"), (poisoned("url"),)),
    )
    return ProbeOutcome(
        status=status,
        kind=FailureKind.MISSING_TOOLS if status == Status.DOWN else None,
        reason=poisoned("Required tools missing"),
        timings=Timings(dns_ms=1.0, tcp_ms=2.0, ttfb_ms=3.0, total_ms=40.0),
        http_status=200,
        server=ServerInfo(poisoned("evil"), poisoned("6.6.6")),
        protocol=poisoned("2025"),
        access=Access.OAUTH,
        signin_server=poisoned("https://auth.example.com/"),
        tools=tools,
        tool_count=len(tools),
        tool_digest=poisoned("digest"),
        missing_tools=(poisoned("read_page"),),
        transport=Transport.STREAMABLE_HTTP,
        warnings=(poisoned("a warning"),),
    )


def healthy_outcome(digest: str = "d-healthy") -> ProbeOutcome:
    tools = (ToolInfo("search_docs", ("query",)),)
    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(dns_ms=1.0, tcp_ms=2.0, ttfb_ms=30.0, total_ms=50.0),
        http_status=200,
        server=ServerInfo("docs", "1.0"),
        protocol="2025-06-18",
        access=Access.OPEN,
        tools=tools,
        tool_count=len(tools),
        tool_digest=digest,
        transport=Transport.STREAMABLE_HTTP,
    )


@pytest.fixture
def make_check(now):
    def make(organization, name: str = "docs", **rules) -> Healthcheck:
        return healthcheck_create(
            organization=organization,
            name=name,
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=now,
            region_slugs=[REGION],
            rules={"recheck_count": 0, **rules},
        )

    return make


def run(healthcheck: Healthcheck, outcome: ProbeOutcome, *, slot: datetime = SLOT) -> RunResult:
    return RunResult(healthcheck.id, slot, 0, outcome, slot + timedelta(seconds=1))


def record(*results: RunResult) -> None:
    outcomes_record(region_slug=REGION, results=list(results), now=results[0].slot + timedelta(seconds=2))


def every_text(value: object) -> list[str]:
    """Return every string in a stored value, keys of mappings included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (*every_text(key), *every_text(item))]
    if isinstance(value, list | tuple):
        return [text for item in value for text in every_text(item)]
    return []


# --- the sanitiser ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "limit", "expected"),
    [
        ("plain", None, "plain"),
        ("a\x00b", None, "ab"),
        ("a\ud800b", None, "a\ufffdb"),
        ("\udfff\ud800", None, "\ufffd\ufffd"),
        ("café 😀", None, "café 😀"),
        ("abcdef", 3, "abc"),
        ("\x00\x00abc", 2, "ab"),
    ],
)
def test_storable_drops_nul_replaces_surrogates_and_cuts(given, limit, expected):
    assert storable(given, limit) == expected
    assert is_storable(storable(given, limit))


def test_text_fault_names_what_is_wrong():
    assert text_fault("fine, même en français") is None
    assert "NUL" in text_fault("a\x00")
    assert "surrogate" in text_fault("a\ud800")


def test_a_clean_outcome_is_returned_as_it_is():
    outcome = healthy_outcome()

    assert storable_outcome(outcome) is outcome


def test_every_string_of_a_hostile_outcome_is_made_storable():
    clean = storable_outcome(hostile_outcome())

    texts = [
        clean.reason,
        clean.server.name,
        clean.server.version,
        clean.protocol,
        clean.signin_server,
        clean.tool_digest,
        *clean.missing_tools,
        *clean.warnings,
        *(tool.name for tool in clean.tools),
        *(name for tool in clean.tools for name in tool.required_inputs),
    ]
    assert len(texts) == 13
    assert all(is_storable(text) for text in texts), texts
    assert clean.server.name == "\ufffdevil\ufffd"


def test_text_longer_than_its_column_is_cut_to_it():
    long = dataclasses.replace(
        healthy_outcome(),
        server=ServerInfo("n" * 500, "v" * 500),
        protocol="p" * 50,
        reason="r" * 10_000,
        signin_server="s" * 5000,
        tools=(ToolInfo("t" * 1000, ("i" * 1000,)),),
    )

    clean = storable_outcome(long)

    assert (len(clean.server.name), len(clean.server.version), len(clean.protocol)) == (200, 100, 16)
    assert (len(clean.reason), len(clean.signin_server)) == (recording.MAX_REASON, 2048)
    assert len(clean.tools[0].name) == len(clean.tools[0].required_inputs[0]) == MAX_TOOL_NAME


# --- one result never poisons a batch --------------------------------------------------------


def test_a_hostile_result_in_a_batch_with_other_tenants_records_every_result(make_check, org, other_org):
    hostile = make_check(org, "hostile")
    healthy = [make_check(other_org, f"healthy-{index}") for index in range(3)]

    record(run(hostile, hostile_outcome()), *(run(check, healthy_outcome()) for check in healthy))

    for check in healthy:
        result = ProbeResult.objects.get(healthcheck=check)
        assert (result.status, result.server_name, result.total_ms) == ("up", "docs", 50.0)
        assert RegionState.objects.get(healthcheck=check).status == "up"
        check.refresh_from_db()
        assert check.status == "up"
    stored = ProbeResult.objects.get(healthcheck=hostile)
    assert (stored.status, stored.kind) == ("down", "missing_tools")  # the target's own verdict, kept
    assert stored.server_name == "\ufffdevil\ufffd"
    assert stored.reason == "\ufffdRequired tools missing\ufffd"
    assert stored.missing_tools == ["\ufffdread_page\ufffd"]


def test_every_stored_string_of_a_hostile_result_is_storable(make_check, org):
    hostile = make_check(org, "hostile")
    record(run(hostile, hostile_outcome(status=Status.UP)))
    later = dataclasses.replace(hostile_outcome(), tools=(), tool_count=0)
    record(run(hostile, later, slot=SLOT + timedelta(minutes=1)))

    rows = [
        *ProbeResult.objects.filter(healthcheck=hostile).values(),
        *RegionState.objects.filter(healthcheck=hostile).values(),
        *StatusChange.objects.filter(healthcheck=hostile).values(),
        *ToolList.objects.filter(healthcheck=hostile).values(),
        *ToolChange.objects.filter(healthcheck=hostile).values(),
    ]
    texts = every_text([list(row.values()) for row in rows])
    assert any("evil" in text for text in texts)
    assert all(is_storable(text) for text in texts)


def test_the_api_lists_a_hostile_checks_history(make_check, org, client):
    hostile = make_check(org, "hostile")
    first = dataclasses.replace(hostile_outcome(status=Status.UP), tool_digest="one")
    record(run(hostile, first))
    renamed = dataclasses.replace(first, tools=(ToolInfo(poisoned("other")),), tool_digest="two")
    record(run(hostile, renamed, slot=SLOT + timedelta(minutes=1)))

    for route in ("results/", "status-changes/", "tool-changes/"):
        response = client.get(f"/api/v1/healthchecks/{hostile.public_id}/{route}")
        assert response.status_code == 200, route
        assert response.json()["results"], route


def test_a_result_whose_recording_fails_is_kept_as_a_protocol_failure_and_the_rest_recorded(
    make_check, org, other_org, monkeypatch, caplog
):
    broken = make_check(org, "broken")
    healthy = [make_check(other_org, f"healthy-{index}") for index in range(2)]
    apply = recording._StateBook.apply

    def buggy_apply(self, check, result):
        # A bug no sanitiser foresaw, for this one check's answer (the stand-in has no server).
        if check.id == broken.id and result.outcome.server is not None:
            raise ValueError("a bug")
        return apply(self, check, result)

    monkeypatch.setattr(recording._StateBook, "apply", buggy_apply)
    caplog.set_level(logging.ERROR, logger="monitors.services.recording")

    record(run(broken, healthy_outcome()), *(run(check, healthy_outcome()) for check in healthy))

    for check in healthy:
        assert ProbeResult.objects.get(healthcheck=check).status == "up"
        assert RegionState.objects.get(healthcheck=check).status == "up"
    stand_in = ProbeResult.objects.get(healthcheck=broken)
    assert (stand_in.status, stand_in.kind) == ("down", "protocol")
    assert stand_in.reason.startswith("Uptimy could not record this run's answer")
    assert stand_in.total_ms == 50.0
    assert "recorded as a protocol failure" in caplog.text


def test_a_result_that_can_not_be_recorded_even_as_a_stand_in_costs_only_itself(
    make_check, org, other_org, monkeypatch
):
    broken = make_check(org, "broken")
    healthy = make_check(other_org, "healthy")
    row = recording._result_row

    def result_row(result, region_id, now, *rest):
        if result.healthcheck_id == broken.id:
            raise ValueError("a bug")
        return row(result, region_id, now, *rest)

    monkeypatch.setattr(recording, "_result_row", result_row)

    record(run(broken, healthy_outcome()), run(healthy, healthy_outcome()))

    assert ProbeResult.objects.filter(healthcheck=healthy).count() == 1
    assert not ProbeResult.objects.filter(healthcheck=broken).exists()


def test_a_database_that_is_down_still_fails_the_whole_batch_for_a_retry(make_check, org, monkeypatch):
    check = make_check(org)

    def unavailable(*args, **kwargs):
        raise OperationalError("the database is restarting")

    monkeypatch.setattr(recording, "_lock_checks", unavailable)

    with pytest.raises(OperationalError):
        record(run(check, healthy_outcome()))


# --- tool lists bounded -----------------------------------------------------------------------


def many_tools(count: int, prefix: str = "tool") -> tuple[ToolInfo, ...]:
    return tuple(ToolInfo(f"{prefix}_{index:06d}") for index in range(count))


def test_a_tool_list_is_stored_capped(make_check, org):
    check = make_check(org)
    tools = many_tools(MAX_STORED_TOOLS + 500)
    outcome = dataclasses.replace(healthy_outcome(), tools=tools, tool_count=len(tools), tool_digest="big")

    record(run(check, outcome))

    stored = ToolList.objects.get(healthcheck=check)
    assert len(stored.tools) == MAX_STORED_TOOLS
    assert ProbeResult.objects.get(healthcheck=check).tool_count == MAX_STORED_TOOLS + 500


def test_a_tool_change_keeps_the_first_names_and_every_count(make_check, org):
    check = make_check(org)
    before, after = many_tools(1000, "old"), many_tools(700, "new")
    for minute, tools, digest in ((0, before, "before"), (1, after, "after")):
        outcome = dataclasses.replace(
            healthy_outcome(), tools=tools, tool_count=len(tools), tool_digest=digest
        )
        record(run(check, outcome, slot=SLOT + timedelta(minutes=minute)))

    change = ToolChange.objects.get(healthcheck=check)
    assert (change.removed_count, change.added_count) == (1000, 700)
    assert change.removed == [tool.name for tool in before[:MAX_CHANGE_NAMES]]
    assert change.added == [tool.name for tool in after[:MAX_CHANGE_NAMES]]


def test_pruning_deletes_the_tool_lists_no_result_refers_to(make_check, org, now):
    check = make_check(org)
    old = now - timedelta(days=120)  # the paid plan keeps results 90 days
    for minute, digest in enumerate(("gone", "flapped-back", "current")):
        outcome = healthy_outcome(digest)
        record(run(check, outcome, slot=old + timedelta(minutes=minute)))
    # A recent result carries flapped-back again: its (old) list is still referred to.
    record(run(check, healthy_outcome("flapped-back"), slot=now - timedelta(hours=1)))
    record(run(check, healthy_outcome("current"), slot=now - timedelta(minutes=30)))

    results_prune(now=now)

    assert set(ToolList.objects.filter(healthcheck=check).values_list("digest", flat=True)) == {
        "flapped-back",
        "current",
    }


def test_pruning_keeps_the_current_tool_list_when_its_results_are_gone(make_check, org, now):
    check = make_check(org)
    record(run(check, healthy_outcome("current"), slot=now - timedelta(days=120)))
    down = ProbeOutcome(status=Status.DOWN, kind=FailureKind.TIMEOUT, reason="Timed out", timings=Timings())
    record(run(check, down, slot=now - timedelta(minutes=5)))

    results_prune(now=now)

    check.refresh_from_db()
    assert check.tool_digest == "current"
    assert ToolList.objects.filter(healthcheck=check, digest="current").exists()


def test_pruning_leaves_another_plans_recent_tool_lists(make_check, make_org, now):
    check = make_check(make_org(plan="free"))
    record(run(check, healthy_outcome("a"), slot=now - timedelta(days=2)))
    record(run(check, healthy_outcome("b"), slot=now - timedelta(days=1)))

    results_prune(now=now)

    assert ToolList.objects.filter(healthcheck=check).count() == 2


# --- tool changes, paged -----------------------------------------------------------------------


def tool_changes(check: Healthcheck, count: int) -> None:
    for minute in range(count + 1):
        tools = many_tools(3, f"gen{minute}")
        outcome = dataclasses.replace(healthy_outcome(), tools=tools, tool_count=3, tool_digest=f"d{minute}")
        record(run(check, outcome, slot=SLOT + timedelta(minutes=minute)))


def test_tool_changes_are_paged_by_cursor_through_every_change_once(make_check, org, client):
    check = make_check(org)
    tool_changes(check, 5)
    url = f"/api/v1/healthchecks/{check.public_id}/tool-changes/"

    seen = []
    page = client.get(url, {"page_size": 2}).json()
    pages = 1
    while True:
        assert set(page) == {"next", "previous", "results"}
        assert len(page["results"]) <= 2
        seen.extend((change["at"], change["digest"]) for change in page["results"])
        if not page["next"]:
            break
        page = client.get(page["next"]).json()
        pages += 1

    assert pages == 3
    assert len(seen) == len(set(seen)) == 5
    assert [at for at, _ in seen] == sorted((at for at, _ in seen), reverse=True)


def test_a_page_of_tool_changes_is_bounded(make_check, org, client):
    check = make_check(org)
    tool_changes(check, 105)
    url = f"/api/v1/healthchecks/{check.public_id}/tool-changes/"

    assert len(client.get(url).json()["results"]) == 20
    assert len(client.get(url, {"page_size": 10_000}).json()["results"]) == 100
