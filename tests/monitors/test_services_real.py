"""Behaviour that only the real PostgreSQL and Redis can show."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from monitors.errors import ServiceError
from monitors.models import Healthcheck, Plan
from monitors.services import healthcheck_create, organization_create
from probes.checks.http import HTTP

pytestmark = pytest.mark.services


# serialized_rollback, as every transactional test here: a flush without it re-creates the content
# types (post_migrate), and the next serialized test's restore of them then collides.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_concurrent_creates_never_exceed_the_plan(postgres, now):
    plan = Plan.objects.create(slug="tiny", name="Tiny", max_healthchecks=3, min_interval_seconds=30)
    organization = organization_create(slug="racer", plan=plan)
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def create(index: int) -> None:
        barrier.wait()
        try:
            healthcheck_create(
                organization=organization,
                name=f"c{index}",
                check_type=HTTP,
                config={"uri": "https://example.com/"},
                now=now,
            )
            outcomes.append("created")
        except ServiceError:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["created"] * 3 + ["refused"] * 5
    assert Healthcheck.objects.filter(organization=organization).count() == 3


def test_the_throttle_counts_in_redis_when_configured(redis_url, settings, client):
    from django.core.cache import caches

    assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
    client.get("/api/v1/healthchecks/")

    assert any(key.startswith(":1:throttle_api_key_") for key in _redis_keys(redis_url)), (
        "no throttle key in Redis"
    )
    caches["default"].clear()


def _redis_keys(url: str) -> list[str]:
    import redis

    connection_ = redis.Redis.from_url(url)
    try:
        return [key.decode() for key in connection_.scan_iter("*throttle*")]
    finally:
        connection_.close()
