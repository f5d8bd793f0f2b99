"""A body naming a field the API doesn't have is a 400 naming it, never a silently ignored setting.

What a client read may be sent back as it is: shown-only fields (id, status, timestamps) pass.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

CHECK = {"name": "Docs", "type": "mcp", "config": {"uri": "https://mcp.example.com/mcp"}}
MAIL = {"name": "ops", "kind": "email", "config": {"recipients": ["ops@example.com"]}}


def window() -> dict:
    starts = timezone.now() + timedelta(days=1)
    return {
        "name": "Upgrade",
        "starts_at": starts.isoformat(),
        "ends_at": (starts + timedelta(hours=1)).isoformat(),
    }


CREATES = [
    ("/api/v1/healthchecks/", lambda: CHECK, "interval_seconds"),
    ("/api/v1/maintenance-windows/", window, "ends"),
    ("/api/v1/channels/", lambda: MAIL, "type"),
    ("/api/v1/status-pages/", lambda: {"slug": "acme", "title": "Acme"}, "titel"),
]


@pytest.mark.parametrize(("url", "body", "typo"), CREATES, ids=[url for url, _, _ in CREATES])
def test_an_unknown_field_in_a_create_is_a_400_naming_it_and_saves_nothing(client, url, body, typo):
    before = client.get(url).json()["count"]

    response = client.post(url, {**body(), typo: 30}, format="json")

    assert response.status_code == 400
    assert "unknown field; the fields are: " in response.json()[typo][0]
    assert client.get(url).json()["count"] == before


def test_an_unknown_field_in_a_policy_is_a_400_naming_it(client):
    response = client.put(
        "/api/v1/alert-policies/default/", {"channels": [], "notify_on_recovry": False}, format="json"
    )

    assert response.status_code == 400
    assert "notify_on_recovry" in response.json()


def test_an_unknown_field_in_report_settings_is_a_400_naming_it(client):
    response = client.patch("/api/v1/reports/settings/", {"sla_targte": "99.9"}, format="json")

    assert response.status_code == 400
    assert "sla_targte" in response.json()


def test_the_error_lists_only_fields_a_client_can_write(client):
    message = client.post("/api/v1/healthchecks/", {**CHECK, "interval_seconds": 30}, format="json").json()
    fields = message["interval_seconds"][0].removeprefix("unknown field; the fields are: ").split(", ")

    assert "interval" in fields
    assert "status" not in fields
    assert "id" not in fields


@pytest.mark.parametrize(("url", "body"), [("/api/v1/healthchecks/", CHECK), ("/api/v1/channels/", MAIL)])
def test_what_a_client_read_can_be_sent_back_whole(client, url, body):
    created = client.post(url, body, format="json").json()
    shown = client.get(f"{url}{created['id']}/").json()

    response = client.put(f"{url}{created['id']}/", shown, format="json")

    assert response.status_code == 200, response.json()


def test_a_body_of_many_long_unknown_fields_gets_a_bounded_answer(client):
    body = {**CHECK, **{f"{index:04d}" + "k" * 1000: 1 for index in range(200)}}

    response = client.post("/api/v1/healthchecks/", body, format="json")

    assert response.status_code == 400
    assert len(response.json()) == 20
    assert all(len(name) == 100 for name in response.json())
