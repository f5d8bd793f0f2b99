"""The DNS record check through the API and the worker: its config's 400s, then up and down against dnslib."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from monitors.models import Healthcheck, ProbeResult
from monitors.worker.execution import execute_batch
from tests.dns_server import Zone, dns_server
from tests.monitors.conftest import Captured

URL = "/api/v1/healthchecks/"
SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)


def create(client, **config: Any) -> Any:
    return client.post(
        URL, {"name": "dns", "type": "dns", "config": {"name": "example.test", **config}}, format="json"
    )


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ({"recordType": "XYZ"}, "config.recordType", "A, AAAA, CNAME, MX, TXT, NS, SOA, CAA"),
        ({"name": "bad name"}, "config.name", "spaces"),
        ({"nameserver": "ns1.example.com"}, "config.nameserver", "a host name is not allowed"),
        ({"expect": {"op": "contains", "values": ["not-an-ip"]}}, "config.expect.values", "IPv4"),
    ],
)
def test_a_bad_config_is_a_400_naming_the_field(client, config, field, words):
    response = create(client, **config)

    assert response.status_code == 400, response.json()
    body = response.json()
    assert field in str(body)
    assert words in str(body)


@pytest.mark.parametrize("nameserver", ["10.0.0.1", "127.0.0.1:5353", "[::1]:53"])
def test_a_private_nameserver_is_a_400_naming_the_field_unless_private_targets_are_allowed(
    client, settings, nameserver
):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False

    refused = create(client, nameserver=nameserver)
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    allowed = create(client, nameserver=nameserver)

    assert refused.status_code == 400, refused.json()
    assert "config.nameserver" in str(refused.json())
    assert "Uptimy only checks public addresses" in str(refused.json())
    assert allowed.status_code == 201, allowed.json()


def test_a_public_nameserver_is_accepted_and_answered_as_stored(client, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False

    response = create(
        client, recordType="mx", nameserver="9.9.9.9", expect={"values": ["10 Mail.example.test"]}
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["type"], body["type_name"]) == (4, "dns")
    assert body["config"] == {
        "name": "example.test",
        "recordType": "MX",
        "nameserver": "9.9.9.9",
        "expect": {"op": "contains", "values": ["10 mail.example.test."]},
        "dnssec": False,
        "timeout": 10.0,
    }


def test_a_partial_update_merges_into_the_stored_config(client):
    check_id = create(client).json()["id"]

    response = client.patch(f"{URL}{check_id}/", {"config": {"recordType": "TXT"}}, format="json")
    bad = client.patch(f"{URL}{check_id}/", {"config": {"recordType": "XYZ"}}, format="json")

    assert response.status_code == 200, response.json()
    assert (response.json()["config"]["name"], response.json()["config"]["recordType"]) == (
        "example.test",
        "TXT",
    )
    assert bad.status_code == 400
    assert "config.recordType" in str(bad.json())


def test_the_openapi_schema_documents_the_type(client):
    schema = client.get("/api/v1/schema/", {"format": "json"}).json()

    healthcheck = schema["components"]["schemas"]["Healthcheck"]["properties"]
    titles = [item.get("title") for item in healthcheck["config"]["anyOf"]]
    assert "DNS record check config (type 4)" in titles
    assert 4 in healthcheck["type"]["oneOf"][0]["enum"]


# --- end to end: the worker's batch against a real DNS server ----------------------------------


@pytest.fixture
def zone() -> Zone:
    return Zone(records=["example.test. 60 IN A 192.0.2.1"])


@pytest.fixture
def nameserver(zone: Zone) -> Iterator[str]:
    with dns_server(zone) as address:
        yield address


def test_the_worker_finds_it_up_then_down_after_its_rechecks_when_the_answer_goes_wrong(
    client, settings, zone, nameserver
):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True  # the nameserver is on loopback
    response = client.post(
        URL,
        {
            "name": "dns",
            "type": "dns",
            "config": {
                "name": "example.test",
                "nameserver": nameserver,
                "expect": {"op": "contains", "values": ["192.0.2.1"]},
                "timeout": 5,
            },
            "regions": ["eu-west"],
            "recheck_count": 1,
            "interval": 3600,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    check_id = response.json()["id"]
    pk = Healthcheck.objects.get(public_id=check_id).pk

    execute_batch("eu-west", [[pk, SLOT.isoformat(), 0]], enqueue=Captured())
    up = client.get(f"{URL}{check_id}/").json()

    zone.records = ["example.test. 60 IN A 192.0.2.9"]
    enqueue = Captured()
    later = (SLOT + timedelta(hours=1)).isoformat()
    execute_batch("eu-west", [[pk, later, 0]], enqueue=enqueue)
    rechecking = client.get(f"{URL}{check_id}/").json()
    execute_batch("eu-west", enqueue.calls[0][1], enqueue=enqueue)
    down = client.get(f"{URL}{check_id}/").json()
    results = client.get(f"{URL}{check_id}/results/").json()["results"]

    assert up["status"] == "up"
    assert rechecking["status"] == "up"
    assert enqueue.calls[0][1] == [[pk, later, 1]]
    assert down["status"] == "down"
    latest = results[0]
    assert (latest["status"], latest["kind"]) == ("down", "dns_answer")
    assert latest["reason"] == "A answer was 192.0.2.9, expected to contain 192.0.2.1"
    assert latest["details"] == {
        "answer": ["192.0.2.9"],
        "rcode": "NOERROR",
        "ad": False,
        "nameserver": nameserver,
        "truncated_fallback": False,
    }
    assert ProbeResult.objects.filter(healthcheck_id=pk).count() == 3
