"""Factories shared by every test app, and the switch that makes service tests fail, not skip."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import NoReturn

import pytest
from rest_framework.test import APIClient

from monitors.models import ApiKey, Organization, Plan
from monitors.services import api_key_create, organization_create

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


@pytest.fixture
def now() -> datetime:
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
