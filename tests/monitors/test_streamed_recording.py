"""A batch is recorded as its checks end, never held back by its slowest target (issue 9, item 3).

Real checks against loopback servers: a target that answers, a port that refuses, and a target
that holds its request until the test releases it (or the check's timeout gives up on it). The
tests wait on what happened (a row, a recheck enqueued), never on a stopwatch.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import InterfaceError, OperationalError, connection, connections
from django.utils import timezone

from monitors.models import Healthcheck, ProbeResult, StatusChange
from monitors.worker.execution import BatchItem, execute_batch
from probes.checks.http import HTTP
from tests.monitors.conftest import Captured

SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
REGION = "eu-west"
# Long enough that a hanging target's check outlives every wait of these tests, so that what
# they see happened while it still hung; the tests release it long before.
TIMEOUT = 30
# Transactional: the batch records on other connections (a thread of the test, a killed one).
committed = pytest.mark.django_db(transaction=True, serialized_rollback=True)


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class HangingTarget:
    """Serve on loopback, holding every request until ``release`` is set; then answer 200."""

    def __init__(self) -> None:
        self.received = threading.Event()
        self.release = threading.Event()
        target = self

        class Handler(_Hello):
            def do_GET(self) -> None:
                target.received.set()
                target.release.wait(timeout=2 * TIMEOUT)
                super().do_GET()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/slow"

    def holding(self) -> bool:
        """Return whether a request came and is still held."""
        return self.received.is_set() and not self.release.is_set()


@pytest.fixture
def hanging() -> Iterator[HangingTarget]:
    target = HangingTarget()
    thread = threading.Thread(target=target.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield target
    finally:
        target.release.set()
        target.server.shutdown()
        target.server.server_close()


@pytest.fixture
def make_http(make) -> Callable[..., Healthcheck]:
    """Return a factory of HTTP checks whose timeout outlives every wait of these tests."""
    return functools.partial(make, check_type=HTTP, now=SLOT, timeout=TIMEOUT)


def items_of(*checks: Healthcheck) -> list[BatchItem]:
    return [[check.id, SLOT.isoformat(), 0] for check in checks]


def recorded(check: Healthcheck) -> bool:
    return ProbeResult.objects.filter(healthcheck=check).exists()


def wait_for(condition: Callable[[], bool], *, seconds: float = TIMEOUT / 2) -> bool:
    """Return once ``condition()`` holds; False if it still doesn't after ``seconds`` (a stuck run)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


# --- on SQLite and PostgreSQL: what the batch's caller sees between groups -------------------


def test_a_failed_checks_recheck_is_enqueued_while_a_hanging_check_of_its_batch_still_runs(
    make_http, refused_url, hanging
):
    failed = make_http(refused_url, recheck_delay_seconds=7)
    hung = make_http(hanging.url)
    seen = []

    def enqueue(region: str, items: list[BatchItem], delay: float) -> None:
        seen.append((region, items, delay, recorded(failed), recorded(hung), hanging.holding()))
        hanging.release.set()

    execute_batch(REGION, items_of(failed, hung), enqueue=enqueue)

    # Enqueued once its own result was recorded, while the hanging target still held its request.
    assert seen == [(REGION, [[failed.id, SLOT.isoformat(), 1]], 7.0, True, False, True)]
    assert recorded(hung)


def test_each_result_has_the_time_its_own_check_ended(make_http, refused_url, hanging):
    failed, hung = make_http(refused_url), make_http(hanging.url)
    released_at = []

    def release(*args) -> None:
        released_at.append(timezone.now())
        hanging.release.set()

    execute_batch(REGION, items_of(failed, hung), enqueue=release)

    failed_at = ProbeResult.objects.get(healthcheck=failed).checked_at
    hung_at = ProbeResult.objects.get(healthcheck=hung).checked_at
    assert failed_at < released_at[0] < hung_at


def test_a_batch_recorded_in_groups_and_delivered_again_records_nothing_twice(
    make_http, http_server, refused_url
):
    up = [make_http(http_server) for _ in range(4)]
    down = [make_http(refused_url) for _ in range(2)]
    items = items_of(*up, *down)
    first, again = Captured(), Captured()

    assert execute_batch(REGION, items, enqueue=first, group_size=2) == 6
    changes = StatusChange.objects.count()
    execute_batch(REGION, items, enqueue=again, group_size=2)

    assert sorted(ProbeResult.objects.values_list("healthcheck_id", flat=True)) == sorted(
        check.id for check in up + down
    )
    assert StatusChange.objects.count() == changes
    assert sorted(item[0] for _, batch, _ in first.calls for item in batch) == sorted(c.id for c in down)
    assert again.calls == []


# --- on PostgreSQL: the batch in a thread of its own, watched from outside --------------------


def run_in_thread(work: Callable[[], object]) -> threading.Thread:
    """Start ``work`` in a thread with database connections of its own, closed when it ends."""

    def run() -> None:
        try:
            work()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@committed
def test_healthy_results_are_recorded_while_a_hanging_target_still_holds_its_request(
    postgres, make_http, http_server, hanging
):
    healthy = [make_http(http_server) for _ in range(3)]
    hung = make_http(hanging.url)
    batch = run_in_thread(lambda: execute_batch(REGION, items_of(*healthy, hung), enqueue=Captured()))
    try:
        assert wait_for(lambda: ProbeResult.objects.filter(healthcheck__in=healthy).count() == 3)
        assert not recorded(hung)
        assert hanging.holding()
    finally:
        released_at = timezone.now()
        hanging.release.set()
        batch.join(timeout=TIMEOUT)

    assert not batch.is_alive()
    times = dict(ProbeResult.objects.values_list("healthcheck_id", "checked_at"))
    assert all(times[check.id] < released_at for check in healthy)
    assert times[hung.id] > released_at


def cut_connection(victim) -> None:
    """End ``victim``'s PostgreSQL session from another one, as a server restart would."""
    pid = victim.connection.info.backend_pid
    admin = connections.create_connection("default")
    try:
        with admin.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])

            def gone() -> bool:
                cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
                return cursor.fetchone()[0] == 0

            assert wait_for(gone)
    finally:
        admin.close()


@committed
def test_a_database_error_mid_batch_fails_it_and_its_rerun_records_only_what_is_missing(
    postgres, make_http, refused_url, hanging
):
    failed, hung = make_http(refused_url), make_http(hanging.url)
    items = items_of(failed, hung)
    first = Captured()

    def enqueue_then_lose_the_database(*call) -> None:
        first(*call)
        cut_connection(connection)
        hanging.release.set()

    with pytest.raises((OperationalError, InterfaceError)):
        execute_batch(REGION, items, enqueue=enqueue_then_lose_the_database)
    connection.close()

    assert not [thread for thread in threading.enumerate() if thread.name == "probes-batch"]
    assert list(ProbeResult.objects.values_list("healthcheck_id", flat=True)) == [failed.id]
    rerun = Captured()
    execute_batch(REGION, items, enqueue=rerun)
    assert sorted(ProbeResult.objects.values_list("healthcheck_id", flat=True)) == sorted(
        [failed.id, hung.id]
    )
    assert [batch for _, batch, _ in first.calls] == [[[failed.id, SLOT.isoformat(), 1]]]
    assert rerun.calls == []  # the first run's recheck stands; none twice
