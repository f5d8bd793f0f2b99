"""The scorecard's connection and tool checks on real servers' answers, against tables worked out by hand.

The SDK servers (tests/peers/servers/sdk_servers.py) and server-everything are read like any
remote server; the expected verdicts below come from reading their tool lists, not from the code.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitors import scorecard as sc
from monitors.scorecard import ToolList, Verdict

pytestmark = pytest.mark.peers

P, F, N = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_MEASURED
AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def card(outcome, url: str) -> dict[int, Verdict]:
    """Return the verdicts of the checks one attempt decides (connection, HTTPS, open access, tools)."""
    latest = sc.attempt_of(outcome, at=AT)
    listed = ToolList(outcome.tools, AT) if latest.tools_listed else None
    results = [
        sc.reachable(latest),
        sc.valid_handshake(latest),
        sc.lists_tools(latest),
        sc.current_protocol(latest),
        sc.https(url, observed_at=AT),
        sc.open_access(None, latest),
        sc.tools_described(listed),
        sc.valid_input_schemas(listed),
        sc.parameters_documented(listed),
        sc.safety_hints(listed),
    ]
    return {result.number: result.verdict for result in results}


def test_the_python_sdk_server(peers, mcp_check):
    url = peers.sdk("stateful") + "/mcp"

    verdicts = card(mcp_check(url), url)

    # Three read-only tools; "Echo the text back." has 19 characters, and none of the three
    # inputs (q, text, times) has a description.
    assert verdicts == {1: P, 2: P, 3: P, 4: P, 5: F, 10: P, 13: F, 14: P, 15: F, 16: P}


def test_server_everything(peers, mcp_check):
    url = peers.everything("streamableHttp") + "/mcp"

    verdicts = card(mcp_check(url), url)

    # 13 tools, every description 28 characters or more, every schema an object, readOnlyHint
    # on each; 15 of 16 inputs described (get-resource-reference's resourceType is not): 93 %.
    assert verdicts == {1: P, 2: P, 3: P, 4: P, 5: F, 10: P, 13: P, 14: P, 15: P, 16: P}


def test_server_everything_documents_15_of_its_16_inputs(peers, mcp_check):
    outcome = mcp_check(peers.everything("streamableHttp") + "/mcp")

    result = sc.parameters_documented(ToolList(outcome.tools, AT))

    assert result.evidence == {"declared": 16, "documented": 15}


def test_a_server_behind_sign_in_leaves_the_connection_checks_not_measured_and_fails_open_access(
    peers, mcp_check
):
    url = peers.sdk("oauth-root") + "/mcp"

    verdicts = card(mcp_check(url), url)

    assert verdicts == {1: N, 2: N, 3: N, 4: N, 5: F, 10: F, 13: N, 14: N, 15: N, 16: N}


# --- through the worker: what the database keeps of a sign-in ---------------------------------


@pytest.mark.django_db
def test_a_server_behind_sign_in_passes_standard_auth_through_the_worker(peers, org, settings):
    from django.utils import timezone

    from monitors.selectors import scorecard_of
    from monitors.services import healthcheck_create
    from monitors.worker.execution import execute_batch
    from probes.checks.mcp import MCP
    from tests.monitors.conftest import Captured

    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    now = timezone.now()
    healthcheck = healthcheck_create(
        organization=org,
        name="behind sign-in",
        check_type=MCP,
        config={"uri": peers.sdk("oauth-root") + "/mcp", "timeout": 5},
        now=now,
        interval_seconds=3600,
        region_slugs=["eu-west"],
    )
    slot = now.replace(microsecond=0)
    execute_batch("eu-west", [[healthcheck.id, slot.isoformat(), 0]], enqueue=Captured())

    card = scorecard_of(healthcheck=healthcheck, now=timezone.now())

    # The SDK server answers 401 and serves its RFC 9728 metadata, which the engine's sign-in
    # discovery records: the connection and tool checks wait for a key, a 401 is no attempt (so
    # reliability and stability have none), open access fails and standard auth passes.
    assert {result.number: result.verdict for result in card.results} == {
        1: N, 2: N, 3: N, 4: N, 5: F, 6: N, 7: N, 8: N, 9: N, 10: F, 11: P, 12: N,
        13: N, 14: N, 15: N, 16: N, **{number: N for number in range(17, 23)},
    }  # fmt: skip
