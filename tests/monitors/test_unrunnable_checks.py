"""A check Uptimy can't run as stored is recorded down with why, never silently left unchecked.

Its stored settings may fail a rule tightened since they were saved, or its header values may
not decrypt with this server's keys; either way its owner must hear of it, and the other checks
of its batch run as usual.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitors.models import Healthcheck, ProbeResult
from monitors.selectors import INVALID_CONFIG_REASON, UNREADABLE_HEADERS_REASON
from monitors.worker.execution import execute_batch
from probes.checks.http import HTTP
from tests.monitors.conftest import Captured

SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
REGION = "eu-west"


def spoil_config(check: Healthcheck) -> None:
    """Store a config today's rules refuse, as a rule tightened after it was saved would leave it."""
    Healthcheck.objects.filter(pk=check.pk).update(config={**check.config, "minTools": -3})


def spoil_headers(check: Healthcheck) -> None:
    """Store header values this server's keys can't decrypt, as a lost key would leave them."""
    Healthcheck.objects.filter(pk=check.pk).update(secret_headers="not-a-fernet-token")


@pytest.mark.parametrize(
    ("spoil", "reason"), [(spoil_config, INVALID_CONFIG_REASON), (spoil_headers, UNREADABLE_HEADERS_REASON)]
)
def test_a_check_that_cant_run_is_recorded_down_with_why_beside_a_healthy_one(
    make, http_server, refused_url, spoil, reason
):
    broken = make(refused_url, now=SLOT)
    healthy = make(http_server, check_type=HTTP, now=SLOT)
    spoil(broken)
    enqueue = Captured()

    assert (
        execute_batch(
            REGION, [[broken.id, SLOT.isoformat(), 0], [healthy.id, SLOT.isoformat(), 0]], enqueue=enqueue
        )
        == 2
    )

    failed = ProbeResult.objects.get(healthcheck=broken)
    assert (failed.status, failed.kind) == ("down", "config")
    assert failed.reason.startswith(reason)
    assert ProbeResult.objects.get(healthcheck=healthy).status == "up"
    # Like any failure, it is rechecked before the region counts it down.
    assert [item[0] for _, items, _ in enqueue.calls for item in items] == [broken.id]


def test_the_reason_names_the_field_that_no_longer_passes(make, refused_url):
    broken = make(refused_url, now=SLOT)
    spoil_config(broken)

    execute_batch(REGION, [[broken.id, SLOT.isoformat(), 0]], enqueue=Captured())

    assert "minTools" in ProbeResult.objects.get(healthcheck=broken).reason
