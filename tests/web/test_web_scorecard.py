"""The healthcheck page's Scorecard section: N/22 passed, each verdict in words, why, and the freshness label."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from monitors.models import ProbeResult, Region, ToolChange
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


def test_the_scorecard_keeps_the_page_s_query_count_whatever_the_evidence(owner, org, make_check):
    healthcheck = make_check(org)
    path = f"/app/healthchecks/{healthcheck.public_id}/"
    attempt(healthcheck, ago=timedelta(minutes=1))
    before = _queries_for(owner, path)
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
