"""The incident rules and who hears of what, as tables (alerts.rules is pure)."""

from __future__ import annotations

import pytest

from alerts.rules import (
    Action,
    Decision,
    NotificationKind,
    PolicyView,
    Resolution,
    Severity,
    audience,
    is_storm,
    on_cause,
    on_status,
    on_tools,
)

CRIT, WARN = Severity.CRITICAL, Severity.WARNING


@pytest.mark.parametrize(
    ("open_severity", "to_status", "expected"),
    [
        (None, "down", Decision(Action.OPEN, severity=CRIT)),
        (None, "degraded", Decision(Action.OPEN, severity=WARN)),
        (None, "up", Decision(Action.NOTHING)),
        (None, "pending", Decision(Action.NOTHING)),
        (None, "paused", Decision(Action.NOTHING)),
        (WARN, "down", Decision(Action.ESCALATE, severity=CRIT)),
        (CRIT, "down", Decision(Action.NOTE_STATUS)),
        (CRIT, "degraded", Decision(Action.NOTE_STATUS)),
        (WARN, "degraded", Decision(Action.NOTE_STATUS)),
        (CRIT, "pending", Decision(Action.NOTE_STATUS)),
        (WARN, "pending", Decision(Action.NOTE_STATUS)),
        (CRIT, "up", Decision(Action.RESOLVE, resolution=Resolution.RECOVERED)),
        (WARN, "up", Decision(Action.RESOLVE, resolution=Resolution.RECOVERED)),
        (CRIT, "paused", Decision(Action.RESOLVE, resolution=Resolution.PAUSED)),
        (WARN, "paused", Decision(Action.RESOLVE, resolution=Resolution.PAUSED)),
    ],
)
def test_a_status_change_decides_the_incident(open_severity, to_status, expected):
    assert on_status(open_severity=open_severity, to_status=to_status) == expected


@pytest.mark.parametrize(
    ("open_severity", "cause", "tools"),
    [
        (None, Action.NOTHING, Action.NOTIFY_TOOLS),
        (WARN, Action.CHANGE_CAUSE, Action.NOTE_TOOLS),
        (CRIT, Action.CHANGE_CAUSE, Action.NOTE_TOOLS),
    ],
)
def test_a_cause_or_tool_change_is_an_event_of_the_open_incident_or_else(open_severity, cause, tools):
    assert on_cause(open_severity=open_severity).action is cause
    assert on_tools(open_severity=open_severity).action is tools


@pytest.mark.parametrize(
    ("open_severity", "removes_required", "action"),
    [
        (None, False, Action.NOTIFY_TOOLS),
        (None, True, Action.NOTHING),
        (CRIT, True, Action.NOTE_TOOLS),
        (WARN, True, Action.NOTE_TOOLS),
    ],
)
def test_a_required_tool_removed_is_left_to_the_incident_it_opens(open_severity, removes_required, action):
    assert on_tools(open_severity=open_severity, removes_required=removes_required).action is action


POLICY = PolicyView(channels=frozenset({1, 2}), escalation_channels=frozenset({2, 3}))
QUIET = PolicyView(
    channels=frozenset({1, 2}),
    notify_on_degraded=False,
    notify_on_recovery=False,
    notify_on_tool_changes=False,
)
ALL = frozenset({1, 2, 3, 4})
K = NotificationKind


@pytest.mark.parametrize(
    ("kind", "policy", "severity", "told", "enabled", "stateful", "expected"),
    [
        (K.OPENED, POLICY, CRIT, set(), ALL, set(), {1, 2}),
        (K.OPENED, POLICY, WARN, set(), ALL, set(), {1, 2}),
        (K.OPENED, QUIET, WARN, set(), ALL, set(), set()),
        (K.OPENED, QUIET, CRIT, set(), ALL, set(), {1, 2}),
        (K.OPENED, POLICY, CRIT, set(), {2, 3}, set(), {2}),  # a disabled channel hears nothing
        (K.ESCALATED, QUIET, CRIT, set(), ALL, set(), {1, 2}),
        (K.CAUSE_CHANGED, POLICY, CRIT, {1}, ALL, set(), {1}),  # follow-ups: the told only
        (K.ACKNOWLEDGED, POLICY, CRIT, {1, 4}, ALL, set(), {1, 4}),
        (K.RESOLVED, POLICY, CRIT, {1, 4}, ALL, set(), {1, 4}),
        (K.RESOLVED, POLICY, CRIT, {1, 4}, {1}, set(), {1}),
        (K.RESOLVED, POLICY, WARN, set(), ALL, set(), set()),  # a warning nobody heard of ends quietly
        (K.RESOLVED, QUIET, CRIT, {1, 2}, ALL, {2}, {2}),  # recovery off: PagerDuty still closes its page
        (K.REMINDER, POLICY, CRIT, {1, 4}, ALL, set(), {1}),
        (K.UNACKNOWLEDGED, POLICY, CRIT, {1, 2}, ALL, set(), {3}),
        (K.TOOLS_CHANGED, POLICY, None, set(), ALL, set(), {1, 2}),
        (K.TOOLS_CHANGED, QUIET, None, set(), ALL, set(), set()),
    ],
)
def test_the_audience_of_a_notification(kind, policy, severity, told, enabled, stateful, expected):
    chosen = audience(
        kind,
        policy=policy,
        severity=severity,
        told=frozenset(told),
        enabled=frozenset(enabled),
        stateful=frozenset(stateful),
    )
    assert chosen == frozenset(expected)


@pytest.mark.parametrize(("count", "storm"), [(0, False), (20, False), (21, True), (1000, True)])
def test_a_storm_is_more_than_the_threshold_in_a_minute(count, storm):
    assert is_storm(count_in_window=count, threshold=20) is storm
