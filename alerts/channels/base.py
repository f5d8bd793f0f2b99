"""Define what every channel kind shares: the alert it renders, the attempt it reports, its registry.

A channel kind is one module under ``alerts/channels/`` that builds a :class:`ChannelKind` (its
name, its config parser, the config's stored and masked shapes, its secret fields and its send
function) and passes it to :func:`register` once. The ledger, the API and the web pages look
kinds up here (:func:`channel_kind`, :func:`kinds`), so adding a kind touches no other file.

Everything here is pure: plain values in (frozen dataclasses, ISO strings), plain values out, no
ORM and no settings. Senders never raise for a remote's misbehaviour: every refusal, timeout and
error answer becomes an :class:`Attempt` whose sentence names no secret.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

# What the API shows for a write-only field.
MASK = "********"


class EventType(StrEnum):
    """Name what happened; the webhook payload's ``type`` and the ledger's event kinds."""

    INCIDENT_OPENED = "incident.opened"
    INCIDENT_ESCALATED = "incident.escalated"
    INCIDENT_ACKNOWLEDGED = "incident.acknowledged"
    INCIDENT_RESOLVED = "incident.resolved"
    INCIDENT_REMINDER = "incident.reminder"
    # Still failing, for another reason (connection refused, then a required tool missing).
    INCIDENT_CAUSE_CHANGED = "incident.cause_changed"
    # Nobody acknowledged it within the policy's minutes: sent to the escalation channels.
    INCIDENT_UNACKNOWLEDGED = "incident.unacknowledged"
    TOOLS_CHANGED = "healthcheck.tools_changed"
    CHANNEL_TEST = "channel.test"
    # The storm guard's one message to a text channel, listing the incidents opened, escalated
    # and resolved in its window (each notice says which: Notice.event).
    INCIDENTS_DIGEST = "incidents.digest"


@dataclass(frozen=True)
class HealthcheckRef:
    """Name the healthcheck an alert is about: its public id, name, status now, and its page."""

    id: str
    name: str
    status: str  # up, degraded, down, paused, pending (monitors' values)
    link: str


@dataclass(frozen=True)
class RegionFailure:
    """Say how one region saw the check fail: its failure kind and reason sentence."""

    region: str
    kind: str
    reason: str = ""


@dataclass(frozen=True)
class Cause:
    """Say why the check is failing: the failure kind, its sentence, the regions, the missing tools."""

    kind: str
    reason: str
    regions: tuple[RegionFailure, ...] = ()
    missing_tools: tuple[str, ...] = ()
    since: datetime | None = None


@dataclass(frozen=True)
class IncidentInfo:
    """Describe an incident as it stands: status, severity and its times (durations in seconds)."""

    id: str  # the incident's public id: PagerDuty's dedup_key
    status: str  # open, acknowledged, resolved
    severity: str  # critical, warning
    opened_at: datetime
    acknowledged_at: datetime | None = None
    acknowledged_by: str = ""
    resolved_at: datetime | None = None
    # Why it closed: "recovered", "paused", "deleted" (empty while open).
    resolution: str = ""
    duration_seconds: float | None = None


@dataclass(frozen=True)
class ToolInputs:
    """Name a tool that gained required inputs, and those inputs."""

    tool: str
    inputs: tuple[str, ...]


@dataclass(frozen=True)
class ToolsChange:
    """Say how a check's tool list changed while it stayed up."""

    removed: tuple[str, ...] = ()
    gained_required_inputs: tuple[ToolInputs, ...] = ()


@dataclass(frozen=True)
class Notice:
    """Hold what an alert says about one healthcheck: an incident, its cause, a tools change, links.

    An incident event has one notice; a digest has one per incident's event; a channel test has none.
    """

    healthcheck: HealthcheckRef
    incident: IncidentInfo | None = None
    cause: Cause | None = None
    tools: ToolsChange | None = None
    # A signed, expiring link that acknowledges the incident without a login.
    acknowledge_link: str = ""
    # In a digest: what happened to this incident (opened, escalated, resolved). None outside one:
    # the alert's own event_type says it.
    event: EventType | None = None


@dataclass(frozen=True)
class Alert:
    """Hold one event for one channel: what happened, to which checks, and the delivery's id.

    ``event_id`` is the delivery's id: the webhook's ``webhook-id`` and the email's Message-ID,
    the same on every retry, so receivers can drop duplicates.
    """

    event_type: EventType
    event_id: str
    occurred_at: datetime
    organization: str
    notices: tuple[Notice, ...] = ()
    # Where the organization's incidents are listed (a digest links there).
    incidents_link: str = ""

    @property
    def notice(self) -> Notice | None:
        """Return the one notice of a single-check event (None for a test; the first of a digest)."""
        return self.notices[0] if self.notices else None


def channel_test_alert(*, event_id: str, organization: str, occurred_at: datetime) -> Alert:
    """Return the alert ``POST /channels/{id}/test/`` sends: no healthcheck, only the organization."""
    return Alert(EventType.CHANNEL_TEST, event_id, occurred_at, organization)


class ChannelConfigError(ValueError):
    """Refuse a channel config: ``field`` names it as the API does (``config.url``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Attempt:
    """Report one delivery attempt as the ledger records it.

    ``error`` is a sentence without secrets (no key, no token, no path or query of a URL).
    ``permanent`` means retrying cannot help and the channel should be disabled (a webhook's
    410, PagerDuty refusing the routing key, a target on a refused address). ``retry_after`` is
    the wait, in seconds, the receiver asked for (429 or 503 with Retry-After).
    """

    ok: bool
    duration: float  # seconds
    status_code: int | None = None
    error: str = ""
    permanent: bool = False
    retry_after: float | None = None


C = TypeVar("C")
C_contra = TypeVar("C_contra", contravariant=True)
C_co = TypeVar("C_co", covariant=True)


class Send(Protocol[C_contra]):
    """Deliver ``alert`` within ``timeout`` seconds; remote failures come back as an Attempt.

    ``allow_private`` lets HTTP kinds reach loopback and private addresses (tests, self-hosting),
    as the checks' setting does; ``nameservers`` replaces the system's DNS servers;
    ``mail_connection`` is the Django mail connection the email kind sends through (the default
    backend when None). Every kind takes every option and ignores those it has no use for.
    Call it outside a running event loop (the ledger's tasks are synchronous).
    """

    def __call__(
        self,
        config: C_contra,
        alert: Alert,
        *,
        timeout: float,
        allow_private: bool,
        nameservers: tuple[str, ...] = (),
        mail_connection: Any = None,
    ) -> Attempt: ...


class Parse(Protocol[C_co]):
    """Return the kind's config from its JSON value; raise ChannelConfigError naming the field."""

    def __call__(self, raw: Mapping[str, Any], /) -> C_co: ...


@dataclass(frozen=True, eq=False)
class ChannelKind(Generic[C]):
    """Describe one channel kind: how its config is parsed, stored, shown, and how it sends."""

    name: str
    label: str
    parse: Parse[C]
    # The config as stored (JSON, secrets included: the model encrypts it); parse(dump(c)) == c.
    dump: Callable[[C], dict[str, Any]]
    # The config as the API shows it: every secret field replaced (MASK, or a URL's origin).
    masked: Callable[[C], dict[str, Any]]
    send: Send[C]
    secret_fields: tuple[str, ...]
    # How long the ledger keeps retrying one delivery of this kind.
    retry_horizon: timedelta
    # The most attempts one channel of this kind gets in a minute; the rest wait their turn. What
    # receivers accept: a chat webhook about one message a second or less, machines far more.
    rate_per_minute: int
    # The http(s) URLs the kind sends to, for the API to check through the address guard on save.
    targets: Callable[[C], tuple[str, ...]] = field(default=lambda config: ())


_KINDS: dict[str, ChannelKind[Any]] = {}


def register(kind: ChannelKind[Any]) -> ChannelKind[Any]:
    """Add a kind to the registry, once (a second kind of the same name is a bug)."""
    if kind.name in _KINDS:
        raise ValueError(f"channel kind {kind.name!r} is registered twice")
    _KINDS[kind.name] = kind
    return kind


def channel_kind(name: str) -> ChannelKind[Any]:
    """Return the kind called ``name``; raise ChannelConfigError naming ``kind`` for an unknown one."""
    try:
        return _KINDS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(_KINDS))
        raise ChannelConfigError("kind", f"unknown channel kind; one of {known}") from None


def kinds() -> tuple[ChannelKind[Any], ...]:
    """Return every registered kind, by name."""
    return tuple(_KINDS[name] for name in sorted(_KINDS))


def unmask(kind: ChannelKind[Any], stored: Any, incoming: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``incoming`` with every secret field the API showed masked put back from ``stored``.

    A client that edits a channel sends back what it read: a secret field still equal to its
    masked form means "unchanged", so the stored value is kept; any other value replaces it.
    """
    shown = kind.masked(stored)
    kept = kind.dump(stored)
    merged = dict(incoming)
    for name in kind.secret_fields:
        if name in merged and name in shown and merged[name] == shown[name] and name in kept:
            merged[name] = kept[name]
    return merged


def require_fields(raw: Mapping[str, Any], *, allowed: frozenset[str], kind: str) -> None:
    """Refuse a config that is not an object or that names a field the kind does not have."""
    if not isinstance(raw, Mapping):
        raise ChannelConfigError("config", "must be an object")
    for name in raw:
        if name not in allowed:
            raise ChannelConfigError(f"config.{name}", f"is not a field of a {kind} channel")


def string_field(raw: Mapping[str, Any], name: str, *, limit: int, required: bool = True) -> str:
    """Return a string field trimmed, refusing a missing, empty (when required), too long or control-laden one."""
    value = raw.get(name)
    where = f"config.{name}"
    if value is None or value == "":
        if required:
            raise ChannelConfigError(where, "this field is required")
        return ""
    if not isinstance(value, str):
        raise ChannelConfigError(where, "must be a string")
    value = value.strip()
    if not value and required:
        raise ChannelConfigError(where, "this field is required")
    if len(value) > limit:
        raise ChannelConfigError(where, f"must be at most {limit} characters")
    if any(not ch.isprintable() for ch in value):
        raise ChannelConfigError(where, "must not contain control characters")
    return value
