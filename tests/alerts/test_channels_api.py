"""The channels API against a real receiver on loopback: secrets write-only, validation naming the field."""

from __future__ import annotations

import json

import pytest
from standardwebhooks.webhooks import Webhook

from alerts.models import Channel
from monitors.models import ApiKey
from tests.alerts.channel_support import Receiver, Reply

pytestmark = pytest.mark.django_db

URL = "/api/v1/channels/"


@pytest.fixture(autouse=True)
def _loopback_allowed(settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 5.0


@pytest.fixture
def client(make_client, org):
    return make_client(org)


def add_webhook(client, receiver: Receiver, **extra):
    body = {"name": "ops hook", "kind": "webhook", "config": {"url": receiver.url()}, **extra}
    response = client.post(URL, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_webhook_added_without_a_secret_gets_one_shown_once(client, receiver):
    added = add_webhook(client, receiver)

    assert added["signing_secret"].startswith("whsec_")
    assert added["config"]["secret"] == "********"
    assert added["signing_secret"] not in json.dumps(added["config"])
    shown = client.get(f"{URL}{added['id']}/").json()
    assert "signing_secret" not in shown
    assert added["signing_secret"] not in json.dumps(shown)


def test_a_test_send_reaches_the_receiver_signed_with_the_secret_shown_once(client, receiver):
    added = add_webhook(client, receiver)

    response = client.post(f"{URL}{added['id']}/test/")

    assert response.status_code == 200
    assert response.json()["ok"] is True
    (got,) = receiver.received
    Webhook(added["signing_secret"]).verify(got.body, got.headers)
    assert json.loads(got.body)["type"] == "channel.test"


def test_a_failed_test_says_why(client, receiver):
    added = add_webhook(client, receiver)
    receiver.answer(Reply(status=500))

    attempt = client.post(f"{URL}{added['id']}/test/").json()

    assert (attempt["ok"], attempt["status_code"]) == (False, 500)
    assert attempt["error"]


def test_a_secret_sent_back_masked_keeps_its_stored_value(client, receiver):
    added = add_webhook(client, receiver)
    shown = client.get(f"{URL}{added['id']}/").json()

    response = client.patch(
        f"{URL}{added['id']}/",
        {"name": "renamed", "config": shown["config"] | {"url": receiver.url("/other")}},
        format="json",
    )

    assert response.status_code == 200, response.content
    client.post(f"{URL}{added['id']}/test/")
    (got,) = receiver.received
    assert got.path == "/other"
    Webhook(added["signing_secret"]).verify(got.body, got.headers)


def test_a_rotated_secret_is_shown_once_and_both_sign_for_a_day(client, receiver):
    added = add_webhook(client, receiver)

    rotated = client.post(f"{URL}{added['id']}/rotate-secret/").json()

    assert rotated["signing_secret"] != added["signing_secret"]
    client.post(f"{URL}{added['id']}/test/")
    (got,) = receiver.received
    Webhook(rotated["signing_secret"]).verify(got.body, got.headers)
    Webhook(added["signing_secret"]).verify(got.body, got.headers)


def test_re_enabling_a_disabled_channel_sends_it_a_test(client, receiver):
    added = add_webhook(client, receiver)
    Channel.objects.filter(public_id=added["id"]).update(
        enabled=False, disabled_reason="The receiver answered 410"
    )

    response = client.patch(f"{URL}{added['id']}/", {"enabled": True}, format="json")

    body = response.json()
    assert (body["enabled"], body["disabled_reason"], body["test"]["ok"]) == (True, "", True)
    assert len(receiver.received) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "kind": "carrier-pigeon", "config": {}}, "kind"),
        ({"name": "x", "kind": "webhook", "config": {"url": "ftp://example.com/hook"}}, "config.url"),
        ({"name": "x", "kind": "webhook", "config": {"url": "https://example.com/", "secret": "plain"}}, "config.secret"),
        ({"name": "x", "kind": "apprise", "config": {"url": "file:///etc/passwd"}}, "config.url"),
        ({"name": "x", "kind": "apprise", "config": {"url": "json://example.com/?keyfile=/etc/ssl/key.pem"}}, "config.url"),
        ({"name": "x", "kind": "email", "config": {"recipients": []}}, "config.recipients"),
        ({"name": "x", "kind": "pagerduty", "config": {}}, "config.routing_key"),
        ({"name": "  ", "kind": "email", "config": {"recipients": ["ops@acme.example"]}}, "name"),
    ],
)  # fmt: skip
def test_bad_channels_are_refused_naming_the_field(client, body, field):
    response = client.post(URL, body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()


def test_a_webhook_to_a_private_address_is_refused_unless_private_targets_are_allowed(
    client, receiver, settings
):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False

    response = client.post(
        URL, {"name": "x", "kind": "webhook", "config": {"url": receiver.url()}}, format="json"
    )

    assert response.status_code == 400
    assert "loopback" in response.json()["config.url"][0]


def test_a_name_is_unique_within_the_organization(client, receiver):
    add_webhook(client, receiver)

    response = client.post(
        URL, {"name": "ops hook", "kind": "webhook", "config": {"url": receiver.url()}}, format="json"
    )

    assert response.status_code == 400
    assert "name" in response.json()


def test_a_channel_s_kind_can_t_change(client, receiver):
    added = add_webhook(client, receiver)

    response = client.patch(f"{URL}{added['id']}/", {"kind": "email"}, format="json")

    assert response.status_code == 400
    assert "kind" in response.json()


def test_another_organization_s_channel_is_not_found(client, receiver, make_client, other_org):
    added = add_webhook(client, receiver)
    other = make_client(other_org)

    assert other.get(f"{URL}{added['id']}/").status_code == 404
    assert other.post(f"{URL}{added['id']}/test/").status_code == 404
    assert other.delete(f"{URL}{added['id']}/").status_code == 404
    assert receiver.received == []


def test_a_read_only_key_reads_channels_but_never_writes_or_sends(client, receiver, make_client, org):
    added = add_webhook(client, receiver)
    reader = make_client(org, scope=ApiKey.Scope.READ)

    assert reader.get(URL).status_code == 200
    assert (
        reader.post(
            URL, {"name": "y", "kind": "webhook", "config": {"url": receiver.url()}}, format="json"
        ).status_code
        == 403
    )
    assert reader.post(f"{URL}{added['id']}/test/").status_code == 403
    assert reader.delete(f"{URL}{added['id']}/").status_code == 403
    assert receiver.received == []


def test_deleting_a_channel_removes_it(client, receiver):
    added = add_webhook(client, receiver)

    assert client.delete(f"{URL}{added['id']}/").status_code == 204
    assert client.get(f"{URL}{added['id']}/").status_code == 404


def test_a_stored_routing_key_does_not_follow_the_channel_to_another_host(client, receiver):
    body = {
        "name": "pager",
        "kind": "pagerduty",
        "config": {"routing_key": "R" * 32, "events_url": receiver.url()},
    }
    added = client.post(URL, body, format="json").json()
    shown = added["config"]

    moved = client.patch(
        f"{URL}{added['id']}/",
        {"config": shown | {"events_url": receiver.url(host="localhost")}},
        format="json",
    )
    resent = client.patch(
        f"{URL}{added['id']}/",
        {"config": {"routing_key": "R" * 32, "events_url": receiver.url(host="localhost")}},
        format="json",
    )

    assert moved.status_code == 400
    assert "another host" in moved.json()["config.routing_key"][0]
    assert resent.status_code == 200, resent.content


def test_a_same_host_change_keeps_the_stored_secret(client, receiver):
    added = add_webhook(client, receiver)
    shown = added["config"]

    response = client.patch(
        f"{URL}{added['id']}/", {"config": shown | {"url": receiver.url("/v2")}}, format="json"
    )

    assert response.status_code == 200, response.content
