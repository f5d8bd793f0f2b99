"""The TCP port check (type 3) through the API and the worker, against a real loopback server.

The API validates its config with the type's parser (a 400 naming ``config.<key>``), answers
its shape and schema, runs it now, and the embedded worker takes it up, down (the server
stopped, rechecks and all) and up again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from monitors.models import Healthcheck, ProbeResult
from probes.checks.tcp import CONFIG_SCHEMA
from tests.monitors.type_servers import BannerServer
from tests.monitors.worker_support import QUICK_INTERVAL, due_now, embedded, status_changes, walk_statuses

URL = "/api/v1/healthchecks/"


@pytest.fixture
def banner_server() -> Iterator[BannerServer]:
    server = BannerServer()
    try:
        yield server
    finally:
        server.stop()


def create(client, **config: Any) -> Any:
    return client.post(URL, {"name": "ssh", "type": "tcp", "config": config}, format="json")


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"host": "example.com", "port": 0}, "config.port"),
        ({"host": "example.com", "port": 70000}, "config.port"),
        ({"host": "example.com"}, "config.port"),
        ({"port": 22}, "config.host"),
        ({"host": "exa mple.com", "port": 22}, "config.host"),
        ({"host": "example.com", "port": 22, "expect": "(unclosed"}, "config.expect"),
        ({"host": "example.com", "port": 22, "expect": r"^(\w)\1"}, "config.expect"),
        ({"host": "example.com", "port": 22, "send": "a\u0000"}, "config.send"),
        ({"host": "example.com", "port": 22, "serverName": "x.example"}, "config.serverName"),
        ({"host": "example.com", "port": 22, "headers": {"X-Key": "secret"}}, "config.headers"),
        ({"host": "example.com", "port": 22, "headers": {}}, "config.headers"),
        ({"host": "10.0.0.1", "port": 22}, "config.host"),
        ({"host": "127.0.0.1", "port": 22}, "config.host"),
        ({"host": "::1", "port": 22}, "config.host"),
        ({"host": "169.254.169.254", "port": 80}, "config.host"),
    ],
)
def test_a_bad_config_is_a_400_naming_the_field(client, config, field):
    response = create(client, **config)

    assert response.status_code == 400, response.json()
    assert field in str(response.json())
    assert "secret" not in str(response.json())


def test_the_api_creates_it_and_answers_its_config(client):
    response = create(client, host="Example.com", port=22, expect="^SSH-2\\.0-")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["type"], body["type_name"]) == (3, "tcp")
    assert body["config"] == {
        "host": "example.com",
        "port": 22,
        "tls": False,
        "serverName": None,
        "send": None,
        "lineEnding": "lf",
        "expect": "^SSH-2\\.0-",
        "timeout": 10.0,
    }


def test_an_update_keeps_what_it_does_not_change(client):
    check_id = create(client, host="example.com", port=25, expect="^220 ").json()["id"]

    response = client.patch(f"{URL}{check_id}/", {"config": {"port": 587}}, format="json")

    assert response.status_code == 200, response.json()
    assert (response.json()["config"]["port"], response.json()["config"]["expect"]) == (587, "^220 ")
    bad = client.patch(f"{URL}{check_id}/", {"config": {"port": 70000}}, format="json")
    assert bad.status_code == 400
    assert "config.port" in str(bad.json())


def test_the_openapi_schema_documents_it(client):
    schema = client.get("/api/v1/schema/", {"format": "json"}).json()

    healthcheck = schema["components"]["schemas"]["Healthcheck"]["properties"]
    assert CONFIG_SCHEMA in healthcheck["config"]["anyOf"]
    assert 3 in healthcheck["type"]["oneOf"][0]["enum"]
    assert "tcp" in healthcheck["type"]["oneOf"][1]["enum"]


def test_run_now_checks_the_loopback_server_and_keeps_the_reply(client, settings, banner_server):
    settings.REDIS_URL = ""  # the embedded mode: run-now runs the batch in this process
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    check_id = create(client, host="127.0.0.1", port=banner_server.port, expect="^SSH-2\\.0-").json()["id"]

    results = client.post(f"{URL}{check_id}/run/").json()

    assert results
    assert {result["status"] for result in results} == {"up"}
    assert {result["details"]["reply"] for result in results} == {"SSH-2.0-Uptimy_test"}
    assert all(result["timings"]["tcp_ms"] is not None for result in results)


def test_run_now_names_a_mismatched_reply(client, settings, banner_server):
    settings.REDIS_URL = ""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    check_id = create(client, host="127.0.0.1", port=banner_server.port, expect="^220 ", timeout=1).json()[
        "id"
    ]

    results = client.post(f"{URL}{check_id}/run/").json()

    assert {(result["status"], result["kind"]) for result in results} == {("down", "tcp_reply")}
    assert results[0]["reason"] == 'Reply did not match /^220 / within 1 s: got "SSH-2.0-Uptimy_test"'


def test_a_private_address_is_saved_where_the_deployment_allows_private_targets(client, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True

    assert create(client, host="10.0.0.1", port=22).status_code == 201


def test_the_worker_refuses_a_loopback_target_unless_private_targets_are_allowed(
    client, settings, banner_server
):
    settings.REDIS_URL = ""
    # Saved while allowed, run once no longer allowed: the guard at run time refuses it too.
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    check_id = create(client, host="127.0.0.1", port=banner_server.port).json()["id"]
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False

    results = client.post(f"{URL}{check_id}/run/").json()

    assert {result["kind"] for result in results} == {"blocked_address"}


@embedded
def test_it_goes_up_down_after_rechecks_and_up_again_through_the_worker(client, settings, banner_server):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    response = client.post(
        URL,
        {
            "name": "ssh",
            "type": "tcp",
            "config": {
                "host": "127.0.0.1",
                "port": banner_server.port,
                "expect": "^SSH-2\\.0-",
                "timeout": 5,
            },
            "recheck_count": 1,
            "recheck_delay_seconds": 1,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    healthcheck = Healthcheck.objects.get(public_id=response.json()["id"])
    Healthcheck.objects.filter(pk=healthcheck.pk).update(interval_seconds=QUICK_INTERVAL)
    healthcheck.refresh_from_db()
    due_now(healthcheck)

    walk_statuses(
        healthcheck, [("up", banner_server.stop), ("down", banner_server.start), ("up", lambda: None)]
    )

    assert status_changes(healthcheck) == [("pending", "up"), ("up", "down"), ("down", "up")]
    down = healthcheck.status_changes.get(to_status="down")
    assert set(down.failed_regions.values()) == {"connect"}
    # The down verdict came after a recheck of the slot that first failed.
    assert ProbeResult.objects.filter(healthcheck=healthcheck, status="down", attempt=1).exists()
    up = ProbeResult.objects.filter(healthcheck=healthcheck, status="up").latest("id")
    assert up.details == {"address": f"127.0.0.1:{banner_server.port}", "reply": "SSH-2.0-Uptimy_test"}
