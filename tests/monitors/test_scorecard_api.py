"""GET /api/v1/healthchecks/{id}/scorecard/: the 22 checks of an MCP check, its shape, tenancy, and real servers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from monitors.models import Healthcheck, ProbeResult, Region
from monitors.services import healthcheck_create, rollups_refresh
from monitors.worker.execution import execute_batch
from probes.checks.http import HTTP
from probes.checks.mcp import MCP
from tests.monitors.conftest import Captured, start_sdk_peer, stop

URL = "/api/v1/healthchecks/"
FIELDS = {"number", "name", "verdict", "observed_at", "outdated", "outdated_label", "reason", "evidence"}
P, F, N = "passed", "failed", "not_measured"


def scorecard_url(healthcheck: Healthcheck) -> str:
    return f"{URL}{healthcheck.public_id}/scorecard/"


@pytest.fixture
def mcp_check(org, now) -> Healthcheck:
    return healthcheck_create(
        organization=org, name="docs", check_type=MCP, config={"uri": "https://mcp.example.com/mcp"}, now=now
    )


def attempt(healthcheck: Healthcheck, *, ago: timedelta, **fields) -> None:
    at = timezone.now() - ago
    ProbeResult.objects.create(
        healthcheck=healthcheck,
        region=Region.objects.get(slug="eu-west"),
        slot=at,
        checked_at=at,
        recorded_at=at,
        **{"status": "up", "tool_count": 2, "total_ms": 300.0, "protocol": "2025-06-18", **fields},
    )


def test_the_scorecard_lists_the_22_checks_in_order_with_their_fields(client, mcp_check):
    answer = client.get(scorecard_url(mcp_check))

    assert answer.status_code == 200
    body = answer.json()
    assert body["healthcheck"] == str(mcp_check.public_id)
    assert body["total"] == 22
    assert [check["number"] for check in body["checks"]] == list(range(1, 23))
    assert all(set(check) == FIELDS for check in body["checks"])
    https = body["checks"][4]
    assert (https["name"], https["verdict"], https["reason"]) == ("HTTPS", P, "The endpoint uses HTTPS")
    assert https["evidence"] == {"url": "https://mcp.example.com/mcp"}


def test_passed_counts_the_passed_checks(client, mcp_check):
    attempt(mcp_check, ago=timedelta(minutes=1), server_name="docs")

    body = client.get(scorecard_url(mcp_check)).json()

    assert body["passed"] == sum(1 for check in body["checks"] if check["verdict"] == P)
    # Reachable, handshake, lists tools, current protocol, HTTPS, open access.
    assert {check["number"] for check in body["checks"] if check["verdict"] == P} == {1, 2, 3, 4, 5, 10}


def test_evidence_over_a_day_old_is_labelled_outdated(client, mcp_check):
    attempt(mcp_check, ago=timedelta(hours=25), server_name="docs")

    reachable = client.get(scorecard_url(mcp_check)).json()["checks"][0]

    assert (reachable["verdict"], reachable["outdated"], reachable["outdated_label"]) == (
        P,
        True,
        "Outdated check",
    )


def test_fresh_evidence_has_no_outdated_label(client, mcp_check):
    attempt(mcp_check, ago=timedelta(minutes=5), server_name="docs")

    reachable = client.get(scorecard_url(mcp_check)).json()["checks"][0]

    assert (reachable["outdated"], reachable["outdated_label"]) == (False, None)


def test_a_read_only_key_reads_the_scorecard(read_client, mcp_check):
    assert read_client.get(scorecard_url(mcp_check)).status_code == 200


def test_another_organization_s_check_is_not_found(other_client, mcp_check):
    assert other_client.get(scorecard_url(mcp_check)).status_code == 404


def test_a_check_of_another_type_has_no_scorecard_and_the_answer_says_so(client, org, now):
    site = healthcheck_create(
        organization=org, name="site", check_type=HTTP, config={"uri": "https://example.com/"}, now=now
    )

    answer = client.get(scorecard_url(site))

    assert answer.status_code == 404
    assert answer.json()["detail"] == "Only MCP healthchecks have a scorecard, not HTTP checks."


def test_the_schema_documents_the_scorecard(client):
    document = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()

    operation = document["paths"]["/api/v1/healthchecks/{id}/scorecard/"]["get"]
    check = document["components"]["schemas"]["ScorecardCheck"]["properties"]
    assert "200" in operation["responses"]
    assert set(check) == FIELDS
    verdict = check["verdict"]
    if "$ref" in verdict:
        verdict = document["components"]["schemas"][verdict["$ref"].rsplit("/", 1)[1]]
    assert verdict["enum"] == ["passed", "failed", "not_measured"]


# --- a real server, through the worker ----------------------------------------------------------


@pytest.fixture
def sdk_server() -> Iterator[str]:
    """Serve the official Python SDK's streamable HTTP server (tests/peers/servers/sdk_servers.py)."""
    process, url = start_sdk_peer("stateful")
    try:
        yield url
    finally:
        stop(process)


def run_twice(healthcheck: Healthcheck) -> None:
    """Run the check through the worker's batch path in one region, for two slots a minute apart."""
    latest = timezone.now().replace(microsecond=0) - timedelta(seconds=5)
    for slot in (latest - timedelta(minutes=1), latest):
        execute_batch("eu-west", [[healthcheck.id, slot.isoformat(), 0]], enqueue=Captured())


# Worked out by hand from the SDK server's tools (sdk_servers.add_tools): search_docs, get_status
# and echo, each readOnlyHint, descriptions of 31, 26 and 19 characters, inputs q, text and times
# without descriptions; served over plain HTTP on loopback, no sign-in, no listing.
SDK_SERVER_CARD = {
    1: P,  # Reachable: listed tools, well within 12 s
    2: P,  # Valid handshake: a supported version and the server's nonempty name
    3: P,  # Lists tools: 3
    4: P,  # Current protocol: the SDK agrees on the latest the engine offers, 2025-06-18 or later
    5: F,  # HTTPS: http://127.0.0.1…
    6: N,  # Fast (p50): 2 samples in 7 days, 5 needed
    7: N,  # Consistent (p95): 2 samples, 20 needed
    8: N,  # Reliable: 2 attempts in 30 days, 30 needed
    9: P,  # Stable tool list: 2 successes, no removal, no newly required input
    10: P,  # Open access: tools listed without credentials
    11: N,  # Standard auth: not applicable, no authentication required
    12: N,  # Free tier cited: no pricing evidence, unknown
    13: F,  # Tools described: "Echo the text back." is 19 characters
    14: P,  # Valid input schemas: every schema is an object
    15: F,  # Parameters documented: 0 of 3 inputs described
    16: P,  # Safety hints: readOnlyHint on each
    **{number: N for number in range(17, 23)},  # publisher checks: no listing
}


def test_the_official_sdk_server_s_scorecard_matches_the_table_worked_out_by_hand(make, client, sdk_server):
    healthcheck = make(sdk_server)
    run_twice(healthcheck)

    body = client.get(scorecard_url(healthcheck)).json()

    assert {check["number"]: check["verdict"] for check in body["checks"]} == SDK_SERVER_CARD
    assert body["passed"] == 8
    assert body["checks"][2]["evidence"] == {"tool_count": 3}
    assert body["checks"][14]["evidence"] == {"declared": 3, "documented": 0}


def test_rolling_up_the_hours_leaves_the_scorecard_as_it_was(make, client, sdk_server):
    healthcheck = make(sdk_server)
    run_twice(healthcheck)
    before = client.get(scorecard_url(healthcheck)).json()["checks"]

    rollups_refresh(now=timezone.now())
    after = client.get(scorecard_url(healthcheck)).json()["checks"]

    assert [(check["verdict"], check["evidence"]) for check in after] == [
        (check["verdict"], check["evidence"]) for check in before
    ]
