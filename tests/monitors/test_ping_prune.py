"""Ping retention: the plan's window and a cap per heartbeat, never the last completion ping the judge decides from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitors.models import Heartbeat, Ping
from monitors.services.healthchecks import healthcheck_create
from monitors.services.heartbeats import heartbeats_judge, pings_prune
from probes.checks import check_kind

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


@pytest.fixture
def heartbeat(org):
    return healthcheck_create(
        organization=org,
        name="yearly",
        check_type=check_kind("heartbeat"),
        config={"schedule": {"period": 366 * 86400}, "grace": 3600},
        now=NOW,
    )


def add_pings(check, *kinds_ages: tuple[str, timedelta]) -> list[int]:
    rows = Ping.objects.bulk_create(
        [Ping(healthcheck=check, at=NOW - age, kind=kind) for kind, age in kinds_ages]
    )
    Heartbeat.objects.filter(pk=check.pk).update(ping_count=len(rows))
    return [row.pk for row in rows]


def kept(check) -> list[str]:
    return [
        kind for kind in Ping.objects.filter(healthcheck=check).order_by("at").values_list("kind", flat=True)
    ]


def test_pings_past_the_retention_go_but_the_last_completion_stays(heartbeat, org):
    old = timedelta(days=org.plan.retention_days + 1)
    add_pings(
        heartbeat,
        ("success", old + timedelta(days=2)),
        ("fail", old + timedelta(days=1)),
        ("success", old),
        # A run begun after the last completion: its start is kept by Heartbeat.last_start_at, not the row.
        ("start", old - timedelta(hours=1)),
    )

    assert pings_prune(now=NOW) == 3

    assert kept(heartbeat) == ["success"]
    # The judge still decides from it: up, not pending.
    heartbeats_judge(now=NOW)
    heartbeat.refresh_from_db()
    assert heartbeat.status == "up"


def test_pings_inside_the_retention_stay(heartbeat):
    add_pings(
        heartbeat, ("start", timedelta(days=2)), ("success", timedelta(days=1)), ("start", timedelta(0))
    )

    assert pings_prune(now=NOW) == 0

    assert kept(heartbeat) == ["start", "success", "start"]


def test_a_heartbeat_keeps_its_newest_pings_past_the_cap(heartbeat):
    add_pings(heartbeat, *[("success" if i % 2 else "start", timedelta(minutes=10 - i)) for i in range(6)])

    assert pings_prune(now=NOW, keep=3) == 3

    assert kept(heartbeat) == ["success", "start", "success"]
    assert Ping.objects.filter(healthcheck=heartbeat).earliest("at").at == NOW - timedelta(minutes=7)
