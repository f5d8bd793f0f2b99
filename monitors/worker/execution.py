"""Run a region's batch of checks and record it as they end: the body of the probe worker, whatever runs it.

The Celery task (monitors.worker.tasks.run_region_batch) and the embedded worker of `manage.py serve` both
call :func:`execute_batch`; they differ only in how they enqueue the rechecks it returns.
Messages carry ids and ISO timestamps only: ``[healthcheck_id, slot_iso, attempt]``.

The checks run on an event loop in a thread of their own, which touches no database; each outcome
is handed over as its check ends, and the caller's thread records them in small groups while the
loop keeps probing. One target that hangs to its timeout delays its own result only.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType

from django.conf import settings
from django.utils import timezone

from monitors import metrics, selectors, services
from monitors.rdap_bootstrap import use_refreshed
from probes.checks import CheckConfig
from probes.runner import ProbeEnv, stream_batch, user_agent
from probes.types import FailureKind, ProbeOutcome, Status

# [healthcheck_id: int, slot: ISO str, attempt: int]: a list, not a tuple, because that is what a
# Celery worker gets back from the JSON message, and the embedded worker passes the same values.
BatchItem = list[int | str]
Enqueue = Callable[[str, list[BatchItem], float], None]  # (region, items, delay seconds)
RunKey = tuple[int, datetime, int]  # (healthcheck_id, slot, attempt)

# A group is recorded once it holds GROUP_SIZE results, GROUP_SECONDS after its first check
# ended, or as soon as no other check ended for GROUP_IDLE_SECONDS, whichever comes first: the
# checks of a batch that answer end within moments of each other and are recorded together at
# once, without waiting out the second for a straggler. GROUP_SIZE is a whole batch
# (dispatch.BATCH_SIZE): a group costs a transaction's fixed cost, and groups of 100 cost ~15 %
# more recorder CPU per result than groups of 250 (tests/bench/pipeline.py record; docs/benchmarks.md), so
# a batch whose checks all end together is one transaction, as before; the clock splits the rest.
GROUP_SIZE = 250
GROUP_SECONDS = 1.0
GROUP_IDLE_SECONDS = 0.1


def probe_env(region: str | None = None) -> ProbeEnv:
    """Return what the checks of ``region`` share, from the settings: the guard, the DNS servers, and
    the User-Agent naming the region (none for a check that runs from no region: ``mcpcheck``).

    It also hands the engine the refreshed RDAP bootstrap, when ``refreshrdap`` wrote a new one."""
    use_refreshed()
    return ProbeEnv(
        allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
        nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
        user_agent=user_agent(region),
    )


def execute_batch(
    region: str,
    items: Sequence[BatchItem],
    *,
    enqueue: Enqueue,
    group_size: int = GROUP_SIZE,
    group_seconds: float = GROUP_SECONDS,
    group_idle_seconds: float = GROUP_IDLE_SECONDS,
) -> int:
    """Run the batch's checks concurrently and record each outcome soon after its check ends.

    Each group of results is one ``outcomes_record`` call (one transaction, idempotent), and
    the rechecks it returns are enqueued at once. A database error fails the batch as it comes,
    stopping the checks still running: the groups already recorded stay, and the batch's rerun
    (Celery's retry, the embedded worker's re-enqueue) records only what is missing.
    Return how many results were recorded.
    """
    keyed = [(int(hc_id), datetime.fromisoformat(str(slot)), int(attempt)) for hc_id, slot, attempt in items]
    checks = selectors.check_configs(healthcheck_ids=[hc_id for hc_id, _, _ in keyed])
    configs = checks.runnable
    recorded = _record_unrunnable(region, keyed, checks.unrunnable, enqueue)
    work = [(key, configs[key[0]]) for key in keyed if key[0] in configs]
    if not work:
        return recorded
    with _BatchProbes(work, probe_env(region)) as probes:
        for group in probes.groups(size=group_size, seconds=group_seconds, idle=group_idle_seconds):
            metrics.observe_checks(
                region, [(configs[result.healthcheck_id], result.outcome) for result in group]
            )
            started = time.perf_counter()
            rechecks = services.outcomes_record(region_slug=region, results=group)
            metrics.observe_recording(region, group, time.perf_counter() - started, timezone.now())
            _enqueue_rechecks(region, rechecks, enqueue)
            recorded += len(group)
    return recorded


def _record_unrunnable(
    region: str, keyed: Sequence[tuple[int, datetime, int]], unrunnable: Mapping[int, str], enqueue: Enqueue
) -> int:
    """Record the checks that can't run as down, with why: their owners must hear of it."""
    if not unrunnable:
        return 0
    now = timezone.now()
    results = [
        services.RunResult(
            hc_id,
            slot,
            attempt,
            ProbeOutcome(status=Status.DOWN, kind=FailureKind.CONFIG, reason=unrunnable[hc_id]),
            now,
        )
        for hc_id, slot, attempt in keyed
        if hc_id in unrunnable
    ]
    _enqueue_rechecks(region, services.outcomes_record(region_slug=region, results=results), enqueue)
    return len(results)


def _enqueue_rechecks(region: str, rechecks: Sequence[services.Recheck], enqueue: Enqueue) -> None:
    by_delay: dict[float, list[BatchItem]] = defaultdict(list)
    for recheck in rechecks:
        by_delay[recheck.delay_seconds].append(
            [recheck.healthcheck_id, recheck.slot.isoformat(), recheck.attempt]
        )
    for delay, recheck_items in by_delay.items():
        enqueue(region, recheck_items, delay)


# What the probe thread hands over: a result with the monotonic time its check ended, the
# exception that ended the thread (a bug in the runner), or None once every check has ended.
_Handoff = tuple[float, services.RunResult] | BaseException | None


class _BatchProbes:
    """Run a batch's checks on an event loop in a thread of their own; hand over each result as it ends.

    The thread never touches the database: recording stays in the caller's thread, on the
    connection it already has (the Celery task's, the embedded worker's, a test's transaction).
    Leaving the ``with`` block cancels the checks still running and waits for the thread.
    """

    def __init__(self, work: Sequence[tuple[RunKey, CheckConfig]], env: ProbeEnv) -> None:
        self._work = work
        self._env = env
        self._handoff: queue.SimpleQueue[_Handoff] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._run, name="probes-batch", daemon=True)

    def __enter__(self) -> _BatchProbes:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop()
        self._thread.join()

    def groups(self, *, size: int, seconds: float, idle: float) -> Iterator[list[services.RunResult]]:
        """Yield the results in groups of at most ``size``, each closed ``seconds`` after its first
        result ended or ``idle`` after its last, whichever comes first.

        A group that closed while the caller was recording the one before still takes every
        result already waiting, up to ``size``: a busy recorder records in bigger groups.
        """
        group: list[services.RunResult] = []
        first = last = 0.0
        while True:
            timeout = max(0.0, min(first + seconds, last + idle) - time.monotonic()) if group else None
            try:
                item = self._handoff.get(timeout=timeout)
            except queue.Empty:
                yield group
                group = []
                continue
            if item is None:
                break
            if isinstance(item, BaseException):
                if group:
                    yield group
                raise item
            last, result = item
            if not group:
                first = last
            group.append(result)
            if len(group) >= size:
                yield group
                group = []
        if group:
            yield group

    def _run(self) -> None:
        try:
            asyncio.run(self._probe())
        except asyncio.CancelledError:
            pass  # stopped by _stop(): nobody reads the results any more
        except BaseException as exc:
            # A bug in the runner (a check's own bug is its result): the batch fails with it.
            self._handoff.put(exc)
        finally:
            self._handoff.put(None)

    async def _probe(self) -> None:
        with self._lock:
            if self._stopping:
                return
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
        stream = stream_batch(self._work, self._env)
        async with contextlib.aclosing(stream):
            async for finished in stream:
                hc_id, slot, attempt = finished.key
                result = services.RunResult(
                    healthcheck_id=hc_id,
                    slot=slot,
                    attempt=attempt,
                    outcome=finished.outcome,
                    checked_at=finished.at,
                )
                self._handoff.put((time.monotonic(), result))
        # Let aborted transports deliver connection_lost before the loop closes.
        await asyncio.sleep(0)

    def _stop(self) -> None:
        """Cancel the checks still running (none, once every result was handed over)."""
        with self._lock:
            self._stopping = True
            loop, task = self._loop, self._task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the checks are over
                loop.call_soon_threadsafe(task.cancel)
