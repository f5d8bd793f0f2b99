"""Run one MCP check from this machine: ``python manage.py mcpcheck URL [options]``."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from monitors.management.check_commands import EXIT_USAGE, headers_of, run_and_print
from probes.checks.mcp import McpConfig, parse_mcp_config
from probes.config import ConfigError
from probes.runner import outcome_to_json
from probes.types import FailureKind, ProbeOutcome, Status

# Exit codes: 0 up, 1 down, 2 a usage or config error (argparse's own code for bad usage).
EXIT_DOWN = 1


class Command(BaseCommand):
    help = (
        "Run one MCP check from this machine, as a monitor would: initialize, tools/list, never a "
        "tool call. Exits 0 when the check says up, 1 when down, 2 for a usage or config error."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url", help="the MCP endpoint, e.g. https://example.com/mcp")
        parser.add_argument(
            "--header",
            action="append",
            default=[],
            dest="headers",
            metavar='"NAME: VALUE"',
            help="send this header on every request (repeatable); values are never printed",
        )
        parser.add_argument(
            "--required-tool",
            action="append",
            default=[],
            dest="required_tools",
            metavar="NAME",
            help="the check is down when the server does not list this tool (repeatable)",
        )
        parser.add_argument(
            "--min-tools", type=int, default=0, metavar="N", help="the check is down below N tools"
        )
        parser.add_argument(
            "--timeout", type=float, default=10.0, metavar="SECONDS", help="for the whole check (default 10)"
        )
        parser.add_argument("--json", action="store_true", help="print the outcome as one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        config = self._config(options)
        outcome = run_and_print(config, self.stdout, as_json=options["json"], summary=summary)
        if outcome.status is not Status.UP:
            # Raise rather than return so call_command() callers see the code too.
            sys.exit(EXIT_DOWN)

    def _config(self, options: dict[str, Any]) -> McpConfig:
        headers = headers_of(options["headers"])
        raw_config: dict[str, Any] = {
            "uri": options["url"],
            "headers": headers,
            "requiredTools": list(options["required_tools"]),
            "minTools": options["min_tools"],
            "timeout": options["timeout"],
        }
        try:
            return parse_mcp_config(raw_config)
        except ConfigError as exc:
            problems = "; ".join(f"{_option(key)}: {message}" for key, message in exc.errors.items())
            raise CommandError(problems, returncode=EXIT_USAGE) from None


def _option(key: str) -> str:
    """Name the command-line option behind a config error key (``minTools`` → ``--min-tools``)."""
    if key.startswith("headers."):
        return f"--header {key.removeprefix('headers.')}"
    return {
        "uri": "URL",
        "headers": "--header",
        "requiredTools": "--required-tool",
        "minTools": "--min-tools",
        "timeout": "--timeout",
    }.get(key, key)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def summary(config: McpConfig, outcome: ProbeOutcome) -> str:
    """Return a few human lines about one outcome; header values never appear in them."""
    data = outcome_to_json(outcome)
    status = str(data["status"]).upper()
    details = [
        str(part) for part in (data.get("transport"), data.get("protocol"), data.get("access")) if part
    ]
    lines = [f"{status}  {config.uri}" + (f"  ({', '.join(details)})" if details else "")]
    if data.get("kind"):
        lines.append(f"  {data['kind']}: {data.get('reason') or ''}".rstrip())
    if outcome.kind is FailureKind.CREDENTIALS_REQUIRED:
        lines.append(
            '  hint: give mcpcheck the key with --header "Authorization: Bearer …" (or the header the server names)'
        )
    server = data.get("server")
    if server:
        lines.append(f"  server: {server.get('name')} {server.get('version')}".rstrip())
    if data.get("signin_server"):
        found = (
            " (found through the 2025-03-26 fallback)"
            if data.get("signin_discovery") == "2025-03-26-fallback"
            else ""
        )
        lines.append(f"  sign-in server: {data['signin_server']}{found}")
    if data.get("tools") is not None:
        names = list(data.get("tool_names") or [])
        shown = ", ".join(names[:20]) + (f", … ({len(names) - 20} more)" if len(names) > 20 else "")
        lines.append(f"  tools: {data['tools']}" + (f" ({shown})" if shown else ""))
    if data.get("missing_tools"):
        lines.append(f"  missing tools: {', '.join(data['missing_tools'])}")
    for warning in outcome.warnings:
        lines.append(f"  warning: {warning}")
    timings = data.get("timings") or {}
    lines.append(
        "  timings: "
        + ", ".join(
            f"{label} {_ms(timings.get(key))}"
            for label, key in (
                ("dns", "dns_ms"),
                ("tcp", "tcp_ms"),
                ("tls", "tls_ms"),
                ("ttfb", "ttfb_ms"),
                ("total", "total_ms"),
            )
        )
    )
    return "\n".join(lines)
