"""Check the ping check (type 5) through the API: its config's messages and the address rule at save time."""

from __future__ import annotations

import pytest

URL = "/api/v1/healthchecks/"


def create(client, config: dict[str, object]):
    return client.post(URL, {"name": "ping", "type": "ping", "config": config}, format="json")


def test_a_ping_check_is_created_with_its_defaults_and_no_headers(client):
    response = create(client, {"host": "example.com"})

    assert response.status_code == 201, response.json()
    assert response.json()["config"] == {
        "host": "example.com",
        "count": 3,
        "maxLossPercent": 50,
        "degradedRttMs": None,
        "timeout": 10.0,
    }


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"host": "10.0.0.1"}, "config.host"),
        ({"host": "127.0.0.1"}, "config.host"),
        ({"host": "::1"}, "config.host"),
        ({"host": "169.254.169.254"}, "config.host"),
        ({"host": "bad host"}, "config.host"),
        ({"host": "example.com", "count": 11}, "config.count"),
        ({"host": "example.com", "headers": {"X-Key": "v"}}, "config.headers"),
    ],
)
def test_a_bad_or_private_target_is_a_400_naming_the_field(client, config, field):
    response = create(client, config)

    assert response.status_code == 400
    assert field in str(response.json())


def test_private_addresses_are_allowed_where_the_deployment_allows_private_targets(client, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True

    assert create(client, {"host": "10.0.0.1"}).status_code == 201


def test_an_update_keeps_a_ping_check_without_headers(client):
    check_id = create(client, {"host": "example.com"}).json()["id"]

    response = client.patch(f"{URL}{check_id}/", {"config": {"count": 5}}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["config"]["count"] == 5
    assert "headers" not in response.json()["config"]
