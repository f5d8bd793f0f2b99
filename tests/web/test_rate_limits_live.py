"""Rate limits hold against parallel requests, from the client's side, on both process models.

Forty clients each fetch the sign-in form (their own CSRF cookie and token), wait at a barrier,
then post a wrong password for one user at once; forty more post a client registration at once.
Each limit must admit exactly its count: a counter read and written back without an atomic step
let 20 to 40 password checks (and 27 to 39 registrations) through. Two servers: ``make run``'s
embedded default (``manage.py serve`` on SQLite, two gunicorn workers) and the production shape
(the same command on a fresh PostgreSQL database and a Redis of its own, the cache and counters
there, Celery's worker and beat beside gunicorn's workers).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
import redis
from psycopg import sql

from tests.conftest import service_missing
from tests.live_uptimy import LiveUptimy, free_port, start_uptimy

PARALLEL = 40
LOGIN_ATTEMPTS = 10  # the default UPTIMY_LOGIN_ATTEMPTS
REGISTRATIONS = 20  # the default UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR
PAGE_PASSWORD_TRIES = 10  # statuspages.views.LOGIN_TRIES
CLIENT = {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "client_name": "Claude"}
WRONG = "Please enter a correct"
WAIT = "Too many failed sign-ins"


@contextlib.contextmanager
def private_redis(home: Path) -> Iterator[str]:
    """Run a redis-server of this test's own on a free loopback port; yield its URL."""
    if shutil.which("redis-server") is None:
        service_missing("redis-server (the production-shape test runs a Redis of its own)")
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(home)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    client = redis.Redis(port=port, socket_connect_timeout=0.5)
    try:
        for _ in range(100):  # about 10 s: each try waits up to its connect timeout
            with contextlib.suppress(redis.RedisError):
                if client.ping():
                    break
            if process.poll() is not None:
                raise AssertionError("redis-server exited at start")
            threading.Event().wait(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        client.close()
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextlib.contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """Create an empty database on DATABASE_URL's PostgreSQL; yield its URL, drop it after."""
    admin = os.environ.get("DATABASE_URL", "")
    if urlsplit(admin).scheme not in ("postgres", "postgresql"):
        service_missing("PostgreSQL (DATABASE_URL)")
    name = f"uptimy_ratelimit_{os.getpid()}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.OperationalError as exc:
        service_missing(f"PostgreSQL at DATABASE_URL ({exc})")
    try:
        yield urlunsplit(urlsplit(admin)._replace(path="/" + name))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module", params=["embedded", "production"])
def uptimy(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveUptimy]:
    """Serve Uptimy as `make run` does: on SQLite alone, or on PostgreSQL and Redis."""
    var_dir = tmp_path_factory.mktemp(f"uptimy-{request.param}")
    with contextlib.ExitStack() as stack:
        extra: dict[str, str] = {}
        if request.param == "production":
            extra["DATABASE_URL"] = stack.enter_context(fresh_postgres_database())
            extra["REDIS_URL"] = stack.enter_context(private_redis(var_dir))
        running = start_uptimy(var_dir, **extra)
        stack.callback(running.stop)
        yield running


def at_once(
    clients: list[httpx.Client], send: Callable[[int, httpx.Client], httpx.Response]
) -> list[httpx.Response]:
    """Send one request per client, all released together by a barrier; return the answers in order."""
    barrier = threading.Barrier(len(clients))

    def released(index: int) -> httpx.Response:
        barrier.wait(timeout=120)
        return send(index, clients[index])

    with ThreadPoolExecutor(len(clients)) as pool:
        return list(pool.map(released, range(len(clients))))


def sign_in_form(client: httpx.Client) -> str:
    """Fetch the sign-in form as a browser does (its CSRF cookie) and return the form's token."""
    page = client.get("/app/login/")
    assert page.status_code == 200, page.text[:500]
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


def saying(answer: httpx.Response) -> str:
    if answer.status_code == 200 and WRONG in answer.text:
        return "wrong password"
    if answer.status_code == 200 and WAIT in answer.text:
        return "wait"
    return f"unexpected {answer.status_code}: {answer.text[:300]}"


def test_parallel_wrong_passwords_get_at_most_the_limit_of_checks(uptimy: LiveUptimy):
    clients = [httpx.Client(base_url=uptimy.base, timeout=300) for _ in range(PARALLEL)]
    try:
        tokens = [sign_in_form(client) for client in clients]
        answers = at_once(
            clients,
            lambda index, client: client.post(
                "/app/login/",
                data={"username": "admin", "password": "not-it", "csrfmiddlewaretoken": tokens[index]},
            ),
        )
    finally:
        for client in clients:
            client.close()

    said = Counter(saying(answer) for answer in answers)
    print(f"sign-in, {PARALLEL} parallel wrong passwords: {dict(said)}")
    assert said == {"wrong password": LOGIN_ATTEMPTS, "wait": PARALLEL - LOGIN_ATTEMPTS}


def test_parallel_registrations_from_one_address_get_exactly_the_hourly_limit(uptimy: LiveUptimy):
    clients = [httpx.Client(base_url=uptimy.base, timeout=300) for _ in range(PARALLEL)]
    try:
        for client in clients:  # a connection each, open before the barrier
            assert client.get("/healthz").status_code == 200
        answers = at_once(clients, lambda _, client: client.post("/oauth/register/", json=CLIENT))
    finally:
        for client in clients:
            client.close()

    statuses = Counter(answer.status_code for answer in answers)
    print(f"registration, {PARALLEL} parallel from one address: {dict(statuses)}")
    assert statuses == {201: REGISTRATIONS, 429: PARALLEL - REGISTRATIONS}
    refused = next(answer for answer in answers if answer.status_code == 429)
    assert 0 < int(refused.headers["Retry-After"]) <= 3600


def test_parallel_wrong_page_passwords_get_exactly_the_limit_of_checks(uptimy: LiveUptimy):
    with uptimy.api() as api:
        made = api.post(
            "/api/v1/status-pages/",
            json={
                "slug": "parallel-guess",
                "title": "Guessed",
                "access": "password",
                "password": "correct horse",
            },
        )
    assert made.status_code == 201, made.text
    clients = [httpx.Client(base_url=uptimy.base, timeout=300) for _ in range(PARALLEL)]
    try:
        tokens = []
        for client in clients:
            form = client.get("/s/parallel-guess/login/")
            found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
            assert found, form.text[:500]
            tokens.append(found.group(1))
        answers = at_once(
            clients,
            lambda index, client: client.post(
                "/s/parallel-guess/login/", data={"password": "not-it", "csrfmiddlewaretoken": tokens[index]}
            ),
        )
    finally:
        for client in clients:
            client.close()

    statuses = Counter(answer.status_code for answer in answers)
    print(f"status page password, {PARALLEL} parallel wrong ones: {dict(statuses)}")
    # 403: the password was compared and wrong; 429: refused before any comparison.
    assert statuses == {403: PAGE_PASSWORD_TRIES, 429: PARALLEL - PAGE_PASSWORD_TRIES}
