"""A database that is down or restarting delays a batch; it never loses it."""

from __future__ import annotations

from django.db import OperationalError

from monitors.worker import embedded, tasks
from monitors.worker.embedded import DATABASE_RETRY_DELAY, EmbeddedWorker

ITEMS = [[1, "2026-11-29T12:00:00+00:00", 0]]


def failing_once(calls: list):
    def execute(region, items, *, enqueue):
        calls.append((region, items))
        if len(calls) == 1:
            raise OperationalError("the database system is starting up")
        return len(items)

    return execute


def test_the_celery_batch_is_retried_when_the_database_is_unavailable(monkeypatch):
    calls: list = []
    monkeypatch.setattr(tasks, "execute_batch", failing_once(calls))

    result = tasks.run_region_batch.apply(args=["eu-west", ITEMS])

    assert result.successful()
    assert calls == [("eu-west", ITEMS), ("eu-west", ITEMS)]


def test_the_embedded_worker_runs_the_batch_again_later_when_the_database_is_unavailable(monkeypatch):
    calls: list = []
    monkeypatch.setattr(embedded, "execute_batch", failing_once(calls))
    worker = EmbeddedWorker(tick_seconds=60)
    requeued: list = []
    monkeypatch.setattr(
        worker, "enqueue", lambda region, items, delay=0: requeued.append((region, items, delay))
    )

    worker._run_batch("eu-west", ITEMS)

    assert requeued == [("eu-west", ITEMS, DATABASE_RETRY_DELAY)]
    worker.pool.shutdown()
