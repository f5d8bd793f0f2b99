"""Hostile targets in one region batch hurt only their own checks, never another organization's.

One batch holds a target of every hostile class (tests/monitors/hostile_server.py) for one
organization, and healthy MCP checks of another organization against the fast loopback server.
The worker runs it as in production (``execute_batch``) and records it; on SQLite here and on
PostgreSQL in CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest
from hostile_server import Seen, hostile_targets, silent_dns

from monitors.models import Healthcheck, ProbeResult
from monitors.services import healthcheck_create
from monitors.worker.execution import execute_batch
from probes.checks.http import HTTP
from probes.checks.mcp import MCP

SLOT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REGION = "eu-west"
KEY = "sk-live-4f9a8b7c6d5e0a1b"
HEADERS = {"Authorization": f"Bearer {KEY}"}
HEALTHY = 6

# path → (check type, the kind its result must have: "" for up)
HOSTILE = {
    "/poison/mcp": (MCP, ""),
    "/poison-error/mcp": (MCP, "jsonrpc_error"),
    "/flood/mcp": (MCP, "too_large"),
    "/deep/mcp": (MCP, "protocol"),
    "/echo/mcp": (MCP, "http_status"),
    "/redirect/mcp": (MCP, "redirect_refused"),
    "/redirect/page": (HTTP, ""),
}


@pytest.fixture(scope="module")
def targets() -> Iterator[tuple[str, Seen]]:
    with hostile_targets() as served:
        yield served


@pytest.fixture
def batch(make_org, targets, fast_mcp, settings) -> dict[str, Healthcheck]:
    """Create the hostile checks (one organization) and the healthy ones (another); return them by name."""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    base, _seen = targets
    attacker, victim = make_org(slug="attacker"), make_org(slug="victim")
    checks: dict[str, Healthcheck] = {}
    for path, (kind, _expected) in HOSTILE.items():
        checks[path] = create(attacker, kind, base + path)
    for index in range(HEALTHY):
        checks[f"healthy {index}"] = create(victim, MCP, fast_mcp)
    return checks


def create(organization, kind, uri: str, *, timeout: int = 10) -> Healthcheck:
    return healthcheck_create(
        organization=organization,
        name=uri.rsplit("/", 2)[-2],
        check_type=kind,
        config={"uri": uri, "headers": HEADERS, "timeout": timeout},
        now=SLOT,
        region_slugs=[REGION],
        rules={"recheck_count": 0},
    )


def run(checks: dict[str, Healthcheck]) -> dict[str, ProbeResult]:
    # Hostile and healthy interleaved, as a batch of many tenants would hold them.
    items: list[list[int | str]] = [[check.id, SLOT.isoformat(), 0] for check in checks.values()]
    execute_batch(REGION, items[::2] + items[1::2], enqueue=lambda *args: None)
    results = {result.healthcheck_id: result for result in ProbeResult.objects.filter(slot=SLOT)}
    return {name: results[check.id] for name, check in checks.items() if check.id in results}


def test_every_check_of_a_hostile_batch_gets_a_result(batch):
    results = run(batch)

    assert sorted(results) == sorted(batch)


def test_the_healthy_checks_of_another_organization_are_up_within_their_timeout(batch):
    results = run(batch)

    for index in range(HEALTHY):
        result = results[f"healthy {index}"]
        assert (result.status, result.kind) == ("up", "")
        # A hang guard only: a healthy check starved by its neighbours would hit its timeout.
        assert result.total_ms is not None
        assert result.total_ms < 10_000


@pytest.mark.parametrize("path", list(HOSTILE))
def test_each_hostile_target_fails_only_its_own_check_with_its_kind(batch, path):
    result = run(batch)[path]

    expected = HOSTILE[path][1]
    assert result.kind == expected
    assert result.status == ("up" if not expected else "down")


def test_no_stored_text_holds_nul_or_a_lone_surrogate(batch):
    results = run(batch).values()

    for result in results:
        for text in (result.reason, result.server_name, result.server_version, *result.missing_tools):
            assert "\x00" not in text
            assert not any("\ud800" <= ch <= "\udfff" for ch in text)


def test_no_stored_reason_holds_the_key_in_any_form(batch):
    results = run(batch).values()

    for result in results:
        assert KEY[4:].lower() not in result.reason.lower()
        assert KEY[:12] not in result.reason


def test_the_key_never_reaches_another_origin(batch, targets):
    run(batch)

    _base, seen = targets
    assert seen.secrets_sent_to("/collected") == []


def test_names_whose_dns_never_answers_do_not_starve_the_healthy_checks(make_org, fast_mcp, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    port = urlsplit(fast_mcp).port
    attacker, victim = make_org(slug="attacker"), make_org(slug="victim")
    with silent_dns() as dns:
        settings.UPTIMY_DNS_SERVERS = [dns]
        silent = [
            create(attacker, MCP, f"http://silent-{index}.hostile.test:{port}/mcp", timeout=3)
            for index in range(12)
        ]
        healthy = [
            create(victim, MCP, f"http://healthy-{index}.victim.test:{port}/mcp") for index in range(HEALTHY)
        ]

        results = run({str(check.id): check for check in silent + healthy})

    for check in healthy:
        assert (results[str(check.id)].status, results[str(check.id)].kind) == ("up", "")
    for check in silent:
        assert results[str(check.id)].kind in ("dns", "timeout")
