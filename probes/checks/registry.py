"""Keep the check types: each registers one CheckKind, and everything else looks kinds up here.

A check type is one module under ``probes/checks/`` that builds a :class:`CheckKind` (its
number and name, its config parser, its API shape, its JSON schema, its form and its run
function) and passes it to :func:`register` once. The runner, the config validation of the API
and the worker, the serializers, the OpenAPI schema and the web app's form read the registry,
so adding a type touches no other file.

Two families share it. An *active* type is probed from regions: its ``run`` gets a
:class:`~probes.connection.Connection`, which resolves and guards any host, opens TCP and TLS
(``open_tcp``, ``start_tls``) and speaks HTTP (``send``), so a check of another protocol still
goes through the one address guard and the one timing breakdown. A *passive* type (``run`` is
None: a heartbeat the customer's job sends) is never probed; its verdict comes from what
arrives and from the clock, and dispatch never claims it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from probes.checks.form import FormField
from probes.connection import Connection
from probes.types import Headers, ProbeOutcome


class CheckConfig(Protocol):
    """Name what every check type's config has: the runner guards, times and scrubs by these.

    ``target`` is what the check watches as people read it and logs show it (a URL without its
    query, ``host:port``, a domain name); ``host`` is the host name whose concurrent checks a
    batch caps ("" when there is none); ``headers`` are the config's secret values, encrypted at
    rest and redacted from everything a target sends back (() for types without secrets).
    A config may also have ``certificate_warn_days`` (HTTP, MCP): the runner then degrades an
    HTTPS run whose leaf certificate expires within that many days (probes.runner.with_certificate).
    """

    @property
    def target(self) -> str: ...

    @property
    def host(self) -> str: ...

    @property
    def headers(self) -> Headers: ...

    @property
    def timeout(self) -> float: ...


C = TypeVar("C", bound=CheckConfig)
C_contra = TypeVar("C_contra", bound=CheckConfig, contravariant=True)
C_co = TypeVar("C_co", bound=CheckConfig, covariant=True)


class ParseConfig(Protocol[C_co]):
    """Return the engine config from the API's JSON value; raise probes.config.ConfigError naming each field."""

    def __call__(self, raw: object, /) -> C_co: ...


class ConfigToApi(Protocol[C_contra]):
    """Return the API shape of a config (header values included: callers mask them)."""

    def __call__(self, config: C_contra, /) -> dict[str, Any]: ...


class RunCheck(Protocol[C_contra]):
    """Run one check on ``conn``, ending by the loop time ``deadline``; remote failures are outcomes."""

    def __call__(self, config: C_contra, conn: Connection, *, deadline: float) -> Awaitable[ProbeOutcome]: ...


@dataclass(frozen=True, eq=False)
class CheckKind(Generic[C]):
    """Describe one check type: its number and name, and how its config is parsed, shown, documented and run."""

    number: int
    name: str
    title: str
    config_type: type[C]
    parse: ParseConfig[C]
    to_api: ConfigToApi[C]
    schema: Mapping[str, Any]
    # None for a passive type, which nothing probes (see the module docstring).
    run: RunCheck[C] | None
    # The web app's form tab for the type, field by field (probes.checks.form).
    form: tuple[FormField, ...] = ()
    # Config keys holding a host or an address the check reaches: an IP literal there that is not
    # public is refused when the check is saved (names are judged when resolved, on every run).
    address_fields: tuple[str, ...] = ()
    # The shortest interval a check of this type may have (0: the plan's minimum alone), for
    # targets that ask for few lookups (RDAP registries).
    min_interval_seconds: int = 0

    def __str__(self) -> str:
        return self.name

    @property
    def active(self) -> bool:
        """Return whether regions probe this type (a passive type's verdict comes from what arrives)."""
        return self.run is not None

    def target(self, config: C) -> str:
        """Return what a check of this type watches, as the API's ``target`` and uptimyctl show it.

        An active type's is its config's ``target``, which each type defines once: the URL without
        its query (http, mcp), ``host:port`` (tcp, tls), ``name TYPE @nameserver`` (dns), the host
        (ping), the domain (domain). A passive type reaches nothing: "".
        """
        return config.target if self.active else ""


class UnknownCheckKind(ValueError):
    """Say that a number or name is no registered check type, listing the ones that are."""


_BY_NUMBER: dict[int, CheckKind[Any]] = {}
_BY_NAME: dict[str, CheckKind[Any]] = {}
_BY_CONFIG: dict[type, CheckKind[Any]] = {}


def register(kind: CheckKind[C]) -> CheckKind[C]:
    """Add ``kind`` to the registry and return it; numbers, names and config types are each unique."""
    if not 1 <= kind.number <= 32_767:
        raise ValueError(f"a check type's number is 1–32767 (a small integer column), not {kind.number}")
    if kind.name != kind.name.lower() or not kind.name.isidentifier():
        raise ValueError(f"a check type's name is a lower-case identifier, not {kind.name!r}")
    if kind.number in _BY_NUMBER or kind.name in _BY_NAME or kind.config_type in _BY_CONFIG:
        raise ValueError(
            f"check type {kind.name!r} ({kind.number}, {kind.config_type.__name__}) "
            "clashes with a registered type's number, name or config type"
        )
    _BY_NUMBER[kind.number] = kind
    _BY_NAME[kind.name] = kind
    _BY_CONFIG[kind.config_type] = kind
    return kind


def unregister(kind: CheckKind[Any]) -> None:
    """Remove ``kind`` from the registry (tests that register a throwaway type)."""
    _BY_NUMBER.pop(kind.number, None)
    _BY_NAME.pop(kind.name, None)
    _BY_CONFIG.pop(kind.config_type, None)


def check_kinds() -> list[CheckKind[Any]]:
    """Return every registered check type, by number."""
    return [_BY_NUMBER[number] for number in sorted(_BY_NUMBER)]


def check_kind(value: object) -> CheckKind[Any]:
    """Return the type named by a number (13, "13") or a name ("mcp"); raise UnknownCheckKind otherwise."""
    kind: CheckKind[Any] | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        kind = _BY_NUMBER.get(value)
    elif isinstance(value, str):
        text = value.strip()
        kind = (
            _BY_NUMBER.get(int(text))
            if text.isascii() and text.isdigit() and len(text) < 6
            else _BY_NAME.get(text.lower())
        )
    if kind is None:
        raise UnknownCheckKind(f"Unknown type {value!r}; use {known_kinds_words()}.")
    return kind


def kind_of_config(config: CheckConfig) -> CheckKind[Any]:
    """Return the type whose parser makes configs like ``config``."""
    try:
        return _BY_CONFIG[type(config)]
    except KeyError:
        raise UnknownCheckKind(f"{type(config).__name__} is no registered check type's config") from None


def active_kind_numbers() -> frozenset[int]:
    """Return the numbers of the types regions probe (what dispatch claims)."""
    return frozenset(kind.number for kind in check_kinds() if kind.active)


def known_kinds_words() -> str:
    """Return the registered types as a user reads them: '1 or "http", 13 or "mcp"'."""
    return ", ".join(f'{kind.number} or "{kind.name}"' for kind in check_kinds())
