"""The incidents API: list with filters, read with the timeline, acknowledge; tenancy and scopes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from alerts.models import Incident
from alerts.services import outbox_consume
from tests.alerts.conftest import kinds_delivered, status_change, timeline
from tests.clock import frozen_at

pytestmark = pytest.mark.django_db

URL = "/api/v1/incidents/"


@pytest.fixture
def incident(check, now) -> Incident:
    status_change(check, "down", at=now, reason="Connection refused", regions={"eu-west": "connect"})
    outbox_consume(now=now)
    return Incident.objects.get()


@pytest.fixture
def resolved(make_check, now) -> Incident:
    healthcheck = make_check(name="Old")
    status_change(healthcheck, "down", at=now - timedelta(hours=2))
    status_change(healthcheck, "up", at=now - timedelta(hours=1), frm="down")
    outbox_consume(now=now)
    return Incident.objects.get(healthcheck=healthcheck)


def test_an_incident_reads_with_its_cause_and_timeline(client, incident, check):
    response = client.get(f"{URL}{incident.public_id}/")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == str(incident.public_id)
    assert body["healthcheck"] == {"id": str(check.public_id), "name": "Docs MCP", "deleted": False}
    assert (body["state"], body["severity"], body["resolution"]) == ("open", "critical", "")
    assert body["cause"] == {
        "kind": "connect",
        "reason": "Connection refused",  # no result to take the failure's own sentence from
        "summary": "Connection refused",
        "regions": {"eu-west": "connect"},
        "missing_tools": [],
    }
    assert [event["kind"] for event in body["events"]] == ["opened"]


@pytest.mark.parametrize(
    ("query", "names"),
    [("", ["Docs MCP", "Old"]), ("?state=open", ["Docs MCP"]), ("?state=resolved", ["Old"])],
)
def test_the_list_filters_open_and_resolved(client, incident, resolved, query, names):
    response = client.get(URL + query)

    assert response.status_code == 200
    assert [item["healthcheck"]["name"] for item in response.json()["results"]] == names


def test_the_list_filters_by_healthcheck(client, incident, resolved):
    response = client.get(f"{URL}?healthcheck={resolved.healthcheck_public_id}")

    assert [item["id"] for item in response.json()["results"]] == [str(resolved.public_id)]


@pytest.mark.parametrize("query", ["?state=closed", "?healthcheck=not-a-uuid"])
def test_a_bad_filter_is_a_400_naming_it(client, query):
    response = client.get(URL + query)

    assert response.status_code == 400
    assert query[1:].split("=")[0] in response.json()


def test_another_organizations_incident_is_not_found(other_client, incident):
    assert other_client.get(f"{URL}{incident.public_id}/").status_code == 404
    assert other_client.post(f"{URL}{incident.public_id}/acknowledge/").status_code == 404
    assert other_client.get(URL).json()["results"] == []
    assert Incident.objects.get().acknowledged_at is None


def test_acknowledging_records_who_and_when_and_tells_the_channels(
    client, incident, make_channel, check, now
):
    incident.delete()
    channel = make_channel()
    status_change(check, "down", at=now + timedelta(minutes=1))
    outbox_consume(now=now + timedelta(minutes=1))
    incident = Incident.objects.get()

    with frozen_at(now + timedelta(minutes=2)):  # after the opening, a minute past the held NOW
        response = client.post(f"{URL}{incident.public_id}/acknowledge/")

    assert response.status_code == 200
    body = response.json()
    assert body["acknowledged_at"] is not None
    assert body["acknowledged_by"].startswith("API key ")
    assert [event["kind"] for event in body["events"]] == ["opened", "acknowledged"]
    assert kinds_delivered(channel) == ["incident.opened", "incident.acknowledged"]


def test_acknowledging_twice_changes_nothing_the_second_time(client, incident):
    first = client.post(f"{URL}{incident.public_id}/acknowledge/").json()

    second = client.post(f"{URL}{incident.public_id}/acknowledge/")

    assert second.status_code == 200
    assert second.json()["acknowledged_at"] == first["acknowledged_at"]
    assert timeline(incident) == ["opened", "acknowledged"]


def test_acknowledging_a_resolved_incident_is_a_409(client, resolved):
    response = client.post(f"{URL}{resolved.public_id}/acknowledge/")

    assert response.status_code == 409
    assert "resolved" in response.json()["detail"]


def test_a_read_only_key_reads_but_cannot_acknowledge(read_client, incident):
    assert read_client.get(URL).status_code == 200

    response = read_client.post(f"{URL}{incident.public_id}/acknowledge/")

    assert response.status_code == 403
    assert Incident.objects.get().acknowledged_at is None


def test_no_key_is_a_401(incident):
    from rest_framework.test import APIClient

    assert APIClient().get(URL).status_code == 401


def test_the_schema_documents_the_incidents_routes(client):
    from django.test import Client

    schema = Client().get("/api/v1/schema/?format=json").json()

    assert "/api/v1/incidents/" in schema["paths"]
    assert "/api/v1/incidents/{id}/acknowledge/" in schema["paths"]
