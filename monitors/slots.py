"""Place a healthcheck's runs on its slots: pure arithmetic, shared by the schedule and the services.

Each healthcheck runs at ``slot_offset + k * interval`` seconds after the epoch, with
``slot_offset`` derived from its public id, so checks created together spread over their
interval instead of firing in the same second.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta


def slot_offset_for(public_id: uuid.UUID, interval_seconds: int) -> int:
    """Return the healthcheck's stable offset within its interval."""
    return public_id.int % interval_seconds


def first_slot_at_or_after(moment: datetime, *, interval_seconds: int, offset: int) -> datetime:
    """Return the earliest slot of this schedule at or after ``moment``."""
    seconds = moment.timestamp()
    k = -(-(seconds - offset) // interval_seconds)  # ceiling division
    return datetime.fromtimestamp(k * interval_seconds + offset, tz=UTC)


def slot_after(moment: datetime, *, interval_seconds: int, offset: int) -> datetime:
    """Return the earliest slot of this schedule strictly after ``moment``."""
    slot = first_slot_at_or_after(moment, interval_seconds=interval_seconds, offset=offset)
    return slot if slot > moment else slot + timedelta(seconds=interval_seconds)
