"""A month of history for the report tests: two checks, outages with and without raw results, maintenance, rollups."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from monitors.models import Healthcheck, Organization
from monitors.services import maintenance_window_create
from tests.alerts.channel_support import smtp_server  # noqa: F401  (a real SMTP server on loopback)
from tests.reports.support import change, make_check, outage_results, rollup

OCTOBER = datetime(2026, 10, 1, tzinfo=UTC)


@dataclass
class History:
    api: Healthcheck  # three outages in October (one inside maintenance), one in September
    docs: Healthcheck  # created mid-October, never down


@pytest.fixture
def history(org: Organization) -> History:
    api = make_check(
        org, created=datetime(2026, 8, 1, tzinfo=UTC), name="API", regions=["eu-west", "us-east"], quorum=1
    )
    docs = make_check(org, created=datetime(2026, 10, 16, 12, 0, tzinfo=UTC), name="Docs")
    # 20 minutes with raw results: from the first failure to the first good result.
    first = datetime(2026, 10, 10, 8, 0, tzinfo=UTC)
    outage_results(api, first, first + timedelta(minutes=20))
    change(api, first + timedelta(seconds=10), "up", "down")
    change(api, first + timedelta(minutes=20, seconds=1), "down", "up")
    # 10 minutes whose results were pruned: the status changes' own times.
    second = datetime(2026, 10, 20, 12, 0, tzinfo=UTC)
    change(api, second, "up", "down")
    change(api, second + timedelta(minutes=10), "down", "up")
    # An hour down inside a maintenance window: not downtime, and not counted.
    held = datetime(2026, 10, 25, 2, 0, tzinfo=UTC)
    maintenance_window_create(
        organization=org,
        name="Upgrade",
        starts_at=held,
        duration=timedelta(hours=2),
        healthchecks=[api.public_id],
    )
    change(api, held + timedelta(minutes=30), "up", "down")
    change(api, held + timedelta(minutes=90), "down", "up")
    # September: five minutes.
    change(api, datetime(2026, 9, 15, 3, 0, tzinfo=UTC), "up", "down")
    change(api, datetime(2026, 9, 15, 3, 5, tzinfo=UTC), "down", "up")
    # Response times: a day in each region (whole UTC days come from the daily rollups).
    rollup(
        api, datetime(2026, 10, 5, tzinfo=UTC), [100.0] * 90 + [300.0] * 9 + [900.0], failures=1, period="day"
    )
    rollup(api, datetime(2026, 10, 6, tzinfo=UTC), [50.0] * 100, region="us-east", period="day")
    # An hourly rollup of a day whose daily rollup is read instead: not counted twice.
    rollup(api, datetime(2026, 10, 6, 5, 0, tzinfo=UTC), [50.0] * 100, region="us-east")
    # Outside October: not in the report.
    rollup(api, datetime(2026, 9, 30, 23, 0, tzinfo=UTC), [5000.0] * 10)
    return History(api, docs)
