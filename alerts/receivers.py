"""Answer what monitors asks of the apps above it (``monitors.signals``) from alerts' own data."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from alerts.selectors import acknowledged_incidents
from monitors.uptime import Acknowledged


def answer_acknowledgements(
    sender: Any,
    *,
    healthcheck_ids: Sequence[int],
    start: datetime,
    end: datetime,
    until: datetime,
    **_: Any,
) -> list[Acknowledged]:
    """Return the acknowledged incidents monitors asked for (``acknowledgements_asked``): the reports' MTTA."""
    return acknowledged_incidents(healthcheck_ids=healthcheck_ids, start=start, end=end, until=until)
