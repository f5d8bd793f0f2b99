"""Run real checks against loopback servers: batches, execute_batch, the Celery tick, the embedded worker."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from django.utils import timezone

from monitors.models import Healthcheck, OutboxBatch, ProbeResult, Region, RegionState
from monitors.services import healthcheck_pause
from monitors.worker import tasks
from monitors.worker.embedded import EmbeddedWorker, PeriodicJob
from monitors.worker.execution import execute_batch
from monitors.worker.outbox import outbox_take_due
from monitors.worker.scheduling import BATCH_SIZE, Claim, batches_for
from probes.checks.http import HTTP
from tests.clock import frozen_at
from tests.monitors.conftest import Captured, start_sdk_peer, stop
from tests.monitors.worker_support import (
    CountingTicks,
    due_now,
    embedded,
    quick_check,
    run_worker,
    status_changes,
    walk_statuses,
)

SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
REGIONS = ("ap-southeast", "eu-west", "us-east")


# --- batches_for -----------------------------------------------------------------------------


def test_batches_for_makes_one_batch_per_region_of_scheduled_runs():
    claims = [
        Claim(1, SLOT, ("eu-west", "us-east")),
        Claim(2, SLOT + timedelta(seconds=3), ("eu-west",)),
    ]

    assert batches_for(claims) == [
        ("eu-west", [[1, "2026-11-29T12:00:07+00:00", 0], [2, "2026-11-29T12:00:10+00:00", 0]]),
        ("us-east", [[1, "2026-11-29T12:00:07+00:00", 0]]),
    ]


def test_batches_for_splits_a_big_region_into_batches_of_the_batch_size():
    claims = [Claim(index, SLOT, ("eu-west",)) for index in range(BATCH_SIZE * 2 + 1)]

    sizes = [len(items) for _, items in batches_for(claims)]

    assert sizes == [BATCH_SIZE, BATCH_SIZE, 1]


def test_batches_for_nothing_is_nothing():
    assert batches_for([]) == []


# --- execute_batch ---------------------------------------------------------------------------


def test_execute_batch_runs_an_mcp_check_and_records_it(make, fast_mcp):
    healthcheck = make(fast_mcp)

    count = execute_batch("eu-west", [[healthcheck.id, SLOT.isoformat(), 0]], enqueue=Captured())

    assert count == 1
    result = ProbeResult.objects.get(healthcheck=healthcheck)
    assert (result.region.slug, result.slot, result.attempt, result.status) == ("eu-west", SLOT, 0, "up")
    assert (result.server_name, result.tool_count, result.transport) == (
        "uptimy-fast-mcp",
        3,
        "streamable-http",
    )
    assert result.total_ms is not None
    assert RegionState.objects.get(healthcheck=healthcheck).status == "up"


def test_the_worker_refuses_a_loopback_target_unless_private_targets_are_allowed(make, fast_mcp, settings):
    healthcheck = make(fast_mcp)
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False

    execute_batch("eu-west", [[healthcheck.id, SLOT.isoformat(), 0]], enqueue=Captured())

    assert ProbeResult.objects.get(healthcheck=healthcheck).kind == "blocked_address"


def test_execute_batch_runs_an_http_check(make, http_server):
    healthcheck = make(http_server, check_type=HTTP)

    execute_batch("us-east", [[healthcheck.id, SLOT.isoformat(), 0]], enqueue=Captured())

    result = ProbeResult.objects.get(healthcheck=healthcheck)
    assert (result.status, result.http_status) == ("up", 200)


def test_execute_batch_runs_many_checks_in_one_batch(make, fast_mcp, http_server):
    mcp = [make(fast_mcp) for _ in range(5)]
    http = [make(http_server, check_type=HTTP) for _ in range(5)]
    items = [[hc.id, SLOT.isoformat(), 0] for hc in mcp + http]

    assert execute_batch("eu-west", items, enqueue=Captured()) == 10

    assert set(ProbeResult.objects.values_list("status", flat=True)) == {"up"}
    assert ProbeResult.objects.count() == 10


def test_execute_batch_enqueues_a_recheck_for_a_failure_with_the_checks_delay(make, refused_url):
    healthcheck = make(refused_url, recheck_delay_seconds=7)
    enqueue = Captured()

    execute_batch("eu-west", [[healthcheck.id, SLOT.isoformat(), 0]], enqueue=enqueue)

    assert enqueue.calls == [("eu-west", [[healthcheck.id, SLOT.isoformat(), 1]], 7.0)]
    result = ProbeResult.objects.get(healthcheck=healthcheck)
    assert (result.status, result.kind) == ("down", "connect")


def test_execute_batch_after_the_last_recheck_marks_the_region_down(make, refused_url):
    healthcheck = make(refused_url, recheck_count=1, regions=["eu-west"])
    enqueue = Captured()

    execute_batch("eu-west", [[healthcheck.id, SLOT.isoformat(), 0]], enqueue=enqueue)
    execute_batch("eu-west", enqueue.calls[0][1], enqueue=enqueue)

    assert len(enqueue.calls) == 1
    healthcheck.refresh_from_db()
    assert healthcheck.status == "down"
    assert healthcheck.status_changes.get().failed_regions == {"eu-west": "connect"}


def test_a_redelivered_batch_records_nothing_twice(make, fast_mcp):
    healthcheck = make(fast_mcp)
    items = [[healthcheck.id, SLOT.isoformat(), 0]]

    execute_batch("eu-west", items, enqueue=Captured())
    execute_batch("eu-west", items, enqueue=Captured())

    assert ProbeResult.objects.filter(healthcheck=healthcheck).count() == 1
    assert healthcheck.status_changes.count() == 1


def test_execute_batch_skips_paused_and_deleted_checks(make, fast_mcp, now):
    paused, deleted = make(fast_mcp), make(fast_mcp)
    healthcheck_pause(healthcheck=paused, now=now)
    deleted_id = deleted.id
    deleted.delete()

    count = execute_batch(
        "eu-west", [[paused.id, SLOT.isoformat(), 0], [deleted_id, SLOT.isoformat(), 0]], enqueue=Captured()
    )

    assert count == 0
    assert not ProbeResult.objects.exists()


# --- the Celery tick -------------------------------------------------------------------------


def test_dispatch_due_sends_one_batch_per_region_to_its_queue(make, fast_mcp, monkeypatch):
    healthcheck = make(fast_mcp, now=timezone.now())
    Healthcheck.objects.filter(pk=healthcheck.pk).update(next_check_at=timezone.now() - timedelta(seconds=1))
    sent = []
    monkeypatch.setattr(tasks.run_region_batch, "apply_async", lambda **kwargs: sent.append(kwargs))

    assert tasks.dispatch_due() == 1

    assert sorted(call["queue"] for call in sent) == [f"probes.{region}" for region in REGIONS]
    assert {call["args"][1][0][0] for call in sent} == {healthcheck.id}
    assert {call["countdown"] for call in sent} == {None}


def test_a_recheck_goes_to_its_regions_queue_with_its_delay(monkeypatch):
    sent = []
    monkeypatch.setattr(tasks.run_region_batch, "apply_async", lambda **kwargs: sent.append(kwargs))

    tasks.enqueue_celery("us-east", [[1, SLOT.isoformat(), 1]], 5.0)

    assert sent == [
        {"args": ["us-east", [[1, SLOT.isoformat(), 1]]], "queue": "probes.us-east", "countdown": 5.0}
    ]


# --- the embedded worker ---------------------------------------------------------------------


@embedded
def test_the_embedded_worker_checks_a_due_check_from_every_enabled_region(make, fast_mcp):
    healthcheck = make(fast_mcp, now=timezone.now())
    due_now(healthcheck)
    Region.objects.filter(slug="ap-southeast").update(enabled=False)

    def regions_seen() -> set[str]:
        return set(ProbeResult.objects.filter(healthcheck=healthcheck).values_list("region__slug", flat=True))

    started = timezone.now()
    assert run_worker(lambda _: regions_seen() == {"eu-west", "us-east"})

    assert regions_seen() == {"eu-west", "us-east"}
    assert set(ProbeResult.objects.values_list("status", flat=True)) == {"up"}
    healthcheck.refresh_from_db()
    assert healthcheck.status == "up"
    # The claim moved the schedule past the moment it ran, however long the run took.
    assert healthcheck.next_check_at > started


@embedded
def test_the_embedded_worker_runs_each_slot_once(make, fast_mcp):
    healthcheck = make(fast_mcp, now=timezone.now())
    due_now(healthcheck)

    ran_by_tick: list[int] = []

    def done(worker: CountingTicks) -> bool:
        # Keep ticking after the runs: ten more ticks must claim nothing more.
        if not ran_by_tick and ProbeResult.objects.filter(healthcheck=healthcheck).count() >= len(REGIONS):
            ran_by_tick.append(worker.ticks)
        return bool(ran_by_tick) and worker.ticks >= ran_by_tick[0] + 10

    assert run_worker(done)

    # Many ticks, one due slot: one run per region (the next slot is a minute away).
    assert ProbeResult.objects.filter(healthcheck=healthcheck).count() == len(REGIONS)


@embedded
def test_the_embedded_worker_runs_a_recheck_after_its_delay(make, refused_url):
    healthcheck = make(
        refused_url, now=timezone.now(), recheck_count=1, recheck_delay_seconds=1, regions=["eu-west"]
    )
    due_now(healthcheck)

    def rechecked() -> bool:
        return ProbeResult.objects.filter(healthcheck=healthcheck, attempt=1).exists()

    assert run_worker(lambda _: rechecked()), "no recheck ran"

    first = ProbeResult.objects.get(healthcheck=healthcheck, attempt=0)
    second = ProbeResult.objects.get(healthcheck=healthcheck, attempt=1)
    assert second.slot == first.slot
    assert second.checked_at - first.recorded_at >= timedelta(seconds=1)
    healthcheck.refresh_from_db()
    assert healthcheck.status == "down"


@embedded
def test_a_full_outage_goes_up_down_up_with_no_degraded_between(make):
    server, url = start_sdk_peer("stateful")
    port = urlsplit(url).port
    healthcheck = quick_check(make, url)

    def restart() -> None:
        nonlocal server
        server, _ = start_sdk_peer("stateful", port=port)

    try:
        # The server goes away, for every region at once, and comes back on the same port.
        walk_statuses(healthcheck, [("up", lambda: stop(server)), ("down", restart), ("up", lambda: None)])
    finally:
        stop(server)

    assert status_changes(healthcheck) == [("pending", "up"), ("up", "down"), ("down", "up")]


@embedded
def test_one_region_of_three_failing_goes_up_degraded_up(make, tmp_path):
    """The official SDK server refuses one region (by the User-Agent naming it) while a file exists."""
    cut_off = tmp_path / "refused-regions"
    server, url = start_sdk_peer("stateful", "--refuse-regions-file", str(cut_off))
    healthcheck = quick_check(make, url)

    try:
        walk_statuses(
            healthcheck,
            [
                ("up", lambda: cut_off.write_text("ap-southeast")),
                ("degraded", cut_off.unlink),
                ("up", lambda: None),
            ],
        )
    finally:
        stop(server)

    assert status_changes(healthcheck) == [("pending", "up"), ("up", "degraded"), ("degraded", "up")]
    change = healthcheck.status_changes.get(to_status="degraded")
    assert change.failed_regions == {"ap-southeast": "http_status"}


def test_a_batch_enqueued_with_a_delay_waits_for_it():
    worker = EmbeddedWorker(tick_seconds=60)
    started: list[tuple] = []
    worker.pool.submit = lambda fn, *args: started.append(args)  # type: ignore[method-assign]
    before = time.monotonic()

    worker.enqueue("eu-west", [[1, SLOT.isoformat(), 1]], 30)
    worker.enqueue("eu-west", [[2, SLOT.isoformat(), 0]])
    worker._start_due_batches()

    assert len(started) == 1  # only the undelayed batch
    assert before + 30 <= worker._next_due() <= time.monotonic() + 30
    worker.pool.shutdown()


def test_a_slow_periodic_job_holds_back_neither_the_tick_nor_its_own_next_periods():
    worker = EmbeddedWorker(tick_seconds=60)
    release, ticked_meanwhile = threading.Event(), threading.Event()
    slow_starts: list[int] = []
    ticks: list[int] = []

    def slow() -> None:
        slow_starts.append(1)
        release.wait(timeout=60)

    def tick() -> None:
        ticks.append(1)
        if len(ticks) >= 3:
            ticked_meanwhile.set()

    worker.jobs = [PeriodicJob("slow", 0.01, slow), PeriodicJob("tick", 0.01, tick, inline=True)]
    thread = threading.Thread(target=worker.run_forever)
    thread.start()
    try:
        assert ticked_meanwhile.wait(timeout=60)
        assert slow_starts == [1]  # still running: its later periods were skipped, not queued
    finally:
        release.set()
        worker.stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()


@embedded
def test_a_stopping_worker_keeps_the_batches_it_has_not_started_in_the_outbox():
    worker = EmbeddedWorker(tick_seconds=60)
    recheck = [[7, SLOT.isoformat(), 1]]
    with frozen_at(SLOT):
        worker.enqueue("eu-west", recheck, 30)
        worker.stop.set()
        worker.run_forever()

    (row,) = OutboxBatch.objects.all()
    assert (row.region, row.items) == ("eu-west", recheck)
    # The delay runs on the monotonic clock: what is left of it when the worker stops is a hair under 30 s.
    assert SLOT + timedelta(seconds=29) <= row.publish_after <= SLOT + timedelta(seconds=30)
    taken = outbox_take_due(now=row.publish_after)
    assert [(batch.region, batch.items) for batch in taken] == [("eu-west", recheck)]
