"""Turn maintenance windows' occurrences into Statuspage's scheduled maintenances (``scheduled_for`` … ``scheduled_until``).

Maintenance windows live in ``monitors`` (one-off, or recurring by an RRULE); a page shows each
occurrence that touches one of its components as one scheduled maintenance, as Statuspage
lists them: ``scheduled`` before it starts, ``in_progress`` while it runs, ``completed`` once it
ended. A recurring window would list an occurrence a day forever, so a page shows, per window,
the occurrences running now, the next :data:`UPCOMING_PER_WINDOW` within :data:`HORIZON`, and
the last :data:`COMPLETED_PER_WINDOW` that ended within :data:`LOOKBACK`.

Everything is derived from the window and the clock (ids, update times, texts), so the same
moment gives the same JSON bytes and the same ETag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from statuspages.render.statuspage_api import Component, Incident, IncidentStatus, IncidentUpdate
from statuspages.render.vocabulary import Impact

# How far ahead a page announces maintenance, and how long a completed one stays listed.
HORIZON = timedelta(days=30)
LOOKBACK = timedelta(days=7)
UPCOMING_PER_WINDOW = 3
COMPLETED_PER_WINDOW = 1

IN_PROGRESS_TEXT = "Scheduled maintenance is in progress."
COMPLETED_TEXT = "The scheduled maintenance has been completed."


@dataclass(frozen=True)
class Window:
    """Hold what a page may say about a maintenance window: its public id, name, description and creation."""

    id: str
    name: str
    description: str
    created_at: datetime


def occurrence_status(start: datetime, end: datetime, now: datetime) -> IncidentStatus:
    """Return an occurrence's status at ``now``: scheduled, in_progress (``start <= now < end``) or completed."""
    if now < start:
        return IncidentStatus.SCHEDULED
    if now < end:
        return IncidentStatus.IN_PROGRESS
    return IncidentStatus.COMPLETED


def shown_occurrences(
    occurrences: Sequence[tuple[datetime, datetime]], now: datetime
) -> list[tuple[datetime, datetime]]:
    """Return the occurrences (``(start, end)``, in start order) a page lists for one window at ``now``."""
    ended = [o for o in occurrences if o[1] <= now and o[1] > now - LOOKBACK]
    running = [o for o in occurrences if o[0] <= now < o[1]]
    coming = [o for o in occurrences if now < o[0] <= now + HORIZON]
    return [*ended[-COMPLETED_PER_WINDOW:], *running, *coming[:UPCOMING_PER_WINDOW]]


def occurrence_id(window_id: str, start: datetime) -> str:
    """Return a stable id for one occurrence of a window: the window's id and the start's epoch second."""
    return f"{window_id}-{int(start.timestamp())}"


def scheduled_maintenance(
    window: Window,
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    url: str,
    components: Sequence[Component],
) -> Incident:
    """Return one occurrence of ``window`` as a Statuspage scheduled maintenance, with its updates so far."""
    status = occurrence_status(start, end, now)
    ident = occurrence_id(window.id, start)
    # Announced when the window was made; a window made while it already ran was never "scheduled".
    announced = min(window.created_at, start)
    updates: list[IncidentUpdate] = []
    if announced < start or status == IncidentStatus.SCHEDULED:
        updates.append(
            IncidentUpdate(
                id=f"{ident}-scheduled",
                status=IncidentStatus.SCHEDULED,
                body=window.description or f"{window.name} is scheduled.",
                created_at=announced,
                updated_at=announced,
                display_at=announced,
            )
        )
    if status != IncidentStatus.SCHEDULED:
        # The window's own words go on its first update, whichever that is.
        opening = IN_PROGRESS_TEXT if updates else window.description or IN_PROGRESS_TEXT
        updates.append(
            IncidentUpdate(
                id=f"{ident}-in_progress",
                status=IncidentStatus.IN_PROGRESS,
                body=opening,
                created_at=start,
                updated_at=start,
                display_at=start,
            )
        )
    if status == IncidentStatus.COMPLETED:
        updates.append(
            IncidentUpdate(
                id=f"{ident}-completed",
                status=IncidentStatus.COMPLETED,
                body=COMPLETED_TEXT,
                created_at=end,
                updated_at=end,
                display_at=end,
            )
        )
    return Incident(
        id=ident,
        name=window.name,
        status=status,
        impact=Impact.MAINTENANCE,
        created_at=announced,
        updated_at=updates[-1].created_at,
        started_at=start,
        shortlink=f"{url}#maintenance-{ident}",
        resolved_at=end if status == IncidentStatus.COMPLETED else None,
        updates=tuple(updates),
        components=tuple(components),
        scheduled_for=start,
        scheduled_until=end,
    )
