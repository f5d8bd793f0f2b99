"""Heartbeat checks through the API: created passive (no regions, never claimed), bad configs a 400 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from monitors.models import Healthcheck, Heartbeat

pytestmark = pytest.mark.django_db

URL = "/api/v1/healthchecks/"
NIGHTLY = {"schedule": {"cron": "0 3 * * *", "tz": "Europe/Paris"}, "grace": 300}


def create(client: Any, config: dict[str, Any]) -> Any:
    return client.post(URL, {"name": "nightly backup", "type": "heartbeat", "config": config}, format="json")


def test_a_heartbeat_is_created_passive(client):
    response = create(client, NIGHTLY)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["type"], body["type_name"]) == (7, "heartbeat")
    assert body["config"] == {**NIGHTLY, "headers": {}}
    assert body["regions"] == []
    check = Healthcheck.objects.get(public_id=body["id"])
    # Dispatch never claims it: it has no slot.
    assert check.next_check_at is None
    assert Heartbeat.objects.filter(healthcheck=check).exists()


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"schedule": {"cron": "0 0 30 2 *"}}, "config.schedule.cron"),
        ({"schedule": {"cron": "0 3 * * *", "tz": "Mars/Olympus"}}, "config.schedule.tz"),
        ({"schedule": {"period": 3600}, "grace": 1}, "config.grace"),
    ],
)
def test_bad_configs_are_a_400_naming_the_field(client, config, field):
    response = create(client, config)

    assert response.status_code == 400
    assert field in str(response.json())
