"""Sending the ledger's deliveries to real receivers on loopback: delivered, retried, given up, disabled."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from standardwebhooks.webhooks import Webhook

from alerts.channels.webhook import generate_secret
from alerts.models import Channel, Delivery, DeliveryAttempt, Incident
from alerts.rules import retry_delay
from alerts.services import alert_policy_set, channel_create, outbox_consume
from alerts.services.deliveries import AttemptRecord, deliveries_claim, delivery_attempts_record
from alerts.services.sending import channel_disable, deliveries_send
from monitors.models import Membership
from tests.alerts.channel_support import Receiver, Reply
from tests.alerts.conftest import status_change
from tests.clock import frozen_at

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _loopback_allowed(settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 5.0


@pytest.fixture
def hook(org, receiver: Receiver) -> Channel:
    """A webhook channel to the loopback receiver, the organization's default policy's only channel."""
    channel = channel_create(
        organization=org,
        name="hook",
        kind=Channel.Kind.WEBHOOK,
        config={"url": receiver.url(), "secret": generate_secret()},
    )
    alert_policy_set(organization=org, channels=[channel])
    return channel


def scraped(name: str, **labels: str) -> float:
    """Return one sample of a /metrics scrape from loopback, 0 when it was never counted."""
    response = Client().get("/metrics")
    assert response.status_code == 200
    for family in text_string_to_metric_families(response.content.decode()):
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return float(found.value)
    return 0.0


def went_down(check, now) -> None:
    status_change(
        check, "down", at=now, reason="Down in eu-west (missing_tools)", regions={"eu-west": "missing_tools"}
    )
    outbox_consume(now=now)


def test_a_status_change_reaches_the_webhook_signed_with_the_delivery_s_id(check, hook, receiver, now):
    went_down(check, now)

    assert deliveries_send(now=timezone.now()) == 1

    (got,) = receiver.received
    Webhook(hook.config["secret"]).verify(got.body, got.headers)
    delivery = Delivery.objects.get()
    assert got.headers["webhook-id"] == str(delivery.public_id)
    payload = json.loads(got.body)
    assert (payload["type"], payload["id"]) == ("incident.opened", str(delivery.public_id))
    assert delivery.state == Delivery.State.DELIVERED
    assert DeliveryAttempt.objects.get().status_code == 200


def test_a_failed_attempt_is_retried_later_with_the_same_webhook_id(check, hook, receiver, now):
    receiver.answer(Reply(status=500))
    went_down(check, now)
    first_round = timezone.now()

    deliveries_send(now=first_round)

    delivery = Delivery.objects.get()
    assert delivery.state == Delivery.State.FAILED
    assert (
        first_round + timedelta(seconds=15)
        <= delivery.next_attempt_at
        <= timezone.now() + timedelta(seconds=30)
    )
    assert deliveries_send(now=first_round) == 0  # not before its time

    deliveries_send(now=delivery.next_attempt_at)

    assert [r.headers["webhook-id"] for r in receiver.received] == [str(delivery.public_id)] * 2
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (Delivery.State.DELIVERED, 2)


def test_a_410_gives_up_disables_the_channel_and_tells_the_owners(
    check, hook, receiver, now, org, django_user_model
):
    owner = django_user_model.objects.create_user("owner", "owner@acme.example", "pw-for-tests-only")
    Membership.objects.create(user=owner, organization=org, role=Membership.Role.OWNER)
    receiver.answer(Reply(status=410))
    went_down(check, now)

    deliveries_send(now=timezone.now())

    assert Delivery.objects.get().state == Delivery.State.GIVEN_UP
    hook.refresh_from_db()
    assert not hook.enabled
    assert "410" in hook.disabled_reason
    (message,) = mail.outbox
    assert message.to == ["owner@acme.example"]
    assert "'hook'" in message.subject


def test_a_channel_whose_stored_config_no_longer_reads_gives_up_and_is_disabled(check, hook, now):
    Channel.objects.filter(pk=hook.pk).update(config_encrypted="not a token")
    went_down(check, now)

    deliveries_send(now=timezone.now())

    assert Delivery.objects.get().state == Delivery.State.GIVEN_UP
    hook.refresh_from_db()
    assert not hook.enabled
    assert "decrypted" in hook.disabled_reason
    assert "not a token" not in DeliveryAttempt.objects.get().error


def test_a_retry_past_the_kind_s_horizon_gives_up(check, hook, receiver, now):
    receiver.answer(Reply(status=503))
    went_down(check, now)
    # Made 3 days ago, a webhook's horizon: the next try would come after it.
    Delivery.objects.update(created_at=timezone.now() - timedelta(days=3))

    deliveries_send(now=timezone.now())

    assert Delivery.objects.get().state == Delivery.State.GIVEN_UP
    hook.refresh_from_db()
    assert hook.enabled  # a receiver that stays down is not a refusal


def test_an_incident_s_resolve_reaches_the_receiver_after_its_open(check, hook, receiver, now):
    went_down(check, now)
    status_change(check, "up", frm="down", at=now + timedelta(minutes=3))
    outbox_consume(now=now + timedelta(minutes=3))

    while deliveries_send(now=timezone.now() + timedelta(minutes=5)):
        pass

    assert [json.loads(r.body)["type"] for r in receiver.received] == ["incident.opened", "incident.resolved"]


def test_a_receiver_that_never_answers_costs_one_bounded_attempt(check, hook, receiver, now, settings):
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 0.5
    receiver.answer(Reply(hang=True))
    went_down(check, now)

    deliveries_send(now=timezone.now())

    receiver.released.set()
    attempt = DeliveryAttempt.objects.get()
    assert not attempt.ok
    assert attempt.duration_ms < 5_000
    assert Delivery.objects.get().state == Delivery.State.FAILED


@pytest.mark.parametrize(
    ("attempts", "retry_after", "jitter", "expected"),
    [
        (1, None, 0.0, timedelta(seconds=15)),
        (1, None, 1.0, timedelta(seconds=30)),
        (2, None, 1.0, timedelta(seconds=60)),
        (3, None, 0.5, timedelta(seconds=90)),
        # Doubling stops at an hour.
        (12, None, 1.0, timedelta(hours=1)),
        (500, None, 0.0, timedelta(minutes=30)),
        # The receiver's Retry-After is a floor, up to a day.
        (1, 600.0, 1.0, timedelta(minutes=10)),
        (1, 5.0, 1.0, timedelta(seconds=30)),
        (1, 10 * 86_400.0, 1.0, timedelta(days=1)),
    ],
)
def test_retry_delays_double_with_jitter_and_honour_retry_after(attempts, retry_after, jitter, expected):
    assert retry_delay(attempts, retry_after=retry_after, jitter=jitter) == expected


@pytest.mark.parametrize(
    ("attempts", "expected"), [(1, timedelta(seconds=2)), (3, timedelta(seconds=8)), (20, timedelta(hours=1))]
)
def test_retry_delays_double_from_the_configured_first_delay(attempts, expected):
    assert retry_delay(attempts, retry_after=None, jitter=1.0, first=timedelta(seconds=2)) == expected


@pytest.mark.parametrize(
    ("attempts", "jitter", "first"),
    [
        (0, 0.5, timedelta(seconds=30)),
        (1, -0.1, timedelta(seconds=30)),
        (1, 1.5, timedelta(seconds=30)),
        (1, 0.5, timedelta(0)),
    ],
)
def test_retry_delay_refuses_nonsense(attempts, jitter, first):
    with pytest.raises(ValueError, match=r"attempts|jitter|first delay"):
        retry_delay(attempts, retry_after=None, jitter=jitter, first=first)


def test_a_receiver_failing_five_times_then_answering_gets_the_message_once_delivered(
    check, hook, receiver, now
):
    receiver.answer(*[Reply(status=500)] * 5)
    went_down(check, now)
    due = timezone.now()

    for _ in range(6):
        deliveries_send(now=due)
        due = Delivery.objects.get().next_attempt_at

    delivery = Delivery.objects.get()
    assert (delivery.state, delivery.attempts) == (Delivery.State.DELIVERED, 6)
    assert [r.headers["webhook-id"] for r in receiver.received] == [str(delivery.public_id)] * 6
    assert list(DeliveryAttempt.objects.order_by("id").values_list("status_code", flat=True)) == [500] * 5 + [
        200
    ]


def test_delivered_and_retried_attempts_are_counted_by_kind_and_result(check, hook, receiver, now):
    series = {
        "retry": ("uptimy_alert_deliveries_total", {"kind": "webhook", "result": "retry"}),
        "delivered": ("uptimy_alert_deliveries_total", {"kind": "webhook", "result": "delivered"}),
        "lag": ("uptimy_alert_lag_seconds_count", {"kind": "webhook"}),
    }
    before = {key: scraped(name, **labels) for key, (name, labels) in series.items()}
    receiver.answer(Reply(status=500))
    went_down(check, now)

    deliveries_send(now=timezone.now())
    deliveries_send(now=Delivery.objects.get().next_attempt_at)

    after = {key: scraped(name, **labels) for key, (name, labels) in series.items()}
    assert {key: after[key] - before[key] for key in series} == {"retry": 1, "delivered": 1, "lag": 1}


def test_deliveries_waiting_are_read_at_scrape_time(check, hook, now):
    went_down(check, now)  # one delivery made, none sent

    assert scraped("uptimy_alert_deliveries_waiting") == 1.0


def test_any_sender_s_sentence_is_stored_clean_whatever_it_quotes(check, hook, now):
    went_down(check, now)
    [delivery_id] = deliveries_claim(now=timezone.now())
    hostile = "the receiver said: gone\x00 for good \ud800 " + "x" * 10_000

    delivery_attempts_record(
        attempts=[AttemptRecord(delivery_id, timezone.now(), ok=False, duration_ms=1.0, error=hostile)]
    )
    channel_disable(channel_id=hook.pk, reason=hostile, now=timezone.now())

    hook.refresh_from_db()
    for stored in (DeliveryAttempt.objects.get().error, hook.disabled_reason):
        assert stored.startswith("the receiver said: gone for good \ufffd ")
        assert len(stored) <= 500


def test_every_retry_of_one_webhook_id_carries_the_body_of_the_first_attempt(check, hook, receiver, now):
    receiver.answer(Reply(status=500), Reply(status=503))
    went_down(check, now)
    verifier = Webhook(hook.config["secret"])

    due = now
    for attempt in range(3):
        # Each round at the delivery's own next attempt: a minute apart or more, so a link or an
        # incident built again would read differently.
        with frozen_at(due):
            deliveries_send()
            assert receiver.wait_received(attempt + 1, timeout=10)
            verifier.verify(receiver.received[attempt].body, receiver.received[attempt].headers)
        due = Delivery.objects.get().next_attempt_at

    delivery = Delivery.objects.get()
    assert (delivery.state, delivery.attempts) == (Delivery.State.DELIVERED, 3)
    assert {r.headers["webhook-id"] for r in receiver.received} == {str(delivery.public_id)}
    assert len({r.headers["webhook-timestamp"] for r in receiver.received}) == 3  # signed anew each time
    first, *retries = (r.body for r in receiver.received)
    assert retries == [first, first]
    assert json.loads(first)["data"]["incident"]["acknowledge_url"]


def test_a_retry_after_the_incident_was_acknowledged_still_sends_the_first_body(check, hook, receiver, now):
    receiver.answer(Reply(status=500))
    went_down(check, now)
    deliveries_send()
    Incident.objects.update(acknowledged_at=now, acknowledged_by="someone")

    with frozen_at(Delivery.objects.get().next_attempt_at):
        deliveries_send()

    first, retry = (r.body for r in receiver.received)
    assert retry == first
    assert json.loads(retry)["data"]["incident"]["status"] == "open"
