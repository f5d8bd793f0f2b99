"""Run the scheduler tick and the probe worker in one process, for the embedded default.

With no broker (`make run` on a fresh machine) this stands in for Celery beat and the region
workers: the same claim (monitors.worker.scheduling), the same batch body
(monitors.worker.execution), the same periodic jobs at the same periods (read from
``settings.CELERY_BEAT_SCHEDULE``, the one schedule of both modes), with delayed rechecks kept
in a timer heap instead of a broker's countdown; a worker that stops writes the batches it has
not started to the outbox, which the next start's tick publishes. Every enabled region is probed
from this machine.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections, transaction
from django.utils import timezone

from monitors.worker import tasks  # noqa: F401  (registers the beat entries' tasks with the app)
from monitors.worker.dispatch import dispatch_due
from monitors.worker.execution import BatchItem, execute_batch
from monitors.worker.outbox import outbox_add

logger = logging.getLogger(__name__)

DATABASE_RETRY_DELAY = 5.0
# The beat entry this worker runs itself, with its own enqueue, instead of through Celery.
DISPATCH_TASK = "monitors.dispatch_due"


# Threads for the periodic jobs other than the tick (rollups, pruning, the settle pass), so a
# slow one never delays the tick or the start of a due batch.
HOUSEKEEPING_THREADS = 3


@dataclass
class PeriodicJob:
    """Run one beat entry in process: ``run`` every ``every`` seconds, first at ``due``.

    ``inline`` jobs (the tick) run on the loop's thread; the others on the housekeeping threads,
    never twice at once: a period that finds the last run still going is skipped.
    """

    name: str
    every: float
    run: Callable[[], object]
    due: float = 0.0
    inline: bool = False
    running: Future[None] | None = None


class EmbeddedWorker:
    """Tick, run batches on a small thread pool, and fire rechecks when their delay is up."""

    def __init__(self, *, tick_seconds: float | None = None, threads: int = 4) -> None:
        self.jobs = self._periodic_jobs(tick_seconds)
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="probes")
        self.housekeeping = ThreadPoolExecutor(
            max_workers=HOUSEKEEPING_THREADS, thread_name_prefix="housekeeping"
        )
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._due: list[tuple[float, int, str, list[BatchItem]]] = []
        self._order = itertools.count()

    def enqueue(self, region: str, items: list[BatchItem], delay: float = 0) -> None:
        with self._lock:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), region, items))

    def pending_batches(self) -> dict[str, int]:
        """Return how many batches this worker holds and has not started, by region (read-only, for metrics).

        Rechecks waiting for their delay count; a batch handed to the thread pool, running or
        waiting for a free thread, no longer does.
        """
        with self._lock:
            return dict(Counter(region for _, _, region, _ in self._due))

    def run_forever(self) -> None:
        start = time.monotonic()
        for job in self.jobs:
            job.due = start
        while not self.stop.is_set():
            now = time.monotonic()
            for job in self.jobs:
                if now >= job.due:
                    self._start_job(job)
                    # A late step is not made up for: the next one is a whole period after it.
                    job.due = max(job.due + job.every, now)
            self._start_due_batches()
            next_job = min(job.due for job in self.jobs)
            self.stop.wait(max(0.0, min(next_job, self._next_due()) - time.monotonic()))
        self.housekeeping.shutdown(wait=True, cancel_futures=True)
        self.pool.shutdown(wait=True, cancel_futures=False)
        self._keep_unstarted()

    def _keep_unstarted(self) -> None:
        """Write the batches not started yet (rechecks waiting for their delay) to the outbox.

        The next start's tick publishes each once its delay is up, so a restart (a deploy,
        Ctrl-C) loses no recheck. A killed process still loses them: the settle pass then
        decides their slots without those regions.
        """
        with self._lock:
            waiting, self._due = self._due, []
        if not waiting:
            return
        now = timezone.now()
        left = time.monotonic()
        try:
            with transaction.atomic():
                for due, _, region, items in sorted(waiting):
                    at = now + timedelta(seconds=max(0.0, due - left))
                    outbox_add([(region, items)], now=now, publish_after=at)
        except (OperationalError, InterfaceError) as exc:
            logger.warning(
                "embedded worker: %d batches not started are lost (database unavailable: %s)",
                len(waiting),
                type(exc).__name__,
            )
        else:
            logger.info("embedded worker: %d batches not started kept in the outbox", len(waiting))
        finally:
            connections.close_all()

    def _start_job(self, job: PeriodicJob) -> None:
        if job.inline:
            self._guarded(job.run)
        elif job.running is None or job.running.done():
            job.running = self.housekeeping.submit(self._guarded, job.run)
        else:
            logger.info("embedded worker: %s still running; skipping this period", job.name)

    def _periodic_jobs(self, tick_seconds: float | None) -> list[PeriodicJob]:
        """Return the beat schedule's entries as jobs of this process; the tick uses this worker's queue."""
        jobs = []
        for entry in settings.CELERY_BEAT_SCHEDULE.values():
            name, every = entry["task"], float(entry["schedule"])
            if name == DISPATCH_TASK:
                jobs.append(PeriodicJob(name, tick_seconds or every, self._tick, inline=True))
            else:
                jobs.append(PeriodicJob(name, every, current_app.tasks[name]))
        return jobs

    def _tick(self) -> None:
        dispatch_due(enqueue=self.enqueue)

    def _start_due_batches(self) -> None:
        now = time.monotonic()
        with self._lock:
            ready = []
            while self._due and self._due[0][0] <= now:
                ready.append(heapq.heappop(self._due))
        for _, _, region, items in ready:
            self.pool.submit(self._guarded, functools.partial(self._run_batch, region, items))

    def _run_batch(self, region: str, items: list[BatchItem]) -> None:
        """Run a batch; when the database is unreachable, try the batch again later instead of losing it."""
        try:
            execute_batch(region, items, enqueue=self.enqueue)
        except (OperationalError, InterfaceError) as exc:
            logger.warning(
                "embedded worker: database unavailable (%s); batch for %s again in %ss",
                type(exc).__name__,
                region,
                DATABASE_RETRY_DELAY,
            )
            self.enqueue(region, items, DATABASE_RETRY_DELAY)

    def _next_due(self) -> float:
        with self._lock:
            return self._due[0][0] if self._due else float("inf")

    def _guarded(self, work: Callable[[], object]) -> None:
        # A failing batch or tick is logged and the loop goes on: one bad row must not stop
        # every check on the machine.
        try:
            work()
        except Exception:
            logger.exception("embedded worker: step failed")
        finally:
            # Close this thread's connections after every step: pool threads outlive the
            # worker's stop without a hook to close theirs, and each left a PostgreSQL session
            # open (CONN_MAX_AGE) until the process exited. A step is seconds apart or runs a
            # whole batch, so reconnecting costs nothing that matters.
            connections.close_all()
