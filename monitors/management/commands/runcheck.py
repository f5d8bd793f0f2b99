"""Run one check of any active type from this machine: ``python manage.py runcheck TYPE KEY=VALUE …``."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from monitors.management.check_commands import EXIT_USAGE, headers_of, run_and_print
from probes.checks import CheckConfig, UnknownCheckKind, check_kind, check_kinds
from probes.config import ConfigError
from probes.runner import outcome_to_json
from probes.types import ProbeOutcome, Status

# Exit codes: 0 up, 1 down, 2 a usage or config error (argparse's own code), 3 degraded.
EXIT_FOR_STATUS = {Status.UP: 0, Status.DOWN: 1, Status.DEGRADED: 3}


class Command(BaseCommand):
    help = (
        "Run one check of any active type from this machine, as a region's worker would. The "
        "config is the API's: key=value pairs (a value that is JSON is read as JSON), or one JSON "
        "object. Exits 0 up, 1 down, 3 degraded, 2 for a usage or config error."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        names = ", ".join(kind.name for kind in check_kinds() if kind.active)
        parser.add_argument("type", help=f"the check type's name or number ({names})")
        parser.add_argument(
            "config",
            nargs="*",
            metavar="KEY=VALUE",
            help="the config, e.g. host=example.com port=443, or one JSON object '{\"host\": …}'",
        )
        parser.add_argument(
            "--header",
            action="append",
            default=[],
            dest="headers",
            metavar='"NAME: VALUE"',
            help="a secret header (types that send headers; repeatable); values are never printed",
        )
        parser.add_argument("--json", action="store_true", help="print the outcome as one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        config = self._config(options)
        outcome = run_and_print(config, self.stdout, as_json=options["json"], summary=summary)
        code = EXIT_FOR_STATUS.get(outcome.status, 1)
        if code:
            # Raise rather than return so call_command() callers see the code too.
            sys.exit(code)

    def _config(self, options: dict[str, Any]) -> CheckConfig:
        try:
            kind = check_kind(options["type"])
        except UnknownCheckKind as exc:
            raise CommandError(str(exc), returncode=EXIT_USAGE) from None
        if not kind.active:
            raise CommandError(
                f"{kind.name} checks are passive: nothing runs them, they wait for what arrives",
                returncode=EXIT_USAGE,
            )
        raw = config_of(options["config"])
        headers = headers_of(options["headers"])
        if headers:
            raw["headers"] = headers
        try:
            config: CheckConfig = kind.parse(raw)
        except ConfigError as exc:
            problems = "; ".join(f"{key}: {message}" for key, message in exc.errors.items())
            raise CommandError(problems, returncode=EXIT_USAGE) from None
        return config


def config_of(words: list[str]) -> dict[str, Any]:
    """Return the config the command's words give: one JSON object, or key=value pairs."""
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            value = json.loads(words[0])
        except ValueError as exc:
            raise CommandError(f"config: not a JSON object ({exc})", returncode=EXIT_USAGE) from None
        if not isinstance(value, dict):
            raise CommandError("config: not a JSON object", returncode=EXIT_USAGE)
        return value
    config: dict[str, Any] = {}
    for word in words:
        key, equals, text = word.partition("=")
        if not equals or not key:
            raise CommandError(f"config: write {word!r} as KEY=VALUE", returncode=EXIT_USAGE)
        if key in config:
            raise CommandError(f"config: {key} is given twice", returncode=EXIT_USAGE)
        try:
            config[key] = json.loads(text)
        except ValueError:
            config[key] = text
    return config


def summary(config: CheckConfig, outcome: ProbeOutcome) -> str:
    """Return a few human lines about one outcome; secrets never appear in them."""
    data = outcome_to_json(outcome)
    lines = [f"{str(data['status']).upper()}  {config.target}"]
    if data.get("kind"):
        lines.append(f"  {data['kind']}: {data.get('reason') or ''}".rstrip())
    for key, value in sorted((data.get("details") or {}).items()):
        lines.append(f"  {key}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}")
    for warning in outcome.warnings:
        lines.append(f"  warning: {warning}")
    timings = data.get("timings") or {}
    shown = [
        f"{label} {timings[key]:.1f} ms"
        for label, key in (("dns", "dns_ms"), ("tcp", "tcp_ms"), ("tls", "tls_ms"), ("ttfb", "ttfb_ms"))
        if timings.get(key) is not None
    ]
    if timings.get("total_ms") is not None:
        shown.append(f"total {timings['total_ms']:.1f} ms")
    if shown:
        lines.append("  timings: " + ", ".join(shown))
    return "\n".join(lines)
