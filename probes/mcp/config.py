"""Hold one MCP check's settings: the type the session reads and the check type parses into.

It sits at the bottom of ``probes.mcp`` (it imports nothing of the package) so that the session
code can name it at run time and ``probes.checks.mcp``, which registers the check, can import
the engine without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass

from probes.config import DEFAULT_CERTIFICATE_WARN_DAYS
from probes.connection import uri_host, uri_target
from probes.types import Headers


@dataclass(frozen=True, slots=True)
class McpConfig:
    """Hold one MCP check's settings (type 13), validated by :func:`probes.checks.mcp.parse_mcp_config`."""

    uri: str
    headers: Headers = ()
    required_tools: tuple[str, ...] = ()
    min_tools: int = 0
    timeout: float = 10.0
    # HTTPS: degraded when the leaf certificate expires within this many days (0: never); probes.runner.
    certificate_warn_days: int = DEFAULT_CERTIFICATE_WARN_DAYS

    @property
    def target(self) -> str:
        return uri_target(self.uri)

    @property
    def host(self) -> str:
        return uri_host(self.uri)

    @property
    def has_key(self) -> bool:
        """Return whether the check sends credentials, which decides the access column."""
        return bool(self.headers)
