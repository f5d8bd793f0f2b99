"""The MCP conformance suite's server scenarios against Uptimy's own /mcp (a live `manage.py serve`).

The suite sends no credential and has no option for one, while /mcp answers 401 to anyone without
one; it runs through a loopback proxy that adds the demo organization's API key to every request,
as an assistant's connector does, and passes the Host and Origin on untouched (the DNS-rebinding
scenario tests the server's own checks of both).

Most of the suite's scenarios call the fixture tools, resources and prompts of its reference
server (test_image_content, test://static-text, …), which a product server does not have: those
are listed in NOT_APPLICABLE with the reason. Every scenario of the active suite is classified,
so a new one fails the test until it is.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PEERS_SWITCH, unavailable
from tests.live_uptimy import BearerProxy
from tests.peers.peer_support import CONFORMANCE_JS, NODE22, ROOT

pytestmark = pytest.mark.peers

# Scenarios whose every check must succeed (no FAILURE, no WARNING).
APPLIES = {
    "server-initialize": "initialize answers the protocol, capabilities and server info",
    "ping": "ping answers an empty result",
    "tools-list": "every tool has a name, a description and an object input schema",
    "tools-call-error": "a tool's failure is an isError result, not a protocol error",
    "dns-rebinding-protection": "a foreign Host or Origin is refused (ALLOWED_HOSTS), a loopback one accepted",
    "server-session-lifecycle": "the suite sees a stateless server (no session id) and skips its session checks",
}
NO_FIXTURE_TOOL = "calls the suite's fixture tool of its reference server; Uptimy's tools are its own"
NOT_APPLICABLE = {
    "logging-set-level": "no logging capability: a tool's outcome is in its result, nothing is streamed",
    "completion-complete": "no prompts or resource templates, so nothing to complete",
    "tools-call-simple-text": NO_FIXTURE_TOOL + " (it passes only because the unknown tool's error is text)",
    "tools-call-image": NO_FIXTURE_TOOL,
    "tools-call-audio": NO_FIXTURE_TOOL,
    "tools-call-embedded-resource": NO_FIXTURE_TOOL,
    "tools-call-mixed-content": NO_FIXTURE_TOOL,
    "tools-call-with-logging": NO_FIXTURE_TOOL,
    "tools-call-with-progress": NO_FIXTURE_TOOL,
    "tools-call-sampling": NO_FIXTURE_TOOL + "; Uptimy's tools never ask the client to sample",
    "tools-call-elicitation": NO_FIXTURE_TOOL + "; Uptimy's tools never elicit (keys are added in the app)",
    "elicitation-sep1034-defaults": "elicitation: Uptimy's tools never elicit",
    "elicitation-sep1330-enums": "elicitation: Uptimy's tools never elicit",
    "server-sse-multiple-streams": "needs a session and SSE streams; /mcp is stateless with JSON answers",
    "resources-list": "no resources capability is advertised, so resources/list is method not found",
    "prompts-list": "no prompts capability is advertised, so prompts/list is method not found",
    "resources-read-text": "no resources: Uptimy serves tools only",
    "resources-read-binary": "no resources: Uptimy serves tools only",
    "resources-templates-read": "no resources: Uptimy serves tools only",
    "resources-subscribe": "no resources: Uptimy serves tools only",
    "resources-unsubscribe": "no resources: Uptimy serves tools only",
    "prompts-get-simple": "no prompts: Uptimy serves tools only",
    "prompts-get-with-args": "no prompts: Uptimy serves tools only",
    "prompts-get-embedded-resource": "no prompts: Uptimy serves tools only",
    "prompts-get-with-image": "no prompts: Uptimy serves tools only",
}


@pytest.fixture(scope="module")
def checks(live_uptimy, tmp_path_factory) -> dict[str, list[dict]]:
    """Run the active server suite once; return each scenario's checks (checks.json)."""
    if not (NODE22.exists() and CONFORMANCE_JS.exists()):
        unavailable(
            "@modelcontextprotocol/conformance (with node@22) is not installed: run tests/peers/install",
            switch=PEERS_SWITCH,
        )
    out = tmp_path_factory.mktemp("conformance-server")
    proxy = BearerProxy(live_uptimy.base, live_uptimy.key)
    try:
        subprocess.run(
            [str(NODE22), str(CONFORMANCE_JS), "server", "--url", f"{proxy.url}/mcp", "-o", str(out)],
            cwd=ROOT,
            env={**os.environ, "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,  # the inapplicable scenarios fail; each is graded below
        )
    finally:
        proxy.close()
    found: dict[str, list[dict]] = {}
    for path in out.rglob("checks.json"):
        scenario = _scenario(path.parent)
        found[scenario] = json.loads(path.read_text())
    return found


def _scenario(folder: Path) -> str:
    """Return the scenario of a results folder: server-<scenario>-<ISO time with dashes>."""
    match = re.fullmatch(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", folder.name)
    assert match, folder.name
    return match.group(1)


def test_every_scenario_of_the_suite_is_classified(checks):
    assert set(checks) == set(APPLIES) | set(NOT_APPLICABLE)


@pytest.mark.parametrize("scenario", sorted(APPLIES))
def test_an_applicable_scenario_passes(checks, scenario):
    bad = [check for check in checks[scenario] if check["status"] in ("FAILURE", "WARNING")]

    assert checks[scenario], f"{scenario} ran no check"
    assert bad == [], f"{scenario} ({APPLIES[scenario]}): {bad}"
