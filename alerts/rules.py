"""Decide what a monitors outbox row does to a healthcheck's incident, and who hears of it.

Pure: plain values in, plain values out; ``alerts.services.outbox`` applies the decisions in its
transaction, and ``tests/alerts/test_rules.py`` is the table.

Incidents (:func:`on_status`, :func:`on_cause`, :func:`on_tools`)
    With no open incident, a change to ``down`` opens one (critical), to ``degraded`` opens one
    (warning); any other change does nothing. With one open, ``up`` resolves it (recovered),
    ``paused`` resolves it (paused); ``down`` escalates a warning in place (a critical one stays);
    ``degraded`` or ``pending`` while critical is a timeline note and the incident stays open
    (``pending`` means no region reported, which is not a recovery). A changed cause on an open
    incident is a timeline event and a notification; without one it is nothing. A tool-list
    change with no incident open is a notification of its own ("tool list changed"), never an
    incident, unless it removed a tool the check requires: the check goes down for that, and
    its incident alone tells it (naming the missing tools). With an incident open it is a
    timeline note (the incident's alerts name missing tools).
    Deleting a healthcheck resolves its incident (deleted): alerts sees it as the incident's
    healthcheck gone (``alerts.services.incidents_close_orphaned``).

Who hears of it (:func:`audience`)
    Opening, escalating, a reminder and a tool change go to the policy's channels (a warning's
    opening only when the policy notifies on degraded, a tool change only when it notifies on
    tool changes). Everything later in an incident's life (a cause change, acknowledged,
    resolved) goes to the channels that were told of the incident, still enabled, whatever the
    policy says now: a receiver hears the end of what it heard the start of, and nothing else.
    A resolve is left out where the policy turns recovery notices off, except for stateful
    channels (PagerDuty), which would otherwise keep paging for an incident that is over. The
    unacknowledged escalation goes to the escalation channels that were not told yet.

Storm guard (:func:`is_storm`)
    When more than ``threshold`` incidents open, escalate or resolve in one organization within
    a minute, the rest of that minute's openings, escalations and resolves go to each text
    channel as one digest (a few seconds' worth each), which says what each incident did. A
    stateful channel (PagerDuty) never gets a digest: it gets each incident's own event, so
    every incident it opened is resolved on its side too.
"""

from __future__ import annotations

from collections.abc import Collection, Set
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from probes.types import Status

STORM_WINDOW = timedelta(minutes=1)
# Reminders while an incident stays down: every N minutes, at most this many.
MAX_REMINDERS = 10


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"


class Resolution(StrEnum):
    RECOVERED = "recovered"
    PAUSED = "paused"
    DELETED = "deleted"


class Action(StrEnum):
    """Say what one outbox row does to the healthcheck's incident."""

    NOTHING = "nothing"
    OPEN = "open"
    ESCALATE = "escalate"
    NOTE_STATUS = "note_status"
    CHANGE_CAUSE = "change_cause"
    RESOLVE = "resolve"
    NOTIFY_TOOLS = "notify_tools"
    NOTE_TOOLS = "note_tools"


class EventKind(StrEnum):
    """Name an entry of an incident's timeline."""

    OPENED = "opened"
    ESCALATED = "escalated"
    STATUS_CHANGED = "status_changed"
    CAUSE_CHANGED = "cause_changed"
    TOOLS_CHANGED = "tools_changed"
    ACKNOWLEDGED = "acknowledged"
    REMINDER = "reminder"
    UNACKNOWLEDGED = "unacknowledged"
    RESOLVED = "resolved"


class NotificationKind(StrEnum):
    """Name what a notification says; webhooks carry it as the event type."""

    OPENED = "incident.opened"
    ESCALATED = "incident.escalated"
    CAUSE_CHANGED = "incident.cause_changed"
    ACKNOWLEDGED = "incident.acknowledged"
    REMINDER = "incident.reminder"
    UNACKNOWLEDGED = "incident.unacknowledged"
    RESOLVED = "incident.resolved"
    TOOLS_CHANGED = "healthcheck.tools_changed"
    DIGEST = "incidents.digest"


# The kinds whose audience is the policy's alone, whoever heard of the incident before.
FIRST_WORD = frozenset({NotificationKind.OPENED, NotificationKind.ESCALATED, NotificationKind.TOOLS_CHANGED})


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    severity: Severity | None = None
    resolution: Resolution | None = None


NOTHING = Decision(Action.NOTHING)


def severity_of(status: str) -> Severity | None:
    """Return the severity an incident of ``status`` has, None for a status that is not failing."""
    if status == Status.DOWN:
        return Severity.CRITICAL
    if status == Status.DEGRADED:
        return Severity.WARNING
    return None


def on_status(*, open_severity: Severity | None, to_status: str) -> Decision:
    """Decide what a status change does, given the open incident's severity (None: no incident open)."""
    severity = severity_of(to_status)
    if open_severity is None:
        return Decision(Action.OPEN, severity=severity) if severity is not None else NOTHING
    if to_status == Status.UP:
        return Decision(Action.RESOLVE, resolution=Resolution.RECOVERED)
    if to_status == Status.PAUSED:
        return Decision(Action.RESOLVE, resolution=Resolution.PAUSED)
    if severity is Severity.CRITICAL and open_severity is Severity.WARNING:
        return Decision(Action.ESCALATE, severity=Severity.CRITICAL)
    return Decision(Action.NOTE_STATUS)


def on_cause(*, open_severity: Severity | None) -> Decision:
    """Decide what a cause change (status unchanged) does."""
    return NOTHING if open_severity is None else Decision(Action.CHANGE_CAUSE)


def on_tools(*, open_severity: Severity | None, removes_required: bool = False) -> Decision:
    """Decide what a tool-list change (a tool removed, a new required input) does.

    ``removes_required``: a tool the check requires is gone, so the check is going down for it
    (its rechecks may still be running): the incident that opens says so, naming the tools, and
    a notice of its own would be a second message for one event.
    """
    if open_severity is not None:
        return Decision(Action.NOTE_TOOLS)
    return NOTHING if removes_required else Decision(Action.NOTIFY_TOOLS)


@dataclass(frozen=True, slots=True)
class PolicyView:
    """What the rules read of an alert policy: channel ids and switches."""

    channels: frozenset[int]
    notify_on_degraded: bool = True
    notify_on_recovery: bool = True
    notify_on_tool_changes: bool = True
    escalation_channels: frozenset[int] = frozenset()


def audience(
    kind: NotificationKind,
    *,
    policy: PolicyView,
    severity: Severity | None,
    told: Set[int],
    enabled: Set[int],
    stateful: Set[int] = frozenset(),
) -> frozenset[int]:
    """Return the channels that get a notification of ``kind`` (ids), among the ``enabled`` ones.

    ``told``: the channels an incident's earlier notifications went to; ``stateful``: the
    channels that keep an incident open on their side (PagerDuty) until they hear it ended.
    """
    chosen: Collection[int]
    if kind in (NotificationKind.OPENED, NotificationKind.ESCALATED, NotificationKind.REMINDER):
        if kind is NotificationKind.OPENED and severity is Severity.WARNING and not policy.notify_on_degraded:
            chosen = ()
        elif kind is NotificationKind.REMINDER:
            chosen = policy.channels & told
        else:
            chosen = policy.channels
    elif kind is NotificationKind.TOOLS_CHANGED:
        chosen = policy.channels if policy.notify_on_tool_changes else ()
    elif kind is NotificationKind.UNACKNOWLEDGED:
        chosen = policy.escalation_channels - told
    elif kind is NotificationKind.RESOLVED and not policy.notify_on_recovery:
        chosen = told & stateful
    else:
        chosen = told
    return frozenset(chosen) & frozenset(enabled)


def is_storm(*, count_in_window: int, threshold: int) -> bool:
    """Return whether ``count_in_window`` incidents opening, escalating or resolving within a minute is a storm."""
    return count_in_window > threshold


# --- Retrying a delivery ---------------------------------------------------------------------

RETRY_FIRST = timedelta(seconds=30)
RETRY_LONGEST = timedelta(hours=1)
# A receiver's Retry-After is honoured up to this; beyond it, the usual schedule applies.
RETRY_AFTER_LONGEST = timedelta(days=1)


def retry_delay(
    attempts: int, *, retry_after: float | None, jitter: float, first: timedelta = RETRY_FIRST
) -> timedelta:
    """Return how long to wait after the ``attempts``-th failed attempt of a delivery.

    Doubling from ``first`` (30 s) to at most an hour, each delay drawn in its upper half by
    ``jitter`` (0 to 1), so the deliveries a dead receiver failed together do not all come back
    at once. A receiver's Retry-After (seconds) is a floor, up to a day.
    """
    if attempts < 1:
        raise ValueError(f"attempts count from 1, not {attempts}")
    if not 0 <= jitter <= 1:
        raise ValueError(f"jitter must be within 0 and 1, not {jitter}")
    if first <= timedelta(0):
        raise ValueError(f"the first delay must be positive, not {first}")
    base = min(first * (1 << min(attempts - 1, 20)), RETRY_LONGEST)
    delay = base * (0.5 + jitter / 2)
    if retry_after is not None and retry_after > 0:
        delay = max(delay, min(timedelta(seconds=retry_after), RETRY_AFTER_LONGEST))
    return delay
