"""The delivery ledger: claims, leases, attempts and the per-channel order of an incident's deliveries."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from alerts.models import Channel, Delivery, DeliveryAttempt, Notification
from alerts.services import deliveries_claim, delivery_attempt_record, outbox_consume
from alerts.services.deliveries import SEND_LEASE
from tests.alerts.conftest import status_change

pytestmark = pytest.mark.django_db


@pytest.fixture
def later(now):
    return now + timedelta(minutes=10)


def kinds(ids: list[int]) -> list[str]:
    return [Delivery.objects.get(pk=pk).notification.kind for pk in ids]


def delivered(ids: list[int], at) -> None:
    for pk in ids:
        delivery_attempt_record(delivery_id=pk, at=at, ok=True, duration_ms=12.0, status_code=200)


@pytest.fixture
def opened_and_resolved(check, now, later, make_channel):
    """One channel, one incident opened and resolved: two deliveries waiting."""
    channel = make_channel()
    status_change(check, "down", at=now)
    status_change(check, "up", at=now + timedelta(minutes=1), frm="down")
    outbox_consume(now=later)
    return channel


def test_a_resolve_is_not_claimed_before_its_open_is_delivered(opened_and_resolved, later):
    first = deliveries_claim(now=later)
    assert kinds(first) == ["incident.opened"]
    assert deliveries_claim(now=later) == []

    delivered(first, later)

    assert kinds(deliveries_claim(now=later)) == ["incident.resolved"]


def test_a_failing_open_holds_its_resolve_until_it_is_delivered_or_given_up(opened_and_resolved, later):
    [opened] = deliveries_claim(now=later)
    retry = later + timedelta(seconds=30)
    delivery_attempt_record(
        delivery_id=opened,
        at=later,
        ok=False,
        duration_ms=5.0,
        status_code=500,
        error="The receiver answered 500.",
        retry_at=retry,
    )

    assert deliveries_claim(now=later) == []
    assert deliveries_claim(now=retry) == [opened]
    delivery_attempt_record(delivery_id=opened, at=retry, ok=False, duration_ms=5.0, error="Gave up.")

    assert kinds(deliveries_claim(now=retry)) == ["incident.resolved"]
    assert Delivery.objects.get(pk=opened).state == "given_up"
    assert DeliveryAttempt.objects.filter(delivery_id=opened).count() == 2


def test_other_incidents_and_channels_are_not_held(make_check, now, later, make_channel):
    make_channel(), make_channel()
    for healthcheck in (make_check(), make_check()):
        status_change(healthcheck, "down", at=now)
    outbox_consume(now=later)

    assert len(deliveries_claim(now=later)) == 4


def test_a_claimed_delivery_is_claimed_again_only_once_its_lease_lapses(opened_and_resolved, later):
    [opened] = deliveries_claim(now=later)
    assert Delivery.objects.get(pk=opened).state == "sending"

    assert deliveries_claim(now=later + SEND_LEASE - timedelta(seconds=1)) == []
    assert deliveries_claim(now=later + SEND_LEASE) == [opened]
    assert Delivery.objects.get(pk=opened).attempts == 2


def test_a_delivered_attempt_records_its_status_and_time(opened_and_resolved, later):
    [opened] = deliveries_claim(now=later)

    delivered([opened], later)

    delivery = Delivery.objects.get(pk=opened)
    assert (delivery.state, delivery.delivered_at, delivery.attempts) == ("delivered", later, 1)
    attempt = delivery.attempt_rows.get()
    assert (attempt.ok, attempt.status_code, attempt.duration_ms) == (True, 200, 12.0)


def test_a_disabled_channels_deliveries_wait(opened_and_resolved, later):
    opened_and_resolved.enabled = False
    opened_and_resolved.save()

    assert deliveries_claim(now=later) == []


def test_a_resolve_of_a_digested_incident_waits_for_the_digest(make_check, now, later, make_channel):
    make_channel()
    first, second = make_check(), make_check()
    status_change(first, "down", at=now)
    status_change(second, "down", at=now)  # the storm: into a digest
    outbox_consume(now=now, storm_threshold=1)
    # Past the storm's minute: a resolve of its own, due at once, which waits all the same.
    status_change(second, "up", at=now + timedelta(minutes=2), frm="down")
    outbox_consume(now=now, storm_threshold=1)

    assert kinds(deliveries_claim(now=now)) == ["incident.opened"]  # the digest collects until now + 3 s
    digest_time = now + timedelta(seconds=3)
    claimed = deliveries_claim(now=digest_time)
    assert kinds(claimed) == ["incidents.digest"]  # the resolve waits for it
    delivered(claimed, digest_time)
    assert kinds(deliveries_claim(now=digest_time)) == ["incident.resolved"]


def due_deliveries(channel, count: int, at) -> None:
    """Make ``count`` tool-list notifications for ``channel``, each one delivery due at ``at``."""
    for _ in range(count):
        notification = Notification.objects.create(
            organization=channel.organization, kind="healthcheck.tools_changed", at=at, audience=[channel.pk]
        )
        Delivery.objects.create(notification=notification, channel=channel, next_attempt_at=at, created_at=at)


def test_a_channel_gets_at_most_its_kind_s_rate_a_minute_and_the_rest_wait(make_channel, now):
    chat = make_channel(kind=Channel.Kind.APPRISE)  # 30 a minute
    hook = make_channel()
    due_deliveries(chat, 40, now)
    due_deliveries(hook, 5, now)

    first = deliveries_claim(now=now, limit=100)
    delivered(first, now)

    by_channel = Counter(Delivery.objects.get(pk=pk).channel_id for pk in first)
    assert by_channel == {chat.pk: 30, hook.pk: 5}
    assert deliveries_claim(now=now + timedelta(seconds=59), limit=100) == []
    assert len(deliveries_claim(now=now + timedelta(seconds=61), limit=100)) == 10
