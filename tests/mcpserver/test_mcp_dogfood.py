"""Dogfood: Uptimy's own MCP check (the probes engine, as every region runs it) against Uptimy's own /mcp."""

from __future__ import annotations

import json
import subprocess
import sys

from probes.checks.mcp import parse_mcp_config
from probes.runner import ProbeEnv, run_check_sync
from probes.types import Access, Status
from tests.live_uptimy import ROOT

TOOLS = (
    "add_monitors",
    "get_incidents",
    "get_monitor",
    "list_monitors",
    "pause_monitor",
    "resume_monitor",
    "run_check",
)


def check(live, **config):
    """Run one check of the live /mcp with its API key, as a region's worker would (loopback allowed)."""
    raw = {"uri": live.mcp_url, "headers": {"Authorization": f"Bearer {live.key}"}, **config}
    return run_check_sync(parse_mcp_config(raw), ProbeEnv(allow_private=True))


def test_with_an_api_key_the_check_is_up_with_key_access_and_every_tool(live_uptimy):
    outcome = check(live_uptimy, requiredTools=["add_monitors"])

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.access is Access.KEY
    assert (outcome.server.name, outcome.protocol) == ("Uptimy", "2025-11-25")
    assert tuple(sorted(outcome.tool_names)) == TOOLS
    assert outcome.missing_tools == ()


def test_a_tool_uptimy_does_not_serve_is_missing_and_the_check_down(live_uptimy):
    outcome = check(live_uptimy, requiredTools=["add_monitors", "delete_everything"])

    assert outcome.status is Status.DOWN
    assert outcome.missing_tools == ("delete_everything",)


def test_mcpcheck_reports_its_own_server_up(live_uptimy):
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "mcpcheck",
            live_uptimy.mcp_url,
            "--header",
            f"Authorization: Bearer {live_uptimy.key}",
            "--required-tool",
            "add_monitors",
            "--json",
        ],
        cwd=ROOT,
        env={**live_uptimy.env, "UPTIMY_ALLOW_PRIVATE_TARGETS": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    result = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (result["status"], result["access"], result["tools"]) == ("up", "key", len(TOOLS))
    assert live_uptimy.key not in done.stdout + done.stderr
