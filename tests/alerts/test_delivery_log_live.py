"""A channel's delivery log (GET /api/v1/channels/{id}/deliveries/) read over HTTP from a live Uptimy.

The channel's receiver, a real one on loopback, fails every alert with an answer that quotes
the secrets it was given (the URL's token, the signing secret); the log shows each attempt's
status, duration and sentence, newest delivery first and paged, and no secret anywhere.
"""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from alerts.channels.webhook import generate_secret
from alerts.models import Channel, Delivery
from alerts.services import alert_policy_set, channel_create, outbox_consume
from alerts.services.sending import deliveries_send
from monitors.services import api_key_create
from tests.alerts.channel_support import Receiver, Reply
from tests.alerts.conftest import status_change
from tests.clock import frozen_at

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

URL_TOKEN = "tok-3f9a8b7c6d5e4f30"


@pytest.fixture(autouse=True)
def _loopback_allowed(settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 5.0


@pytest.fixture
def secret() -> str:
    return generate_secret()


@pytest.fixture
def failing_hook(org, receiver: Receiver, secret) -> Channel:
    """A webhook whose receiver answers 500, quoting the signature header, the URL's token and the secret back."""
    receiver.default = Reply(
        status=500,
        body=f"rejected /hook?token={URL_TOKEN} signed with {secret}".encode(),
        echo_header="webhook-signature",
    )
    channel = channel_create(
        organization=org,
        name="failing hook",
        kind=Channel.Kind.WEBHOOK,
        config={"url": receiver.url(f"/hook?token={URL_TOKEN}"), "secret": secret},
    )
    alert_policy_set(organization=org, channels=[channel])
    return channel


def api(live_server, organization) -> httpx.Client:
    _, raw_key = api_key_create(organization=organization)
    return httpx.Client(base_url=live_server.url, headers={"Authorization": f"Bearer {raw_key}"}, timeout=10)


@pytest.fixture
def failed_twice_then_once(failing_hook, make_check, now, receiver):
    """Two deliveries: the older one tried twice, the newer one (another incident, later) once."""
    older, newer = make_check(name="Docs MCP"), make_check(name="Search MCP")
    status_change(older, "down", at=now)
    outbox_consume(now=now)
    deliveries_send()
    retried = Delivery.objects.get().next_attempt_at
    with frozen_at(retried):
        deliveries_send()
    later = retried + timedelta(seconds=1)  # before the older one's next try (30 s at the least)
    with frozen_at(later):
        status_change(newer, "down", at=later)
        outbox_consume(now=later)
        deliveries_send(now=later)
    assert receiver.wait_received(3, timeout=10)
    return failing_hook


def test_the_log_lists_each_delivery_newest_first_with_its_attempts(
    live_server, org, failed_twice_then_once, receiver
):
    with api(live_server, org) as client:
        first = client.get(f"/api/v1/channels/{failed_twice_then_once.public_id}/deliveries/?page_size=1")
        assert first.status_code == 200
        second = client.get(first.json()["next"])

    (newer,), (older,) = first.json()["results"], second.json()["results"]
    assert first.json()["count"] == 2
    assert (newer["event"]["type"], newer["event"]["healthcheck"]) == ("incident.opened", "Search MCP")
    assert older["event"]["healthcheck"] == "Docs MCP"
    assert [a["status_code"] for a in older["attempts"]] == [500, 500]
    assert older["attempts"][0]["at"] < older["attempts"][1]["at"]
    assert older["state"] == "failed"
    assert older["next_attempt_at"] > older["attempts"][1]["at"]
    for attempt in older["attempts"] + newer["attempts"]:
        assert attempt["ok"] is False
        assert attempt["duration_ms"] > 0
        assert attempt["error"].startswith("127.0.0.1 answered HTTP 500: webhook-signature: ")
    assert {older["id"], newer["id"]} == {r.headers["webhook-id"] for r in receiver.received}


def test_the_log_shows_no_secret_of_the_channel(live_server, org, failed_twice_then_once, secret, receiver):
    with api(live_server, org) as client:
        answer = client.get(f"/api/v1/channels/{failed_twice_then_once.public_id}/deliveries/")

    assert answer.status_code == 200
    assert "answered HTTP 500" in answer.text
    signatures = [part for r in receiver.received for part in r.headers["webhook-signature"].split()]
    for hidden in [URL_TOKEN, secret, secret.removeprefix("whsec_"), *signatures]:
        assert hidden not in answer.text


def test_another_organization_s_channel_is_not_found(live_server, other_org, failed_twice_then_once):
    with api(live_server, other_org) as client:
        answer = client.get(f"/api/v1/channels/{failed_twice_then_once.public_id}/deliveries/")

    assert answer.status_code == 404


def test_the_schema_documents_the_delivery_log(live_server):
    schema = httpx.get(f"{live_server.url}/api/v1/schema/?format=json", timeout=10).json()

    operation = schema["paths"]["/api/v1/channels/{id}/deliveries/"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {"id", "page", "page_size"}
    page = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    delivery = schema["components"]["schemas"][page]["properties"]["results"]["items"]["$ref"].rsplit("/", 1)[
        1
    ]
    assert set(schema["components"]["schemas"][delivery]["properties"]) == {
        "id",
        "event",
        "state",
        "attempts",
        "next_attempt_at",
        "created_at",
        "delivered_at",
    }
