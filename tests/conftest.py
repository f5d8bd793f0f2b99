"""Factories shared by every test app, and the switch that makes service tests fail, not skip."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

import pytest
from rest_framework.test import APIClient

from monitors.models import ApiKey, Organization, Plan
from monitors.services import api_key_create, organization_create
from tests.clock import current_offset, describe_offset, frozen_at
from tests.live_uptimy import LiveUptimy, start_uptimy
from tests.peers.peer_support import free_port

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SERVICES_SWITCH = "UPTIMY_REQUIRE_SERVICES"
PEERS_SWITCH = "UPTIMY_REQUIRE_PEERS"


def unavailable(message: str, *, switch: str) -> NoReturn:
    """Skip a test that needs something this machine lacks; fail it instead where ``switch``=1.

    A developer without PostgreSQL, Redis or npm still runs the rest of the suite, and the
    skip says what is missing and how to get it. CI sets the switches, so there a missing
    service or peer is a red build, never a quietly skipped test.
    """
    if os.environ.get(switch) == "1":
        pytest.fail(f"{message}; {switch}=1 requires it")
    pytest.skip(message)


def service_missing(what: str) -> NoReturn:
    """Skip (or, under UPTIMY_REQUIRE_SERVICES=1, fail) a test whose PostgreSQL or Redis is missing."""
    unavailable(
        f"{what} is not configured: set DATABASE_URL=postgres://… and REDIS_URL=redis://…, as .ci/run does",
        switch=SERVICES_SWITCH,
    )


def pytest_report_header() -> str:
    return describe_offset(current_offset(), now=datetime.now(UTC) - current_offset())


def pytest_terminal_summary(terminalreporter) -> None:
    # Beside the closing line, so that a run's result always says which clock it had.
    terminalreporter.write_line(describe_offset(current_offset(), now=datetime.now(UTC) - current_offset()))


@pytest.fixture(autouse=True)
def _clock_held_at_now(request) -> Iterator[None]:
    """Hold every clock at NOW for a test that asks for ``now``, from its first fixture to its last.

    Autouse, so it starts before the test's other fixtures: a check or event a fixture makes is
    made at NOW too, never at the day the suite happens to run (tests/clock.py).
    """
    if "now" not in request.fixturenames:
        yield
        return
    with frozen_at(NOW):
        yield


@pytest.fixture
def now() -> datetime:
    """Return the test's fixed instant, NOW; every clock the test's code reads says the same."""
    return NOW


@pytest.fixture
def make_org(db) -> Callable[..., Organization]:
    counter = iter(range(1, 10_000))

    def make(*, plan: str = "paid", slug: str | None = None) -> Organization:
        return organization_create(slug=slug or f"org-{next(counter)}", plan=Plan.objects.get(slug=plan))

    return make


@pytest.fixture
def org(make_org) -> Organization:
    return make_org(slug="acme")


@pytest.fixture
def other_org(make_org) -> Organization:
    return make_org(slug="globex")


@pytest.fixture
def make_client(db) -> Callable[..., APIClient]:
    def make(organization: Organization, *, scope: str = ApiKey.Scope.READ_WRITE) -> APIClient:
        _, raw_key = api_key_create(organization=organization, scope=scope)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
        client.raw_key = raw_key  # type: ignore[attr-defined]
        return client

    return make


@pytest.fixture
def client(make_client, org) -> APIClient:
    return make_client(org)


@pytest.fixture
def read_client(make_client, org) -> APIClient:
    return make_client(org, scope=ApiKey.Scope.READ)


@pytest.fixture
def other_client(make_client, other_org) -> APIClient:
    return make_client(other_org)


@pytest.fixture(scope="session", autouse=True)
def _private_file_cache(tmp_path_factory) -> Iterator[None]:
    """Give this run a cache directory of its own when the cache is the var dir's files (no Redis).

    Other runs in the same checkout (and a `make run` beside them) share var/cache; their
    cache.clear() between tests would reset this run's rate-limit counts mid-test.
    """
    from django.conf import settings
    from django.test.utils import override_settings

    default = settings.CACHES["default"]
    if not default["BACKEND"].endswith("FileBasedCache"):
        yield
        return
    with override_settings(
        CACHES={"default": {**default, "LOCATION": str(tmp_path_factory.mktemp("cache"))}}
    ):
        yield


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing() -> Iterator[None]:
    """Hash passwords and OAuth client secrets cheaply in this process.

    The production hasher's cost (PBKDF2, half a second a hash here) is the point of it, not of
    these tests: every signed-in user, superuser and confidential client paid it. Servers the
    tests start (``manage.py serve``) keep Django's default.
    """
    from django.test.utils import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Start every test with empty rate-limit counters."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def redis_url() -> str:
    """Return the configured Redis URL (REDIS_URL), or skip/fail as UPTIMY_REQUIRE_SERVICES says."""
    url = os.environ.get("REDIS_URL", "")
    if not url:
        service_missing("Redis (REDIS_URL)")
    return url


@pytest.fixture
def postgres(db) -> None:
    """Require that the suite runs on PostgreSQL, or skip/fail as UPTIMY_REQUIRE_SERVICES says."""
    from django.db import connection

    if connection.vendor != "postgresql":
        service_missing("PostgreSQL (DATABASE_URL)")


# --- a private PostgreSQL cluster, for the tests that stop and restart it ---------------------

POSTGRES_BINARIES = "/usr/lib/postgresql/*/bin"


@dataclass
class PrivatePostgres:
    """Run a PostgreSQL cluster of one test's own: its data in a temporary directory, on a free port.

    The shared server (DATABASE_URL) serves every engineer on the machine; this one a test may
    stop and start as it likes. Loopback TCP only (no Unix socket), trust authentication for the
    ``postgres`` role, fsync off: a test cluster holds nothing that must survive the machine.
    initdb refuses to run as root, so as root the binaries run as the ``postgres`` system user.
    """

    bin_dir: Path
    home: Path
    port: int
    user: str | None

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def log(self) -> Path:
        return self.home / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def init(self) -> None:
        self._run("initdb", "-D", self.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        settings = {
            "port": self.port,
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": "''",
            "fsync": "off",
            "full_page_writes": "off",
        }
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())

    def start(self) -> None:
        """Start the cluster and wait until it accepts connections (pg_ctl -w)."""
        self._run("pg_ctl", "start", "-w", "-t", "120", "-D", self.data, "-l", self.log)

    def stop(self, mode: str = "fast") -> None:
        """Stop the cluster: ``fast`` ends every session as an operator's restart does, ``immediate`` crashes it."""
        self._run("pg_ctl", "stop", "-w", "-t", "120", "-D", self.data, "-m", mode)

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def _run(self, program: str, *args: object) -> None:
        done = subprocess.run(
            [str(self.bin_dir / program), *map(str, args)],
            user=self.user,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(
                f"{program} {' '.join(map(str, args))} failed ({done.returncode}):\n{done.stdout}{done.stderr}\n"
                f"postgres.log:\n{self.log_tail()}"
            )


def postgres_bin_dir() -> Path | None:
    """Return the newest installed PostgreSQL's bin directory (Debian's layout), or None."""
    found = [path.parent for path in Path("/").glob(POSTGRES_BINARIES.lstrip("/") + "/initdb")]
    return max(found, key=lambda path: int(path.parent.name), default=None)


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    """Start a PostgreSQL cluster of this test's own; stop it and delete its files at the end."""
    with private_postgres_cluster() as cluster:
        yield cluster


@contextlib.contextmanager
def private_postgres_cluster() -> Iterator[PrivatePostgres]:
    """Start a private PostgreSQL cluster, or skip (fail under UPTIMY_REQUIRE_SERVICES=1) without its binaries."""
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        unavailable(
            f"PostgreSQL's initdb is not installed (looked in {POSTGRES_BINARIES}): apt-get install postgresql",
            switch=SERVICES_SWITCH,
        )
    user = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            unavailable("initdb refuses to run as root and there is no postgres user", switch=SERVICES_SWITCH)
        user = owner.pw_name
    # Not under pytest's tmp_path: its parents are private to this user, and the cluster may run as postgres.
    home = Path(tempfile.mkdtemp(prefix="uptimy-pg-"))
    if user is not None:
        os.chown(home, owner.pw_uid, owner.pw_gid)
    cluster = PrivatePostgres(bin_dir=bin_dir, home=home, port=free_port(), user=user)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            cluster.stop("immediate")
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def live_uptimy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveUptimy]:
    """Serve Uptimy as `make run` does (manage.py serve) on a free port, with a database of its own, once a run."""
    running = start_uptimy(tmp_path_factory.mktemp("uptimy-live"))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def loopback_uptimy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveUptimy]:
    """Serve Uptimy as `make run` does, allowed to check targets on loopback (the tests' own servers), once a run."""
    running = start_uptimy(tmp_path_factory.mktemp("uptimy-loopback"), UPTIMY_ALLOW_PRIVATE_TARGETS="1")
    try:
        yield running
    finally:
        running.stop()
