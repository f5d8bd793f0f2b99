"""The check types, one module each, registered once; the rest of Uptimy reads them from here.

To add a type, write ``probes/checks/<name>.py`` with its config, parser, API shape, JSON
schema and run function, ``register()`` its :class:`CheckKind`, and import it below.
"""

# The built-in types register themselves on import.
from probes.checks import dns, domain, heartbeat, http, mcp, ping, tcp, tls
from probes.checks.registry import (
    CheckConfig,
    CheckKind,
    UnknownCheckKind,
    check_kind,
    check_kinds,
    kind_of_config,
    known_kinds_words,
    register,
    unregister,
)

__all__ = [
    "CheckConfig",
    "CheckKind",
    "UnknownCheckKind",
    "check_kind",
    "check_kinds",
    "dns",
    "domain",
    "heartbeat",
    "http",
    "kind_of_config",
    "known_kinds_words",
    "mcp",
    "ping",
    "register",
    "tcp",
    "tls",
    "unregister",
]
