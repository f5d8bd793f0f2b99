"""Run Uptimy's production process model on this machine: the stack the e2e tests drive.

The stack: a database of its own on the PostgreSQL of DATABASE_URL, a private redis-server on
a free loopback port (so restarting it disturbs nobody), one ``celery beat``, a worker for the
``default`` queue and one worker per region queue, and official-SDK MCP servers on fixed
loopback ports (tests/e2e/mcp_peer.py, serving the apps of tests/peers/servers/sdk_servers.py).

The workers are other processes: they can't see a pytest transaction, so the stack creates
``uptimy_e2e_<pid>``, migrates it with ``manage.py migrate``, creates healthchecks through
``manage.py shell`` (monitors.services, as the API would), reads the tables with psycopg and
drops the database at the end. Every process runs in its own process group and is killed at
teardown; each keeps a log in the tmp dir, whose tails a failing test's report carries. No
process may exit on its own: a worker must ride out a Redis restart by reconnecting, not by
being restarted (under `manage.py serve`, one exiting child stops the whole stack).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import redis
from psycopg import sql
from psycopg.rows import namedtuple_row

from tests.conftest import service_missing

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))
from peer_support import ROOT, free_port

HERE = Path(__file__).resolve().parent
REGIONS = ("eu-west", "us-east")
INTERVAL = 5  # seconds between slots; the e2e plan allows it (the seeded paid plan says 30)
VISIBILITY_TIMEOUT = 10  # seconds before Redis hands a dead worker's message to another
SLOW_SECONDS = 3.0  # how long the slow server holds each tools/list
START_TIMEOUT = 30.0

# Every claim, logged by a trigger: only a claim moves next_check_at forward (claim_due), and the
# slot it claimed is one interval back. Claiming drops a slot the dispatcher was too late for, so
# the slots between a check's first and its next_check_at are not all claimed; this table says
# which were.
CLAIM_LOG = """
CREATE TABLE test_claim (
    healthcheck_id bigint NOT NULL,
    slot timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION test_log_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO test_claim (healthcheck_id, slot)
    VALUES (NEW.id, NEW.next_check_at - make_interval(secs => NEW.interval_seconds));
    RETURN NULL;
END $$;
CREATE TRIGGER test_log_claim AFTER UPDATE OF next_check_at ON monitors_healthcheck
    FOR EACH ROW WHEN (NEW.next_check_at > OLD.next_check_at) EXECUTE FUNCTION test_log_claim();
"""

T = TypeVar("T")
S = TypeVar("S", bound="Service")

# Run inside `manage.py shell`: a plan that allows a 5 s interval in every region, one
# organization on it, and the healthchecks of E2E_SPEC, created by the service the API calls.
CREATE_HEALTHCHECKS = """
import json, os
from django.utils import timezone
from monitors.models import Organization, Plan, Region
from monitors.services import healthcheck_create, organization_create
from probes.checks.mcp import MCP

plan, _ = Plan.objects.get_or_create(
    slug="e2e", defaults={"name": "E2E", "max_healthchecks": 100, "min_interval_seconds": 1}
)
plan.allowed_regions.set(Region.objects.all())
org = Organization.objects.filter(slug="e2e").first() or organization_create(slug="e2e", plan=plan)
created = []
for item in json.loads(os.environ["E2E_SPEC"]):
    hc = healthcheck_create(
        organization=org, name=item["name"], check_type=MCP, config=item["config"],
        now=timezone.now(), interval_seconds=item["interval"], region_slugs=item["regions"],
        rules=item["rules"],
    )
    created.append(hc.id)
print(json.dumps(created))
"""


# Run inside `manage.py shell`: send run_batch messages as the dispatcher does, print their task ids.
SEND_BATCHES = """
import json, os
from monitors.worker.tasks import run_region_batch

sent = []
for region, items in json.loads(os.environ["E2E_BATCHES"]):
    sent.append(run_region_batch.apply_async(args=[region, items], queue=f"probes.{region}").id)
print(json.dumps(sent))
"""


def require_services() -> str:
    """Return DATABASE_URL if PostgreSQL answers and Redis is configured; else skip or fail."""
    url = os.environ.get("DATABASE_URL", "")
    if urlsplit(url).scheme not in ("postgres", "postgresql"):
        service_missing("PostgreSQL (DATABASE_URL)")
    if not os.environ.get("REDIS_URL"):
        service_missing("Redis (REDIS_URL)")
    if shutil.which("redis-server") is None:
        service_missing("redis-server (the e2e test runs a Redis of its own)")
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as exc:
        service_missing(f"PostgreSQL at DATABASE_URL ({exc})")
    return url


def children_of(pid: int) -> list[int]:
    """Return the ids of ``pid``'s child processes (a prefork worker's pool)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(stat.parent.name))
    return children


class Service:
    """One process of the stack, in its own process group, with a log file per start."""

    def __init__(
        self, name: str, argv: Sequence[str], *, env: dict[str, str], logs: Path, ready: Callable[[], bool]
    ) -> None:
        self.name = name
        self.argv = [str(arg) for arg in argv]
        self.env = env
        self.logs = logs
        self.ready = ready
        self.process: subprocess.Popen[bytes] | None = None
        self.log_paths: list[Path] = []
        self.stopped = True

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def log(self) -> Path:
        return self.log_paths[-1]

    def start(self) -> Service:
        """Start the process (a new log file each time) without waiting for it."""
        path = self.logs / f"{self.name}.{len(self.log_paths) + 1}.log"
        self.log_paths.append(path)
        with path.open("wb") as out:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=ROOT,
                start_new_session=True,
            )
        self.stopped = False
        return self

    def wait_ready(self) -> Service:
        deadline = time.monotonic() + START_TIMEOUT
        while not self.ready():
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited while starting:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not ready after {START_TIMEOUT:.0f}s:\n{self.tail()}")
            time.sleep(0.1)
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
        """Signal the whole process group, wait, and SIGKILL whatever is left."""
        self.stopped = True
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=timeout)
        # Orphaned pool children stay in the group after their parent dies.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)

    @property
    def crashed(self) -> bool:
        return not self.stopped and self.process is not None and self.process.poll() is not None

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def text(self) -> str:
        """Return the current log (of the latest start)."""
        return self.log.read_text(errors="replace") if self.log_paths else ""

    def every_text(self) -> str:
        """Return the logs of every start, oldest first."""
        return "".join(path.read_text(errors="replace") for path in self.log_paths if path.exists())

    def tail(self, lines: int = 25) -> str:
        parts = []
        for path in self.log_paths:
            text = path.read_text(errors="replace") if path.exists() else ""
            parts.append(f"--- {path.name}\n" + "\n".join(text.splitlines()[-lines:]))
        return "\n".join(parts)


class McpServer(Service):
    """An SDK server on a fixed port, so stopping and starting it keeps the healthcheck's URL."""

    def __init__(self, name: str, app: str, *, slow: float, env: dict[str, str], logs: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [sys.executable, HERE / "mcp_peer.py", app, self.port, "--slow", slow]
        super().__init__(name, argv, env=env, logs=logs, ready=self._answers)

    def _answers(self) -> bool:
        try:
            httpx.get(self.url + "/_e2e/held", timeout=1.0)
        except httpx.HTTPError:
            return False
        return True

    def held(self) -> int:
        """Return how many tools/list requests the server is holding right now."""
        return int(httpx.get(self.url + "/_e2e/held", timeout=2.0).json())


class Stack:
    """Hold the database, Redis, the MCP servers, beat and the workers of one e2e run."""

    def __init__(self, tmp: Path, admin_url: str) -> None:
        self.tmp = tmp
        self.admin_url = admin_url
        self.db_name = f"uptimy_e2e_{os.getpid()}"
        parts = urlsplit(admin_url)
        self.db_url = urlunsplit(parts._replace(path="/" + self.db_name))
        self.redis_port = free_port()
        (tmp / "var").mkdir()
        (tmp / "redis").mkdir()
        self.env = {
            **os.environ,
            "DATABASE_URL": self.db_url,
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "UPTIMY_ALLOW_PRIVATE_TARGETS": "1",
            "UPTIMY_TICK_SECONDS": "1",
            "UPTIMY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT),
            "SECRET_KEY": os.environ.get("SECRET_KEY", "e2e-only-secret-key"),
            "UPTIMY_SECRETS_KEY": os.environ.get("UPTIMY_SECRETS_KEY", "e2e-only-secrets-key"),
            "UPTIMY_VAR_DIR": str(tmp / "var"),
            "DJANGO_SETTINGS_MODULE": "uptimy.settings",
            "PYTHONUNBUFFERED": "1",
        }
        self.services: dict[str, Service] = {}
        self._db: psycopg.Connection[Any] | None = None
        self._db_created = False
        # Set when a test failed (or by UPTIMY_E2E_KEEP_LOGS=1): the tmp dir stays for a look.
        self.keep_logs = bool(os.environ.get("UPTIMY_E2E_KEEP_LOGS"))

        # Append-only file, as docker-compose.yml runs it: queued and unacked messages must
        # outlive a restart, or a restart would lose every batch in flight by construction.
        self.add(
            Service(
                "redis",
                [
                    "redis-server",
                    *("--port", self.redis_port, "--bind", "127.0.0.1", "--daemonize", "no"),
                    *("--save", "", "--appendonly", "yes", "--dir", tmp / "redis"),
                    *("--maxmemory-policy", "noeviction"),
                ],
                env=self.env,
                logs=tmp,
                ready=self._redis_answers,
            )
        )
        self.mcp = self.add(McpServer("mcp", "stateful", slow=0, env=self.env, logs=tmp))
        self.slow_mcp = self.add(McpServer("mcp-slow", "stateful", slow=SLOW_SECONDS, env=self.env, logs=tmp))
        celery = [sys.executable, "-m", "celery", "-A", "uptimy"]
        self.beat = self.add(
            Service(
                "beat",
                [*celery, "beat", "-l", "INFO", "-s", tmp / "beat-schedule", "--pidfile", tmp / "beat.pid"],
                env=self.env,
                logs=tmp,
                ready=lambda: "Sending due task" in self.beat.text(),
            )
        )
        self.workers: dict[str, Service] = {}
        for name, queue in [("default", "default")] + [(region, f"probes.{region}") for region in REGIONS]:
            self.workers[name] = self.add(self._worker(name, queue, celery))

    def _worker(self, name: str, queue: str, celery: list[Any], env: dict[str, str] | None = None) -> Service:
        argv = [*celery, "worker", "-Q", queue, "-n", f"{name}@e2e", "-c", "2", "-l", "INFO"]
        argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        worker = Service(
            f"worker-{name}", argv, env={**self.env, **(env or {})}, logs=self.tmp, ready=lambda: False
        )
        worker.ready = lambda: " ready." in worker.text()
        return worker

    def start_region_worker(self, region: str, *, reaches_loopback: bool) -> Service:
        """Start a worker for one more region; one that can't reach loopback fails every check there.

        That is a region whose network can't reach the target (its address guard refuses
        private addresses, as a production worker's does): the target itself stays up.
        """
        # A new name per start: each start gets log files of its own.
        name = f"{region}-{'open' if reaches_loopback else 'fenced'}-{len(self.services)}"
        env = {"UPTIMY_ALLOW_PRIVATE_TARGETS": "1" if reaches_loopback else "0"}
        celery = [sys.executable, "-m", "celery", "-A", "uptimy"]
        worker = self.add(self._worker(name, f"probes.{region}", celery, env))
        return worker.start().wait_ready()

    def add(self, service: S) -> S:
        self.services[service.name] = service
        return service

    def _redis_answers(self) -> bool:
        try:
            return bool(redis.Redis(port=self.redis_port, socket_connect_timeout=0.5).ping())
        except redis.RedisError:
            return False

    # --- life cycle ---------------------------------------------------------------------

    def start(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.db_name)))
        self._db_created = True
        for name in ("redis", "mcp", "mcp-slow"):
            self.services[name].start()
        self.manage("migrate", "--noinput")
        self.execute(CLAIM_LOG)
        for name in ("redis", "mcp", "mcp-slow"):
            self.services[name].wait_ready()
        for service in [self.beat, *self.workers.values()]:
            service.start()
        for service in [self.beat, *self.workers.values()]:
            service.wait_ready()

    def close(self) -> None:
        for service in self.services.values():
            service.kill()
        if not self.keep_logs:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if self._db is not None:
            self._db.close()
        if self._db_created:
            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.db_name))
                )

    def restart_redis(self) -> None:
        """Stop Redis as an operator would (SIGTERM: it writes its append-only file) and start it again."""
        redis_server = self.services["redis"]
        redis_server.stop(signal.SIGTERM)
        redis_server.start().wait_ready()

    def manage(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            env={**self.env, **(env or {})},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    # --- data ---------------------------------------------------------------------------

    def create_healthchecks(
        self,
        count: int,
        *,
        name: str,
        uri: str,
        rules: dict[str, Any],
        timeout: float = 10,
        regions: Sequence[str] = REGIONS,
    ) -> list[int]:
        """Create MCP healthchecks in ``regions`` (default: the stack's) at INTERVAL; return their ids."""
        spec = [
            {
                "name": f"{name}-{index}",
                "config": {"uri": uri, "timeout": timeout},
                "interval": INTERVAL,
                "regions": list(regions),
                "rules": rules,
            }
            for index in range(count)
        ]
        out = self.manage("shell", "-c", CREATE_HEALTHCHECKS, env={"E2E_SPEC": json.dumps(spec)})
        return list(json.loads(out.strip().splitlines()[-1]))

    def send_batches(self, batches: list[tuple[str, list[list[Any]]]]) -> list[str]:
        """Queue run_batch messages ``(region, [[healthcheck_id, slot_iso, attempt], ...])``; return task ids."""
        out = self.manage("shell", "-c", SEND_BATCHES, env={"E2E_BATCHES": json.dumps(batches)})
        return list(json.loads(out.strip().splitlines()[-1]))

    def execute(self, statement: str) -> None:
        """Run statements that return no rows (DDL) against the e2e database."""
        with psycopg.connect(self.db_url, autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]

    def claims(self) -> list[Any]:
        """Return every claim so far: ``hc`` (healthcheck id), ``slot`` and ``claimed_at``."""
        return self.query("SELECT healthcheck_id AS hc, slot, claimed_at FROM test_claim ORDER BY claimed_at")

    def query(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """Run one statement against the e2e database; rows are named tuples."""
        if self._db is None or self._db.closed:
            self._db = psycopg.connect(self.db_url, autocommit=True, row_factory=namedtuple_row)
        return self._db.execute(query, params).fetchall()  # type: ignore[arg-type]

    # --- waiting and reporting ---------------------------------------------------------

    def wait_for(
        self, what: str, predicate: Callable[[], T], timeout: float, explain: Callable[[], str] = lambda: ""
    ) -> T:
        """Poll ``predicate`` until it returns something true; fail after ``timeout`` or if a process died.

        A failing e2e test gets the tails of every process log in its report (tests/e2e/conftest.py).
        """
        deadline = time.monotonic() + timeout
        while True:
            self.supervise(what)
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f}s waiting until {what}{explain()}")
            time.sleep(0.2)

    def supervise(self, what: str) -> None:
        """Fail if a process the test did not stop has exited (a worker included).

        A Celery worker must survive a Redis restart by reconnecting: `manage.py serve` stops
        every part when one exits, so an exit there would take the whole stack down. (Celery
        5.7.0 workers did exit: see the celery pin in pyproject.toml.) Each exit fails once.
        """
        for service in self.services.values():
            if service.crashed:
                assert service.process is not None
                service.stopped = True  # reported: the module's teardown check need not repeat it
                errors = [
                    line for line in service.text().splitlines() if "CRITICAL/" in line or "ERROR/" in line
                ]
                raise AssertionError(
                    f"{service.name} exited (code {service.process.returncode}) while waiting until {what};"
                    f" its last error: {errors[-1] if errors else 'none logged'}"
                )

    def logs(self, lines: int = 25) -> str:
        """Return the tails of every process log, for failure messages."""
        return "\n".join(f"===== {service.name}\n{service.tail(lines)}" for service in self.services.values())
