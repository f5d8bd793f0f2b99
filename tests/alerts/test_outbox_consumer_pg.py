"""The consumer and the claim under real concurrency, on PostgreSQL."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, transaction

from alerts.models import Delivery, Incident, IncidentEvent, OutboxCursor
from alerts.services import deliveries_claim, outbox_consume
from tests.alerts.conftest import status_change

# serialized_rollback, as every transactional test of the suite: the flush would drop the seeded plans.
pg = pytest.mark.django_db(transaction=True, serialized_rollback=True)
HANG_SECONDS = 60


def run_together(count: int, work) -> list[BaseException]:
    """Run ``work(index)`` in ``count`` threads released at once; return what they raised."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait()
            work(index)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pg
@pytest.mark.services
def test_postgresql_consumers_at_once_never_double_an_event(postgres, make_check, make_channel, now):
    make_channel()
    checks = [make_check() for _ in range(60)]
    for index, healthcheck in enumerate(checks):
        status_change(healthcheck, "down", at=now + timedelta(seconds=index))
        status_change(healthcheck, "up", at=now + timedelta(seconds=100 + index), frm="down")
    applied = [0] * 4

    def consume(index: int) -> None:
        # Small batches, several rounds: consumers overlap on the cursors over and over.
        for _ in range(40):
            applied[index] += outbox_consume(now=now + timedelta(minutes=10), limit=5, storm_threshold=1000)

    assert run_together(4, consume) == []
    # A consumer that found the cursors taken read nothing that round: what is left, one reads now.
    while read := outbox_consume(now=now + timedelta(minutes=10), limit=5, storm_threshold=1000):
        applied.append(read)

    assert sum(applied) == 120
    assert sum(1 for count in applied[:4] if count) > 1, "one consumer read everything: no race happened"
    assert Incident.objects.count() == 60
    assert Counter(IncidentEvent.objects.values_list("kind", flat=True)) == {"opened": 60, "resolved": 60}
    assert Delivery.objects.count() == 120


@pg
@pytest.mark.services
def test_postgresql_a_consumer_finds_the_cursors_taken_and_reads_nothing(postgres, check, now):
    status_change(check, "down", at=now)
    outbox_consume(now=now)  # creates the cursors
    status_change(check, "up", at=now + timedelta(minutes=1), frm="down")
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                list(OutboxCursor.objects.select_for_update())
                locked.set()
                release.wait(HANG_SECONDS)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(HANG_SECONDS)
        # Without waiting: a consumer queued on the lock would hit the timeout and fail.
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '1s'")
            assert outbox_consume(now=now) == 0
    finally:
        release.set()
        holder.join()
    assert outbox_consume(now=now) == 1


@pg
@pytest.mark.services
def test_postgresql_a_consumer_killed_mid_transaction_loses_nothing(postgres, check, now, make_channel):
    make_channel()
    status_change(check, "down", at=now)
    connection_killed = threading.Event()

    def killed() -> None:
        # The worker's session dies after applying, before its commit: PostgreSQL rolls it back.
        try:
            with transaction.atomic():
                outbox_consume(now=now)  # a savepoint inside: applied, not committed
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        except Exception:
            connection_killed.set()
        finally:
            connection.close()

    thread = threading.Thread(target=killed)
    thread.start()
    thread.join()

    assert connection_killed.is_set()
    assert not Incident.objects.exists()
    assert outbox_consume(now=now) == 1
    assert IncidentEvent.objects.count() == 1
    assert Delivery.objects.count() == 1


@pg
@pytest.mark.services
def test_postgresql_racing_senders_never_claim_the_same_delivery(postgres, make_check, make_channel, now):
    for _ in range(3):
        make_channel()
    for index in range(50):
        status_change(make_check(), "down", at=now + timedelta(seconds=index))
    outbox_consume(now=now + timedelta(minutes=10), storm_threshold=1000)
    claimed: list[list[int]] = [[] for _ in range(4)]

    def claim(index: int) -> None:
        while ids := deliveries_claim(now=now + timedelta(minutes=10), limit=3):
            claimed[index].extend(ids)

    assert run_together(4, claim) == []

    everything = [pk for ids in claimed for pk in ids]
    assert len(everything) == 150
    assert len(set(everything)) == 150
    assert sum(1 for ids in claimed if ids) > 1, "one sender took everything: no race happened"
