"""Check the domain check (type 6) through the API and the worker, against a real RDAP server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from monitors.models import Healthcheck
from tests.monitors.type_servers import RdapRegistry, rdap_registry

URL = "/api/v1/healthchecks/"
# The recorded answer's expiry (tests/probes/data/rdap_domain_example.json).
EXPIRES = datetime(2027, 8, 13, 4, tzinfo=UTC)


@pytest.fixture
def registry(settings, tmp_path) -> Iterator[RdapRegistry]:
    with rdap_registry(settings, tmp_path) as registry:
        yield registry


def create(client, config: dict[str, object], **fields: object):
    body = {"name": "domain", "type": "domain", "config": config, **fields}
    return client.post(URL, body, format="json")


def test_a_domain_check_runs_hourly_by_default(client):
    response = create(client, {"domain": "example.com"})

    assert response.status_code == 201, response.json()
    assert (response.json()["interval"], response.json()["config"]) == (
        3600,
        {"domain": "example.com", "warnDays": 30, "timeout": 10.0},
    )


@pytest.mark.parametrize(
    ("config", "fields", "field"),
    [
        ({"domain": "example.com"}, {"interval": 60}, "interval"),
        ({"domain": "10.0.0.1"}, {}, "config.domain"),
        ({"domain": "example.com", "warnDays": 1000}, {}, "config.warnDays"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(client, config, fields, field):
    response = create(client, config, **fields)

    assert response.status_code == 400
    assert field in str(response.json())


def test_changing_a_minutely_check_into_a_domain_check_asks_for_a_longer_interval(client):
    check_id = client.post(
        URL,
        {"name": "site", "type": "http", "config": {"uri": "https://example.com/"}, "interval": 60},
        format="json",
    ).json()["id"]

    response = client.patch(
        f"{URL}{check_id}/", {"type": "domain", "config": {"domain": "example.com"}}, format="json"
    )

    assert response.status_code == 400
    assert "Domain checks run at most every 3600 seconds" in str(response.json())


@time_machine.travel(EXPIRES - timedelta(days=20, hours=1), tick=True)
def test_the_worker_runs_it_in_every_region_and_the_check_goes_degraded_with_the_days_left(
    client, registry, settings
):
    settings.REDIS_URL = ""  # the embedded mode: run-now runs the batch in this process
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    check_id = create(client, {"domain": "example.test"}).json()["id"]

    results = client.post(f"{URL}{check_id}/run/").json()

    assert {result["status"] for result in results} == {"degraded"}
    assert {result["reason"] for result in results} == {
        "The registration of example.test expires in 20 days (2027-08-13)"
    }
    assert results[0]["details"]["days_left"] == 20
    healthcheck = Healthcheck.objects.get(public_id=check_id)
    assert (healthcheck.status, healthcheck.cause_kind) == ("degraded", "domain_expiring")
