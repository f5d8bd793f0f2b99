"""Run one Uptimy MCP check as the client under test of the MCP conformance suite.

The suite (npm ``@modelcontextprotocol/conformance``) starts a scenario server, appends its URL
to this command line as the last argument and names the scenario in
``MCP_CONFORMANCE_SCENARIO``. This entry point runs exactly the check a customer's monitor runs
(initialize, notifications/initialized, tools/list; a keyless sign-in discovery on a 401),
with the address guard off because the suite serves on loopback, prints the outcome as one
JSON line, and exits 0 when the check says up, 1 when it says down, 2 on a usage error.

It never signs in and never calls a tool, so scenarios built around tools/call, tokens or
client registration cannot pass: tests/peers/conformance-expected-failures.yml lists them
with reasons, and tests/peers grade the discovery checks of the auth scenarios one by one.

Usage: ``python -m probes.conformance_client [--timeout SECONDS] URL``
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from probes.checks.mcp import parse_mcp_config
from probes.config import ConfigError
from probes.runner import ProbeEnv, outcome_to_json, run_check_sync
from probes.types import Status

SCENARIO_ENV = "MCP_CONFORMANCE_SCENARIO"


def main(argv: list[str] | None = None) -> int:
    """Run the check against the URL in ``argv``; return the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m probes.conformance_client", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds for the whole check (default 10)"
    )
    parser.add_argument("url", help="the scenario server's MCP URL (the suite appends it)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        config = parse_mcp_config({"uri": args.url, "timeout": args.timeout})
    except ConfigError as exc:
        print(f"conformance_client: {exc}", file=sys.stderr)
        return 2
    outcome = run_check_sync(config, ProbeEnv(allow_private=True))
    report = {"scenario": os.environ.get(SCENARIO_ENV), **outcome_to_json(outcome)}
    print(json.dumps(report, sort_keys=True), flush=True)
    return 0 if outcome.status is Status.UP else 1


if __name__ == "__main__":
    sys.exit(main())
