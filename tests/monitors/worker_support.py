"""Run the embedded worker in a test until something holds: shared by the worker's and the alerts' end-to-end tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from monitors.models import Healthcheck
from monitors.worker.embedded import EmbeddedWorker

embedded = pytest.mark.django_db(transaction=True, serialized_rollback=True)


class CountingTicks(EmbeddedWorker):
    """Count the ticks the worker completed, so a test can wait for ticks instead of seconds."""

    ticks = 0

    def _tick(self) -> None:
        super()._tick()
        self.ticks += 1


class _OneStepAtATime(CountingTicks):
    """Run the worker's steps one at a time, as the test database needs on SQLite.

    pytest-django's SQLite test database is in memory with a shared cache, where connections
    lock whole tables and a blocked one fails at once ("database table is locked") instead of
    waiting on busy_timeout as the file database of `make run` does. One lock around every
    step (and the test's own reads) gives the serialized writes a file database would.
    """

    lock = threading.Lock()

    def _guarded(self, work) -> None:  # type: ignore[no-untyped-def]
        with self.lock:
            super()._guarded(work)


def run_worker(until: Callable[[CountingTicks], bool], *, seconds: float = 60.0, tick: float = 0.1) -> bool:
    """Run an EmbeddedWorker in a thread until ``until(worker)`` holds, then stop it.

    ``seconds`` only ends a worker that is stuck: the tests wait for rows and ticks, and a busy
    machine may take long to get there.
    """
    sqlite = connection.vendor == "sqlite"
    worker = (_OneStepAtATime if sqlite else CountingTicks)(tick_seconds=tick, threads=2)
    thread = threading.Thread(target=worker.run_forever)

    def check() -> bool:
        if not sqlite:
            return until(worker)
        with _OneStepAtATime.lock:
            return until(worker)

    thread.start()
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if check():
                return True
            time.sleep(0.1)
        return check()
    finally:
        worker.stop.set()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the embedded worker did not stop"
        connection.close()


def due_now(healthcheck: Healthcheck) -> None:
    """Make the check due now, with its next slot half an interval away.

    The offset is pinned rather than left to the public id: with a random offset the next slot
    could fall due during the test (one run in a few hundred), and a second slot's runs would
    join the ones the test counts.
    """
    now = timezone.now()
    half = healthcheck.interval_seconds // 2
    Healthcheck.objects.filter(pk=healthcheck.pk).update(
        next_check_at=now - timedelta(seconds=1),
        slot_offset=int(now.timestamp() - half) % healthcheck.interval_seconds,
    )


# Long enough that a fault made as a verdict lands (walk_statuses) falls between two slots on a
# busy machine too: a fault in the middle of a slot lets its regions see different servers, and
# that slot is honestly degraded (docs/checks/index.md's "One verdict per slot" says so).
QUICK_INTERVAL = 5


def quick_check(make, url: str) -> Healthcheck:
    """Create a check of ``url`` every QUICK_INTERVAL seconds with one recheck after 1 s, due now."""
    healthcheck = make(url, now=timezone.now(), recheck_count=1, recheck_delay_seconds=1)
    Healthcheck.objects.filter(pk=healthcheck.pk).update(interval_seconds=QUICK_INTERVAL)
    healthcheck.refresh_from_db()
    due_now(healthcheck)
    return healthcheck


def walk_statuses(healthcheck: Healthcheck, steps: Sequence[tuple[str, Callable[[], object]]]) -> None:
    """Run the worker until the check has taken each step's status in turn, doing the step's action on each."""
    wanted = [status for status, _ in steps]
    reached: list[str] = []

    def next_step(_: CountingTicks) -> bool:
        healthcheck.refresh_from_db()
        if healthcheck.status not in wanted or reached[-1:] == [healthcheck.status]:
            return False
        reached.append(healthcheck.status)
        if reached == wanted[: len(reached)]:
            steps[len(reached) - 1][1]()
        return reached == wanted

    assert run_worker(next_step, seconds=120), f"reached only {reached} of {wanted}"


def status_changes(healthcheck: Healthcheck) -> list[tuple[str, str]]:
    return [(c.from_status, c.to_status) for c in healthcheck.status_changes.order_by("id")]
