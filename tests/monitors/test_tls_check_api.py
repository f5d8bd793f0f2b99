"""The TLS check type through the API and the worker, against a real TLS server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.monitors.type_servers import tls_server, trust_pki
from tests.probes.tls_support import HOST, Pki, scenarios

URL = "/api/v1/healthchecks/"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"port": 0}, "config.port"),
        ({"port": 70000}, "config.port"),
        ({"warnDays": 400}, "config.warnDays"),
        ({"starttls": "ftp"}, "config.starttls"),
        ({"host": "10.0.0.1"}, "config.host"),
        ({"host": "127.0.0.1", "serverName": "example.com"}, "config.host"),
        ({"host": "fd00::1"}, "config.host"),
    ],
)
def test_bad_fields_are_a_400_naming_them(client, config, field):
    response = client.post(
        URL, {"name": "cert", "type": "tls", "config": {"host": "example.com", **config}}, format="json"
    )

    assert response.status_code == 400
    assert field in str(response.json())


def test_a_private_address_is_saved_where_the_deployment_allows_private_targets(client, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    config = {"host": "10.0.0.1", "serverName": "example.com"}

    response = client.post(URL, {"name": "cert", "type": "tls", "config": config}, format="json")

    assert response.status_code == 201, response.json()


def test_the_api_creates_it_by_name_and_number(client):
    for type_ in ("tls", 2):
        response = client.post(
            URL, {"name": "cert", "type": type_, "config": {"host": "example.com"}}, format="json"
        )
        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["type"], body["type_name"]) == (2, "tls")
        assert body["config"] == {
            "host": "example.com",
            "port": 443,
            "starttls": None,
            "serverName": None,
            "warnDays": 14,
            "timeout": 10.0,
        }


@pytest.fixture
def expiring_server() -> Iterator[tuple[Pki, int]]:
    pki = Pki()
    with tls_server(scenarios(pki)["expiring"]) as server:
        yield pki, server.port


def test_the_worker_degrades_a_certificate_that_expires_in_3_days(
    client, settings, monkeypatch, expiring_server
):
    pki, port = expiring_server
    settings.REDIS_URL = ""  # the embedded mode: run-now runs the batch in this process
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    trust_pki(monkeypatch, pki)
    config = {"host": "127.0.0.1", "port": port, "serverName": HOST, "timeout": 5}
    check_id = client.post(URL, {"name": "cert", "type": "tls", "config": config}, format="json").json()["id"]

    results = client.post(f"{URL}{check_id}/run/").json()

    assert results
    assert {result["status"] for result in results} == {"degraded"}
    assert all("expires in 3 days" in result["reason"] for result in results)
    assert all(result["details"]["certificate"]["days_left"] == 3 for result in results)
    healthcheck = client.get(f"{URL}{check_id}/").json()
    assert healthcheck["status"] == "degraded", healthcheck
