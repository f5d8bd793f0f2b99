"""The dispatcher's outbox: no claimed slot is lost between the claim's commit and its publish."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone
from test_embedded import REGIONS, Captured, due_now, embedded, run_worker

from monitors.models import Healthcheck, OutboxBatch, ProbeResult
from monitors.worker import tasks
from monitors.worker.dispatch import dispatch_due
from monitors.worker.execution import execute_batch
from monitors.worker.outbox import (
    MAX_UNSENT_AGE,
    REPUBLISH_GRACE,
    outbox_add,
    outbox_publish,
    outbox_take_due,
)
from monitors.worker.scheduling import claim_and_stage

ROOT = Path(__file__).resolve().parents[2]
HANG_SECONDS = 60.0  # only a hung process or thread takes this long: an upper bound, never a wait
TARGET = "https://mcp.example.com/mcp"  # never contacted: these tests only claim and publish


class RefusingBroker(Captured):
    """Take batches until the ``refuse_from``-th, then refuse every one, as a broker that went away."""

    def __init__(self, refuse_from: int) -> None:
        super().__init__()
        self.refuse_from = refuse_from

    def __call__(self, region: str, items: list, delay: float = 0) -> None:
        if len(self.calls) + 1 >= self.refuse_from:
            raise ConnectionError("the broker refused the batch")
        super().__call__(region, items, delay)


def runs_of(calls: list[tuple[str, list, float]]) -> list[tuple[str, int, str, int]]:
    """Flatten published batches to their runs: (region, healthcheck id, slot, attempt)."""
    return [(region, *item) for region, items, _ in calls for item in items]


def leftovers(count: int, *, created: datetime) -> list[int]:
    """Write ``count`` one-run batches as a dispatcher that died before publishing would leave them."""
    rows = outbox_add(
        [(REGIONS[index % 3], [[index, created.isoformat(), 0]]) for index in range(count)],
        now=created,
        publish_after=created + REPUBLISH_GRACE,
    )
    return [row.id for row in rows]


# --- one dispatcher -------------------------------------------------------------------------


def test_a_tick_publishes_a_batch_per_region_and_leaves_no_row_behind(make):
    healthcheck = make(TARGET, now=timezone.now())
    due_now(healthcheck)
    broker = Captured()

    assert dispatch_due(enqueue=broker) == 1

    assert sorted(region for region, _, _ in broker.calls) == sorted(REGIONS)
    assert {delay for _, _, delay in broker.calls} == {0}
    assert not OutboxBatch.objects.exists()


def test_the_claim_writes_its_batches_to_the_outbox_in_its_own_transaction(make):
    healthcheck = make(TARGET, now=timezone.now())
    due_now(healthcheck)

    staged = claim_and_stage(now=timezone.now())

    rows = OutboxBatch.objects.order_by("region")
    assert [row.region for row in rows] == sorted(REGIONS)
    assert [row.items for row in rows] == [
        batch.items for batch in sorted(staged.batches, key=lambda b: b.region)
    ]
    healthcheck.refresh_from_db()
    assert healthcheck.next_check_at > timezone.now()  # the same commit moved the schedule


def test_a_refused_publish_leaves_that_batch_and_the_rest_for_a_later_tick(make):
    healthcheck = make(TARGET, now=timezone.now())
    due_now(healthcheck)
    now = timezone.now()
    refusing = RefusingBroker(refuse_from=2)

    with pytest.raises(ConnectionError):
        dispatch_due(enqueue=refusing, now=now)

    assert len(refusing.calls) == 1
    assert OutboxBatch.objects.count() == 2
    later = Captured()
    assert dispatch_due(enqueue=later, now=now + REPUBLISH_GRACE) == 0  # nothing new is due
    published = runs_of(refusing.calls + later.calls)
    slot = (Healthcheck.objects.get(pk=healthcheck.pk).next_check_at - timedelta(hours=1)).isoformat()
    assert sorted(published) == [(region, healthcheck.id, slot, 0) for region in sorted(REGIONS)]
    assert not OutboxBatch.objects.exists()


def test_a_tick_whose_leftovers_are_refused_claims_nothing_new(make):
    leftovers(1, created=timezone.now() - REPUBLISH_GRACE)
    healthcheck = make(TARGET, now=timezone.now())
    due_now(healthcheck)
    before = Healthcheck.objects.get(pk=healthcheck.pk).next_check_at

    with pytest.raises(ConnectionError):
        dispatch_due(enqueue=RefusingBroker(refuse_from=1))

    assert Healthcheck.objects.get(pk=healthcheck.pk).next_check_at == before


# --- the grace ------------------------------------------------------------------------------


def test_a_fresh_row_waits_the_grace_and_a_taken_row_waits_another(db):
    now = timezone.now()
    (row_id,) = leftovers(1, created=now)

    assert outbox_take_due(now=now + REPUBLISH_GRACE - timedelta(seconds=1)) == []
    assert [row.id for row in outbox_take_due(now=now + REPUBLISH_GRACE)] == [row_id]
    # Taken but never published (its taker died): the next taker waits a grace from the take.
    assert outbox_take_due(now=now + REPUBLISH_GRACE * 2 - timedelta(seconds=1)) == []
    assert [row.id for row in outbox_take_due(now=now + REPUBLISH_GRACE * 2)] == [row_id]
    assert OutboxBatch.objects.get(pk=row_id).republished == 2


@embedded
def test_a_second_dispatcher_leaves_a_fresh_batch_to_the_one_publishing_it(make):
    healthcheck = make(TARGET, now=timezone.now())
    due_now(healthcheck)
    now = timezone.now()
    committed, resume = threading.Event(), threading.Event()
    first = Captured()

    def slow_broker(region: str, items: list, delay: float = 0) -> None:
        committed.set()
        assert resume.wait(HANG_SECONDS)
        first(region, items, delay)

    def dispatcher() -> None:
        try:
            dispatch_due(enqueue=slow_broker, now=now)
        finally:
            connection.close()

    thread = threading.Thread(target=dispatcher)
    thread.start()
    try:
        assert committed.wait(HANG_SECONDS)
        second = Captured()
        dispatch_due(enqueue=second, now=now + REPUBLISH_GRACE - timedelta(seconds=1))
    finally:
        resume.set()
        thread.join()

    assert second.calls == []
    assert sorted(region for region, _, _ in first.calls) == sorted(REGIONS)
    assert not OutboxBatch.objects.exists()


# --- old rows -------------------------------------------------------------------------------


def test_rows_left_unsent_too_long_are_dropped_and_logged_not_replayed(db, caplog):
    now = timezone.now()
    leftovers(2, created=now - MAX_UNSENT_AGE - timedelta(seconds=1))
    leftovers(1, created=now - REPUBLISH_GRACE)
    broker = Captured()

    dispatch_due(enqueue=broker, now=now)

    assert runs_of(broker.calls) == [(REGIONS[0], 0, (now - REPUBLISH_GRACE).isoformat(), 0)]
    assert not OutboxBatch.objects.exists()
    assert "dropped 2 batches left unsent" in caplog.text


# --- the Celery tick and the embedded worker take the same path -------------------------------


def test_the_celery_tick_publishes_what_an_earlier_tick_left(db, monkeypatch):
    leftovers(1, created=timezone.now() - REPUBLISH_GRACE)
    sent = []
    monkeypatch.setattr(tasks.run_region_batch, "apply_async", lambda **kwargs: sent.append(kwargs))

    tasks.dispatch_due()

    assert [(call["queue"], call["args"][1][0][0]) for call in sent] == [(f"probes.{REGIONS[0]}", 0)]
    assert not OutboxBatch.objects.exists()


@embedded
def test_the_embedded_worker_runs_what_an_earlier_tick_left(make, fast_mcp):
    healthcheck = make(fast_mcp, now=timezone.now())
    slot = timezone.now() - REPUBLISH_GRACE
    outbox_add([("eu-west", [[healthcheck.id, slot.isoformat(), 0]])], now=slot, publish_after=slot)

    def recorded() -> bool:
        return ProbeResult.objects.filter(healthcheck=healthcheck, slot=slot).exists()

    assert run_worker(lambda _: recorded())

    assert ProbeResult.objects.get(healthcheck=healthcheck, slot=slot).status == "up"
    assert not OutboxBatch.objects.exists()


# --- PostgreSQL: a dispatcher killed between commit and publish, racing dispatchers -----------

pg = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# A dispatcher whose broker takes the first batch and then hangs, until the test kills it.
KILLED_DISPATCHER = """
import json, threading
import django
django.setup()
from monitors.worker.dispatch import dispatch_due

def enqueue(region, items, delay=0):
    print(json.dumps([region, items]), flush=True)
    threading.Event().wait()

dispatch_due(enqueue=enqueue)
"""


def database_url() -> str:
    """Return the URL of the test database, for a subprocess to share it."""
    conf = connection.settings_dict
    password = f":{conf['PASSWORD']}" if conf["PASSWORD"] else ""
    return f"postgres://{conf['USER']}{password}@{conf['HOST']}:{conf['PORT'] or 5432}/{conf['NAME']}"


@pg
@pytest.mark.services
def test_a_dispatcher_killed_between_commit_and_publish_loses_no_slot(postgres, make, fast_mcp):
    healthcheck = make(fast_mcp, now=timezone.now())
    due_now(healthcheck)
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "uptimy.settings"}
    env.pop("REDIS_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_DISPATCHER], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], HANG_SECONDS)
        assert ready, "the dispatcher published nothing"
        region, items = json.loads(process.stdout.readline())
    finally:
        process.kill()
        process.wait()
    slot = Healthcheck.objects.get(pk=healthcheck.pk).next_check_at - timedelta(hours=1)
    assert [item[1] for item in items] == [slot.isoformat()]
    # The one batch it sent reaches its worker; the claim committed, the rest never left.
    execute_batch(region, items, enqueue=Captured())
    assert OutboxBatch.objects.count() == len(REGIONS)

    broker = Captured()
    dispatch_due(enqueue=broker, now=timezone.now() + REPUBLISH_GRACE)
    for sent_region, sent_items, _ in broker.calls:
        execute_batch(sent_region, sent_items, enqueue=Captured())

    # Every region's batch published, the one already sent a second time: recorded once each.
    assert sorted(region for region, _, _ in broker.calls) == sorted(REGIONS)
    recorded = ProbeResult.objects.filter(healthcheck=healthcheck)
    assert sorted(recorded.values_list("region__slug", "slot", "attempt", "status")) == [
        (name, slot, 0, "up") for name in sorted(REGIONS)
    ]
    assert not OutboxBatch.objects.exists()


@pg
@pytest.mark.services
def test_postgresql_racing_dispatchers_never_publish_a_row_twice_within_the_grace(postgres):
    now = timezone.now()
    count = 300
    leftovers(count, created=now - REPUBLISH_GRACE)
    dispatchers = 4
    barrier = threading.Barrier(dispatchers)
    brokers = [Captured() for _ in range(dispatchers)]
    errors: list[BaseException] = []

    def dispatch(index: int) -> None:
        try:
            barrier.wait()
            # Small takes, many rounds, at moments within one grace: plenty of overlap.
            for moment in (now, now + REPUBLISH_GRACE / 2):
                while outbox_publish(outbox_take_due(now=moment, limit=7), enqueue=brokers[index]):
                    pass
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=dispatch, args=(index,)) for index in range(dispatchers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    published = Counter(hc_id for broker in brokers for _, hc_id, _, _ in runs_of(broker.calls))
    assert sorted(published) == list(range(count))
    assert set(published.values()) == {1}
    assert sum(1 for broker in brokers if broker.calls) > 1, (
        "one dispatcher took everything: no race happened"
    )
    assert not OutboxBatch.objects.exists()
