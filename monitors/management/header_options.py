"""Read ``--header "Name: value"`` options for the check commands (``mcpcheck``, ``runcheck``).

Only the part before the colon is ever shown in an error: the value may be a secret.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core.management.base import CommandError

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
