"""Factories shared by every test app, and the switch that makes service tests fail, not skip."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from monitors.models import ApiKey, Organization, Plan
from monitors.services import api_key_create, organization_create

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
REQUIRE_SERVICES = os.environ.get("UPTIMY_REQUIRE_SERVICES") == "1"


def service_missing(what: str) -> None:
    """Skip a test whose service isn't configured, or fail it where CI requires the services."""
    message = f"{what} is not configured"
    if REQUIRE_SERVICES:
        pytest.fail(f"{message}, and UPTIMY_REQUIRE_SERVICES=1 requires it")
    pytest.skip(message)


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
