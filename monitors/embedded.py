"""Run the scheduler tick and the probe worker in one process, for the embedded default.

With no broker (`make run` on a fresh machine) this stands in for Celery beat and the region
workers: the same claim (monitors.scheduling), the same batch body (monitors.execution), with
delayed rechecks kept in a timer heap instead of a broker's countdown. Every enabled region is
probed from this machine.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from django.db import InterfaceError, OperationalError, connections
from django.utils import timezone

from monitors import services
from monitors.execution import BatchItem, dispatch_due, execute_batch

logger = logging.getLogger(__name__)

ROLLUP_EVERY = 60.0
PRUNE_EVERY = 3600.0
DATABASE_RETRY_DELAY = 5.0


class EmbeddedWorker:
    """Tick, run batches on a small thread pool, and fire rechecks when their delay is up."""

    def __init__(self, *, tick_seconds: float = 2.0, threads: int = 4) -> None:
        self.tick_seconds = tick_seconds
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="probes")
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._due: list[tuple[float, int, str, list[BatchItem]]] = []
        self._order = itertools.count()

    def enqueue(self, region: str, items: list[BatchItem], delay: float = 0) -> None:
        with self._lock:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), region, items))

    def run_forever(self) -> None:
        next_tick = next_rollup = time.monotonic()
        next_prune = next_tick + 60
        while not self.stop.is_set():
            now = time.monotonic()
            if now >= next_tick:
                self._guarded(self._tick)
                next_tick = max(next_tick + self.tick_seconds, now)
            if now >= next_rollup:
                self._guarded(lambda: services.rollups_refresh(now=timezone.now()))
                next_rollup = now + ROLLUP_EVERY
            if now >= next_prune:
                self._guarded(lambda: services.results_prune(now=timezone.now()))
                next_prune = now + PRUNE_EVERY
            self._start_due_batches()
            self.stop.wait(max(0.0, min(next_tick, self._next_due()) - time.monotonic()))
        self.pool.shutdown(wait=True, cancel_futures=False)

    def _tick(self) -> None:
        dispatch_due(enqueue=self.enqueue)

    def _start_due_batches(self) -> None:
        now = time.monotonic()
        with self._lock:
            ready = []
            while self._due and self._due[0][0] <= now:
                ready.append(heapq.heappop(self._due))
        for _, _, region, items in ready:
            self.pool.submit(self._guarded, lambda r=region, i=items: self._run_batch(r, i))

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

    def _guarded(self, work) -> None:  # type: ignore[no-untyped-def]
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
