"""PostgreSQL restarts under a running worker, for real: every claimed slot is recorded once, in every region.

A private cluster (``private_postgres`` in tests/conftest.py) holds the database of a real
``manage.py runprobes``, the embedded worker `make run` starts (the tick and every region's
batches in one process), which checks a loopback target. The target holds every request until
the test releases it, so the test knows each region's batch is in flight; it stops the cluster
under them, lets the checks finish with no database to record into, starts the cluster again
and waits until the worker has caught up.

Which slots were claimed is read from the database itself: a trigger the test installs logs
each move of a healthcheck's ``next_check_at``, which only a committed claim makes. So the
worker is held to every slot it really claimed, however long the outage lasted (a slot that
came and went while no tick could reach the database is dropped by design, never replayed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest
from e2e_stack import CLAIM_LOG, Service
from psycopg.rows import namedtuple_row

from tests.conftest import PrivatePostgres

pytestmark = [pytest.mark.services, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
CHECKS = 2  # healthchecks sharing one slot: each region's batch holds both
INTERVAL = 2  # seconds between slots: a slot falls due while batches wait for the database
TICK = 0.5
WAIT_SECONDS = 60.0
T = TypeVar("T")

# Run inside `manage.py shell`: a plan that allows INTERVAL in every region, one organization on
# it, and CHECKS HTTP checks of the held target, created by the service the API calls. They are
# moved onto one shared slot so that one tick claims them all.
CREATE_CHECKS = """
import json, os
from datetime import timedelta
from django.utils import timezone
from monitors.models import Healthcheck, Plan, Region
from monitors.services import healthcheck_create, organization_create
from monitors.slots import first_slot_at_or_after
from probes.checks.http import HTTP

spec = json.loads(os.environ["RESTART_SPEC"])
plan = Plan.objects.create(slug="restart", name="Restart", max_healthchecks=10, min_interval_seconds=1)
plan.allowed_regions.set(Region.objects.filter(enabled=True))
org = organization_create(slug="restart", plan=plan)
now = timezone.now()
ids = [
    healthcheck_create(
        organization=org, name=f"held-{index}", check_type=HTTP,
        config={"uri": spec["uri"], "timeout": 60}, now=now, interval_seconds=spec["interval"],
    ).id
    for index in range(spec["count"])
]
first = first_slot_at_or_after(now + timedelta(seconds=1), interval_seconds=spec["interval"], offset=0)
Healthcheck.objects.filter(id__in=ids).update(slot_offset=0, next_check_at=first)
print(json.dumps(ids))
"""

# What monitors.worker.embedded logs when a batch meets no database (and will run again later).
DATABASE_GONE = r"database unavailable \(\w+\); batch for {region} again"


class HeldTarget:
    """Answer 200 on loopback; until ``release``, hold every request it gets and count them."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.held = 0
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with target.lock:
                    target.held += 1
                target.gate.wait()
                with target.lock:
                    target.held -= 1
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def holding(self) -> int:
        with self.lock:
            return self.held

    def release(self) -> None:
        self.gate.set()


@pytest.fixture
def held_target() -> Iterator[HeldTarget]:
    target = HeldTarget()
    thread = threading.Thread(target=target.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield target
    finally:
        target.release()
        target.server.shutdown()
        target.server.server_close()


def query(url: str, statement: str, params: Any = ()) -> list[Any]:
    with psycopg.connect(url, autocommit=True, row_factory=namedtuple_row) as conn:
        return conn.execute(statement, params).fetchall()


def execute(url: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def worker_env(database_url: str, var_dir: Path) -> dict[str, str]:
    """Return the worker's environment: the private cluster, no broker, loopback targets allowed."""
    env = {name: value for name, value in os.environ.items() if name not in ("REDIS_URL", "DATABASE_URL")}
    return {
        **env,
        "DATABASE_URL": database_url,
        "UPTIMY_ALLOW_PRIVATE_TARGETS": "1",
        "UPTIMY_VAR_DIR": str(var_dir),
        "SECRET_KEY": "restart-test-secret-key",
        "UPTIMY_SECRETS_KEY": "restart-test-secrets-key",
        "DJANGO_SETTINGS_MODULE": "uptimy.settings",
        "PYTHONUNBUFFERED": "1",
    }


class Accounts:
    """One consistent read of what was claimed and what was recorded, per healthcheck, region and slot."""

    def __init__(self, url: str) -> None:
        with psycopg.connect(url, row_factory=namedtuple_row) as conn:
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            self.claims = conn.execute(
                "SELECT c.healthcheck_id AS hc, g.slug AS region, c.slot, c.claimed_at FROM test_claim c"
                " JOIN monitors_healthcheck_regions hr ON hr.healthcheck_id = c.healthcheck_id"
                " JOIN monitors_region g ON g.id = hr.region_id AND g.enabled"
            ).fetchall()
            self.results = conn.execute(
                "SELECT r.healthcheck_id AS hc, g.slug AS region, r.slot, r.attempt, r.status"
                " FROM monitors_proberesult r JOIN monitors_region g ON g.id = r.region_id"
            ).fetchall()
        self.claimed = Counter((row.hc, row.region, row.slot) for row in self.claims)
        self.recorded = Counter((row.hc, row.region, row.slot) for row in self.results if row.attempt == 0)

    def unrecorded(self) -> set[tuple[int, str, datetime]]:
        return set(self.claimed) - set(self.recorded)

    def claimed_since(self, moment: datetime) -> set[tuple[int, str, datetime]]:
        return {(row.hc, row.region, row.slot) for row in self.claims if row.claimed_at > moment}


def wait_until(
    what: str,
    predicate: Callable[[], T],
    *,
    worker: Service,
    cluster: PrivatePostgres,
    explain: Callable[[], str] = lambda: "",
) -> T:
    """Poll ``predicate`` until it returns something true; fail with both logs if the worker dies or time runs out."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        if worker.crashed:
            raise AssertionError(f"the worker exited while waiting until {what}:\n{worker.tail(40)}")
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {WAIT_SECONDS:.0f}s waiting until {what}{explain()}\n"
                f"--- worker\n{worker.tail(40)}\n--- postgres\n{cluster.log_tail()}"
            )
        time.sleep(0.2)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_postgresql_restart_mid_batch_loses_no_claimed_slot_and_records_none_twice(
    private_postgres: PrivatePostgres, held_target: HeldTarget, tmp_path: Path, mode: str
) -> None:
    execute(private_postgres.url(), "CREATE DATABASE uptimy")
    database_url = private_postgres.url("uptimy")
    env = worker_env(database_url, tmp_path / "var")
    manage(env, "migrate", "--noinput")
    spec = {"uri": held_target.url, "interval": INTERVAL, "count": CHECKS}
    out = manage({**env, "RESTART_SPEC": json.dumps(spec)}, "shell", "-c", CREATE_CHECKS)
    ids = json.loads(out.strip().splitlines()[-1])
    regions = [row.slug for row in query(database_url, "SELECT slug FROM monitors_region WHERE enabled")]
    execute(database_url, CLAIM_LOG)

    worker = Service(
        "runprobes",
        [sys.executable, "manage.py", "runprobes", "--tick", str(TICK)],
        env=env,
        logs=tmp_path,
        ready=lambda: "Probing every enabled region" in worker.text(),
    )
    worker.start().wait_ready()
    try:
        wait_until(
            "every region's batch holds its checks at the target",
            lambda: held_target.holding() >= CHECKS * len(regions),
            worker=worker,
            cluster=private_postgres,
        )
        in_flight = set(Accounts(database_url).claimed)

        private_postgres.stop(mode)
        held_target.release()
        wait_until(
            "each region's batch found no database to record into",
            lambda: all(re.search(DATABASE_GONE.format(region=region), worker.text()) for region in regions),
            worker=worker,
            cluster=private_postgres,
        )
        private_postgres.start()
        restarted_at = query(database_url, "SELECT clock_timestamp() AS now")[0].now

        def caught_up() -> Accounts | None:
            accounts = Accounts(database_url)
            done = not accounts.unrecorded() and accounts.claimed_since(restarted_at)
            return accounts if done else None

        accounts = wait_until(
            "every slot claimed so far, one of them after the restart, is recorded in every region",
            caught_up,
            worker=worker,
            cluster=private_postgres,
            explain=lambda: f"; claimed, not recorded: {sorted(Accounts(database_url).unrecorded())}",
        )
    finally:
        worker.stop()

    # The batches the stop caught mid-way were recorded once the database was back.
    assert {region for _, region, _ in in_flight} == set(regions)
    assert in_flight <= set(accounts.recorded)
    # Exactly once: no slot claimed twice, no result twice, no result for a slot never claimed.
    assert set(accounts.claimed.values()) == {1}
    assert set(accounts.recorded.values()) == {1}
    assert set(accounts.recorded) == set(accounts.claimed)
    # The checks ran again once the database was back and found the target up: the restart
    # is no outage of theirs.
    assert {row.status for row in accounts.results} == {"up"}
    changes = query(
        database_url,
        "SELECT healthcheck_id, from_status, to_status FROM monitors_statuschange ORDER BY healthcheck_id, at",
    )
    assert [(row.healthcheck_id, row.from_status, row.to_status) for row in changes] == [
        (hc_id, "pending", "up") for hc_id in sorted(ids)
    ]
