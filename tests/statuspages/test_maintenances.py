"""Maintenance windows as Statuspage's scheduled maintenances: which occurrences a page lists, their status and updates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statuspages.render import maintenances as scheduled
from statuspages.render.statuspage_api import Component, IncidentStatus
from statuspages.render.vocabulary import ComponentStatus

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
WINDOW = scheduled.Window("w-1", "Database upgrade", "", datetime(2026, 11, 1, tzinfo=UTC))
API = Component("c-1", "API", ComponentStatus.OPERATIONAL, NOW, NOW, 1)


@pytest.mark.parametrize(
    ("start", "end", "status"),
    [
        (NOW + HOUR, NOW + 2 * HOUR, IncidentStatus.SCHEDULED),
        (NOW, NOW + HOUR, IncidentStatus.IN_PROGRESS),
        (NOW - HOUR, NOW + timedelta(seconds=1), IncidentStatus.IN_PROGRESS),
        (NOW - HOUR, NOW, IncidentStatus.COMPLETED),
    ],
)
def test_an_occurrences_status_follows_the_clock(start, end, status):
    assert scheduled.occurrence_status(start, end, NOW) is status


def daily(first: datetime, days: int) -> list[tuple[datetime, datetime]]:
    return [(first + timedelta(days=n), first + timedelta(days=n) + HOUR) for n in range(days)]


def test_a_daily_window_lists_the_last_completed_the_running_and_the_next_three():
    occurrences = daily(NOW - timedelta(days=7, minutes=30), 40)
    shown = scheduled.shown_occurrences(occurrences, NOW)
    assert [start - NOW for start, _ in shown] == [
        timedelta(days=-1, minutes=-30),
        timedelta(minutes=-30),
        timedelta(days=1, minutes=-30),
        timedelta(days=2, minutes=-30),
        timedelta(days=3, minutes=-30),
    ]


def test_nothing_beyond_the_horizon_or_before_the_lookback_is_listed():
    far = [(NOW + scheduled.HORIZON + HOUR, NOW + scheduled.HORIZON + 2 * HOUR)]
    old = [(NOW - scheduled.LOOKBACK - 2 * HOUR, NOW - scheduled.LOOKBACK - HOUR)]
    assert scheduled.shown_occurrences(far + old, NOW) == []


def test_an_upcoming_maintenance_has_statuspages_fields_and_one_scheduled_update():
    maintenance = scheduled.scheduled_maintenance(
        WINDOW, NOW + HOUR, NOW + 2 * HOUR, now=NOW, url="https://s.example/", components=[API]
    )
    assert (maintenance.status, maintenance.impact.value) == (IncidentStatus.SCHEDULED, "maintenance")
    assert (maintenance.scheduled_for, maintenance.scheduled_until) == (NOW + HOUR, NOW + 2 * HOUR)
    assert [u.status for u in maintenance.updates] == [IncidentStatus.SCHEDULED]
    assert maintenance.updates[0].body == "Database upgrade is scheduled."
    assert maintenance.components == (API,)
    assert maintenance.resolved_at is None
    assert maintenance.shortlink == f"https://s.example/#maintenance-{maintenance.id}"


def test_a_completed_maintenance_carries_its_updates_and_resolves_at_its_end():
    maintenance = scheduled.scheduled_maintenance(
        WINDOW, NOW - 2 * HOUR, NOW - HOUR, now=NOW, url="https://s.example/", components=[API]
    )
    assert [u.status for u in maintenance.updates] == [
        IncidentStatus.SCHEDULED,
        IncidentStatus.IN_PROGRESS,
        IncidentStatus.COMPLETED,
    ]
    assert (maintenance.resolved_at, maintenance.updated_at) == (NOW - HOUR, NOW - HOUR)


def test_each_occurrence_has_its_own_stable_id():
    first = scheduled.scheduled_maintenance(
        WINDOW, NOW + HOUR, NOW + 2 * HOUR, now=NOW, url="u", components=[]
    )
    again = scheduled.scheduled_maintenance(
        WINDOW, NOW + HOUR, NOW + 2 * HOUR, now=NOW, url="u", components=[]
    )
    later = scheduled.scheduled_maintenance(
        WINDOW, NOW + 5 * HOUR, NOW + 6 * HOUR, now=NOW, url="u", components=[]
    )
    assert first.id == again.id != later.id


def test_a_window_made_while_it_runs_was_never_scheduled():
    made_late = scheduled.Window("w-2", "Emergency patch", "Restarting nodes.", NOW - timedelta(minutes=1))
    maintenance = scheduled.scheduled_maintenance(
        made_late, NOW - 2 * HOUR, NOW + HOUR, now=NOW, url="u", components=[API]
    )
    assert [(u.status, u.body) for u in maintenance.updates] == [
        (IncidentStatus.IN_PROGRESS, "Restarting nodes.")
    ]
