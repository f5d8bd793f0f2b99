"""Run the MCP conformance suite's client scenarios against probes/conformance_client.py.

Every client scenario the suite lists runs once against the expected-failures baseline in
conformance-expected-failures.yml: the suite itself fails a scenario on any unexpected failure
or stale entry. On top of that, these tests read each scenario's checks.json and grade the
discovery checks by id, and read the check's own verdict (the JSON line the client prints), so
a regression inside a scenario that is expected to fail for other reasons cannot hide.

The suite's ``--suite all`` starts all ~48 scenarios (a server and a client process each) at
once, which on a busy 2-core machine starved checks past their 10 s deadline. So the scenarios
run one per suite invocation, CONFORMANCE_JOBS at a time (UPTIMY_CONFORMANCE_JOBS overrides),
each with the same baseline, and the client gets a deadline of CLIENT_TIMEOUT seconds instead
of the default 10. Neither hides a regression: the verdicts are still graded one by one (a
check that hangs still ends as "timeout" and fails those tests), nothing is retried, and a
scenario that fails is reported with its own output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from peer_support import HERE, NODE22, ROOT

BASELINE = HERE / "conformance-expected-failures.yml"
CLIENT_TIMEOUT = 30
# The suite splits the command on spaces and appends the scenario server's URL.
CLIENT_COMMAND = f"{sys.executable} -m probes.conformance_client --timeout {CLIENT_TIMEOUT}"
SCENARIO_TIMEOUT_MS = (CLIENT_TIMEOUT + 30) * 1000
CONFORMANCE_JOBS = int(os.environ.get("UPTIMY_CONFORMANCE_JOBS") or min(8, 2 * (os.cpu_count() or 2)))
# The session fixture ``suite`` runs every scenario (~48 suite processes, each bounded by its
# own subprocess timeout) inside whichever test asks for it first, and pytest-timeout counts
# fixture set-up against that test. The suite-wide 120 s is a hang guard for one test, not for
# this: on a loaded 2-core machine the set-up alone took 39-57 s. Hangs are still caught, by
# each scenario's timeout and, as a backstop, by this one.
SUITE_TEST_TIMEOUT = 900

pytestmark = [pytest.mark.peers, pytest.mark.timeout(SUITE_TEST_TIMEOUT)]

# Scenarios the check passes in full (all checks SUCCESS, INFO or SKIPPED).
PASSING = (
    "initialize",
    "auth/resource-mismatch",
    "auth/metadata-issuer-mismatch",
    "json-schema-ref-no-deref",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
# Auth scenarios whose sign-in is discoverable: the check must say up, access oauth, after
# fetching the protected resource metadata and the authorization server metadata.
DISCOVERABLE = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
)
DISCOVERY_CHECKS = ("prm-pathbased-requested", "authorization-server-metadata")
# Traps: the suite emits these only, as FAILURE, when a client asks the wrong URL first.
TRAP_CHECKS = ("prm-priority-order", "authorization-server-metadata-wrong-path")
BAD = ("FAILURE", "WARNING")


@dataclass
class ScenarioRun:
    returncode: int
    output: str


@dataclass
class SuiteRun:
    runs: dict[str, ScenarioRun]
    results: dict[str, Path]

    def checks(self, scenario: str) -> list[dict[str, Any]]:
        assert scenario in self.results, f"{scenario} did not run:\n{self.output[-3000:]}"
        checks: list[dict[str, Any]] = json.loads((self.results[scenario] / "checks.json").read_text())
        return checks

    def verdict(self, scenario: str) -> dict[str, Any]:
        """Return the outcome JSON that probes.conformance_client printed in this scenario."""
        stdout = (self.results[scenario] / "stdout.txt").read_text().strip().splitlines()
        assert stdout, f"the client printed nothing in {scenario}"
        verdict: dict[str, Any] = json.loads(stdout[-1])
        assert verdict["scenario"] == scenario
        return verdict

    def status(self, scenario: str, check_id: str) -> list[str]:
        return [check["status"] for check in self.checks(scenario) if check["id"] == check_id]


def load_baseline() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(BASELINE.read_text())
    return data


def list_scenarios(conformance_cli: list[str]) -> set[str]:
    listed = subprocess.run(
        [*conformance_cli, "list", "--client"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    return set(re.findall(r"^\s+- (\S+)", listed, re.MULTILINE))


@pytest.fixture(scope="session")
def suite(conformance_cli, tmp_path_factory) -> SuiteRun:
    """Run every client scenario once against the baseline, CONFORMANCE_JOBS at a time."""
    out = tmp_path_factory.mktemp("conformance")
    env = {
        **os.environ,
        "PATH": f"{NODE22.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
    }

    def run(scenario: str) -> tuple[str, ScenarioRun]:
        command = [
            *conformance_cli,
            "client",
            "--command",
            CLIENT_COMMAND,
            "--scenario",
            scenario,
            "--expected-failures",
            str(BASELINE),
            "--timeout",
            str(SCENARIO_TIMEOUT_MS),
            "-o",
            str(out),
        ]
        try:
            result = subprocess.run(
                command,
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=SCENARIO_TIMEOUT_MS / 1000 + 60,
            )
        except subprocess.TimeoutExpired as exc:
            return scenario, ScenarioRun(-1, f"the suite did not finish: {exc}")
        return scenario, ScenarioRun(result.returncode, result.stdout + result.stderr)

    with ThreadPoolExecutor(max_workers=CONFORMANCE_JOBS) as pool:
        runs = dict(pool.map(run, sorted(list_scenarios(conformance_cli))))
    results: dict[str, Path] = {}
    for checks in out.rglob("checks.json"):
        relative = checks.parent.relative_to(out).as_posix()
        match = re.fullmatch(r"(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", relative)
        if match:
            results[match.group(1)] = checks.parent
    return SuiteRun(runs, results)


def test_every_suite_scenario_is_classified(conformance_cli):
    scenarios = list_scenarios(conformance_cli)
    entries = load_baseline()["client"]
    baselined = {entry.split(":", 1)[0] for entry in entries}

    assert scenarios == baselined | set(PASSING), (
        "new or removed scenarios: classify them in conformance-expected-failures.yml or PASSING"
    )
    assert set(DISCOVERABLE) <= scenarios


def test_every_expected_failure_has_a_reason():
    baseline = load_baseline()
    reasons = baseline["reasons"]

    missing = [
        entry
        for entry in baseline["client"]
        if (entry.split(":", 1)[1] if ":" in entry else entry) not in reasons
    ]

    assert not missing, f"expected failures without a reason: {missing}"
    assert all(isinstance(text, str) and len(text) > 20 for text in reasons.values())
    assert len(set(baseline["client"])) == len(baseline["client"])


def test_suite_baseline_holds(suite):
    """The suite's own verdict on every scenario: no unexpected failure, no stale expected failure."""
    failed = {
        scenario: f"exit {run.returncode}:\n{run.output[-2500:]}"
        for scenario, run in sorted(suite.runs.items())
        if run.returncode != 0 or "Baseline check passed" not in run.output
    }

    assert len(suite.runs) >= len(PASSING) + len(DISCOVERABLE)
    assert not failed, "\n\n".join(f"--- {scenario}: {words}" for scenario, words in failed.items())


@pytest.mark.parametrize("scenario", PASSING)
def test_scenario_passes_in_full(suite, scenario):
    bad = [(check["id"], check["status"]) for check in suite.checks(scenario) if check["status"] in BAD]

    assert not bad


def test_initialize_scenario(suite):
    assert suite.status("initialize", "mcp-client-initialization") == ["SUCCESS"]
    verdict = suite.verdict("initialize")
    assert verdict["status"] == "up"
    assert verdict["access"] == "open"
    assert verdict["protocol"] in {"2025-11-25", "2025-06-18"}
    assert verdict["transport"] == "streamable-http"


@pytest.mark.parametrize("scenario", DISCOVERABLE)
def test_auth_discovery_checks_succeed(suite, scenario):
    for check_id in DISCOVERY_CHECKS:
        assert suite.status(scenario, check_id) == ["SUCCESS"], (scenario, check_id)
    for check_id in TRAP_CHECKS:
        assert "FAILURE" not in suite.status(scenario, check_id), (scenario, check_id)
    verdict = suite.verdict(scenario)
    assert verdict["status"] == "up", verdict
    assert verdict["access"] == "oauth"
    assert verdict["signin_server"]
    assert verdict["signin_discovery"] == "2025-06-18+"
    assert verdict["tools"] is None
    assert verdict["tool_names"] == []


def test_no_scenario_springs_a_discovery_trap(suite):
    sprung = [
        (scenario, check["id"])
        for scenario in suite.results
        for check in suite.checks(scenario)
        if check["id"] in TRAP_CHECKS and check["status"] in BAD
    ]

    assert not sprung


def test_resource_mismatch_is_refused(suite):
    assert suite.status("auth/resource-mismatch", "prm-pathbased-requested") == ["SUCCESS"]
    assert suite.status("auth/resource-mismatch", "resource-mismatch-rejected") == ["SUCCESS"]
    verdict = suite.verdict("auth/resource-mismatch")
    assert verdict["status"] == "down"
    assert verdict["kind"] == "signin_not_discoverable"
    assert "resource" in verdict["reason"]


def test_metadata_issuer_mismatch_is_refused(suite):
    scenario = "auth/metadata-issuer-mismatch"
    assert suite.status(scenario, "authorization-server-metadata") == ["SUCCESS"]
    assert suite.status(scenario, "sep-2468-client-validate-metadata-issuer") == ["SUCCESS"]
    verdict = suite.verdict(scenario)
    assert verdict["status"] == "down"
    assert verdict["kind"] == "signin_not_discoverable"
    assert "issuer" in verdict["reason"]


def test_2025_03_26_metadata_at_the_origin_is_discoverable_through_the_fallback(suite):
    """No protected resource metadata, RFC 8414 metadata at the MCP server's origin naming it as
    issuer: the SDK clients sign in there (the 2025-03-26 rule), so the check is up and says how
    (issue 9). Registration, authorization and token stay expected failures in the baseline."""
    scenario = "auth/2025-03-26-oauth-metadata-backcompat"
    assert suite.status(scenario, "authorization-server-metadata") == ["SUCCESS"]
    verdict = suite.verdict(scenario)
    assert verdict["status"] == "up", verdict
    assert verdict["access"] == "oauth"
    assert verdict["signin_discovery"] == "2025-03-26-fallback"
    # The scenario server is its own authorization server: its origin, the MCP URL minus /mcp.
    assert re.fullmatch(r"http://localhost:\d+", verdict["signin_server"]), verdict
    assert verdict["tools"] is None


def test_2025_03_26_server_without_any_metadata_asks_for_credentials(suite):
    """Only the 2025-03-26 default endpoints (/authorize, /token, /register at the origin): no
    metadata proves a sign-in, so the check says the server asks for credentials and publishes no
    OAuth sign-in (issue 23), as for a server that wants a plain key."""
    scenario = "auth/2025-03-26-oauth-endpoint-fallback"
    verdict = suite.verdict(scenario)

    assert verdict["status"] == "down"
    assert verdict["kind"] == "credentials_required"
    assert verdict["signin_discovery"] is None
    assert verdict.get("access") is None
    assert (
        "publishes no OAuth sign-in: no protected resource metadata, no authorization server metadata"
        in (verdict["reason"])
    )


@pytest.mark.parametrize("scenario", ["tools_call", "sse-retry", "elicitation-sep1034-client-defaults"])
def test_check_never_calls_tools_in_tool_scenarios(suite, scenario):
    verdict = suite.verdict(scenario)

    assert verdict["status"] == "up"
    assert verdict["tools"] >= 1
    # The suite grades the tool call itself; the check made none, so those checks failed.
    assert any(check["status"] == "FAILURE" for check in suite.checks(scenario))


def test_2026_only_servers_are_reported_as_not_supported(suite):
    for scenario in (
        "request-metadata",
        "http-standard-headers",
        "auth/authorization-server-migration",
        "sep-2322-client-request-state",
    ):
        verdict = suite.verdict(scenario)
        assert verdict["status"] == "down", scenario
        assert verdict["kind"] == "protocol", scenario
        assert "2026-07-28" in verdict["reason"], scenario
        assert "not supported yet" in verdict["reason"], scenario
