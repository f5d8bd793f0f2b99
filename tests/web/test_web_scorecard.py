"""The healthcheck page's Scorecard section: N/22 passed, each verdict in words, why, and the freshness label."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from monitors.models import ProbeResult, Region, ToolChange, ToolList, ToolListVersion
from monitors.services import rollups_refresh

pytestmark = pytest.mark.django_db


def attempt(healthcheck, *, ago: timedelta, **fields) -> None:
    at = timezone.now() - ago
    ProbeResult.objects.create(
        healthcheck=healthcheck,
        region=Region.objects.get(slug="eu-west"),
        slot=at,
        checked_at=at,
        recorded_at=at,
        **{
            "status": "up",
            "tool_count": 2,
            "total_ms": 300.0,
            "protocol": "2025-06-18",
            "server_name": "docs",
            **fields,
        },
    )


def page_of(owner, healthcheck) -> str:
    answer = owner.get(f"/app/healthchecks/{healthcheck.public_id}/")
    assert answer.status_code == 200
    return answer.content.decode()


def test_an_mcp_check_s_page_shows_how_many_of_the_22_checks_passed(owner, org, make_check):
    healthcheck = make_check(org)
    attempt(healthcheck, ago=timedelta(minutes=2))

    page = page_of(owner, healthcheck)

    assert "<h2>Scorecard</h2>" in page
    # Reachable, handshake, lists tools, current protocol, HTTPS, open access.
    assert "6/22 passed" in page


def test_each_check_shows_its_verdict_in_words_and_its_reason(owner, org, make_check):
    healthcheck = make_check(org, uri="http://mcp.example.com/mcp")

    page = page_of(owner, healthcheck)

    assert "<td>HTTPS</td>" in page
    assert '<span class="verdict verdict-failed"><span aria-hidden="true">✕</span> Failed</span>' in page
    assert "The endpoint does not use HTTPS" in page
    assert "Not measured</span>" in page
    assert "No listing describes this server" in page


def test_evidence_over_a_day_old_is_labelled_outdated_check(owner, org, make_check):
    healthcheck = make_check(org)
    attempt(healthcheck, ago=timedelta(hours=30))

    page = page_of(owner, healthcheck)

    assert '<span class="outdated">Outdated check</span>' in page
    assert "Passed</span>" in page


def test_fresh_evidence_carries_no_outdated_label(owner, org, make_check):
    healthcheck = make_check(org)
    attempt(healthcheck, ago=timedelta(minutes=2))

    assert "Outdated check" not in page_of(owner, healthcheck)


def test_an_http_check_s_page_has_no_scorecard(owner, org, make_check):
    healthcheck = make_check(org, type_name="http")

    assert "Scorecard" not in page_of(owner, healthcheck)


def _queries_for(owner, path: str) -> int:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        assert owner.get(path).status_code == 200
    return len(captured)


# The session, the user, the membership, the healthcheck with its regions and tags; region states,
# the newest result and latest attempt (one query), the tool list version (read once, shared with the
# scorecard), status changes, the chart, uptime (history, maintenance), tool changes, certificate changes, incidents, the
# uptime figures' two rollup reads, the check's own listing (shared with the scorecard too), and the
# scorecard's four own reads.
PAGE_QUERIES = 23


def test_the_page_reads_the_newest_result_and_the_tool_list_version_once(owner, org, make_check):
    healthcheck = make_check(org)
    tools = [{"name": "search_docs", "required_inputs": ["q"]}]
    ToolList.objects.create(healthcheck=healthcheck, digest="d1", tools=tools, first_seen_at=timezone.now())
    ToolListVersion.objects.create(
        healthcheck=healthcheck,
        digest="v1",
        tools=[{**tools[0], "description": "Search the docs"}],
        tool_count=1,
        first_seen_at=timezone.now(),
        current_since=timezone.now(),
    )
    attempt(healthcheck, ago=timedelta(minutes=1), tool_count=1, tool_digest="d1")
    path = f"/app/healthchecks/{healthcheck.public_id}/"

    # One more than without tools: the tool list the newest result names (its required inputs).
    assert _queries_for(owner, path) == PAGE_QUERIES + 1
    page = page_of(owner, healthcheck)
    assert "<code>search_docs</code> Search the docs" in page
    assert "tool list" in page.lower()


def test_the_scorecard_keeps_the_page_s_query_count_whatever_the_evidence(owner, org, make_check):
    healthcheck = make_check(org)
    path = f"/app/healthchecks/{healthcheck.public_id}/"
    attempt(healthcheck, ago=timedelta(minutes=1))
    before = _queries_for(owner, path)
    assert before == PAGE_QUERIES
    for hours in range(2, 40):
        attempt(healthcheck, ago=timedelta(hours=hours))
    rollups_refresh(now=timezone.now(), hours=40)
    for days in range(3):
        ToolChange.objects.create(
            healthcheck=healthcheck,
            at=timezone.now() - timedelta(days=days),
            region=Region.objects.get(slug="eu-west"),
            previous_digest="a",
            digest=f"b{days}",
            removed_count=1,
        )

    assert _queries_for(owner, path) == before
