"""Share what the check commands (``mcpcheck``, ``runcheck``) do alike: ``--header`` options, one run, its output.

Only the part before a header's colon is ever shown in an error: the value may be a secret.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.management.base import CommandError, OutputWrapper

from monitors.worker.execution import probe_env
from probes.checks import CheckConfig
from probes.runner import crashed_outcome, outcome_to_json, run_check_sync
from probes.types import ProbeOutcome

C = TypeVar("C", bound=CheckConfig)

EXIT_USAGE = 2


def headers_of(options: Iterable[str]) -> dict[str, str]:
    """Return the ``--header`` options as names to values; raise CommandError (exit 2) for a bad one."""
    headers: dict[str, str] = {}
    for raw in options:
        name, colon, value = raw.partition(":")
        name = name.strip()
        if not colon or not name:
            raise CommandError('--header: write it as "Name: value"', returncode=EXIT_USAGE)
        if name.lower() in (known.lower() for known in headers):
            raise CommandError(f"--header: {name} is given twice", returncode=EXIT_USAGE)
        headers[name] = value.strip()
    return headers


def run_and_print(
    config: C, out: OutputWrapper, *, as_json: bool, summary: Callable[[C, ProbeOutcome], str]
) -> ProbeOutcome:
    """Run one check from this machine and print its outcome (``--json``: one object; else ``summary``)."""
    try:
        outcome = run_check_sync(config, probe_env())
    except Exception as exc:
        # A bug of ours: logged with the secrets redacted, never printed with them.
        outcome = crashed_outcome(config, exc)
    shown: Any = outcome_to_json(outcome)
    out.write(json.dumps(shown, indent=2, sort_keys=True) if as_json else summary(config, outcome))
    return outcome
