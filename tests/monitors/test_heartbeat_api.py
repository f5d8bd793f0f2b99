"""Heartbeat checks through the API: created passive (no regions, never claimed), bad configs a 400 naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from monitors.models import Healthcheck, Heartbeat

pytestmark = pytest.mark.django_db

URL = "/api/v1/healthchecks/"
NIGHTLY = {"schedule": {"cron": "0 3 * * *", "tz": "Europe/Paris"}, "grace": 300}


def create(client: Any, config: dict[str, Any]) -> Any:
    return client.post(URL, {"name": "nightly backup", "type": "heartbeat", "config": config}, format="json")


def test_a_heartbeat_is_created_passive(client):
    response = create(client, NIGHTLY)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["type"], body["type_name"]) == (7, "heartbeat")
    assert body["config"] == NIGHTLY
    assert body["regions"] == []
    check = Healthcheck.objects.get(public_id=body["id"])
    # Dispatch never claims it: it has no slot.
    assert check.next_check_at is None
    assert Heartbeat.objects.filter(healthcheck=check).exists()


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"schedule": {"cron": "0 0 30 2 *"}}, "config.schedule.cron"),
        ({"schedule": {"cron": "0 3 * * *", "tz": "Mars/Olympus"}}, "config.schedule.tz"),
        ({"schedule": {"period": 3600}, "grace": 1}, "config.grace"),
    ],
)
def test_bad_configs_are_a_400_naming_the_field(client, config, field):
    response = create(client, config)

    assert response.status_code == 400
    assert field in str(response.json())


def _ping_path(body: dict[str, Any]) -> str:
    check = Healthcheck.objects.get(public_id=body["id"])
    return f"/ping/{check.heartbeat.ping_id}"


def _status(body: dict[str, Any]) -> Healthcheck:
    return Healthcheck.objects.get(public_id=body["id"])


def test_late_is_down_and_the_next_ping_is_up(client):
    from django.test import Client

    from monitors.models import StatusChange
    from monitors.services.heartbeats import heartbeats_judge
    from tests.clock import frozen_at

    # 03:00:04 in Paris (UTC+1 in December): the job's success ping.
    ping_at = datetime(2026, 12, 5, 2, 0, 4, tzinfo=UTC)
    due = datetime(2026, 12, 6, 2, 5, tzinfo=UTC)
    with frozen_at(ping_at):
        body = create(client, NIGHTLY).json()
        path = _ping_path(body)
        answer = Client().get(path, HTTP_USER_AGENT="curl/8.5\x00")
        assert (answer.status_code, answer.content, answer["Content-Type"]) == (
            200,
            b"OK",
            "text/plain; charset=utf-8",
        )
        assert "Set-Cookie" not in answer
        heartbeats_judge(now=ping_at)
    assert _status(body).status == "up"
    heartbeats_judge(now=due - timedelta(seconds=1))
    assert _status(body).status == "up"
    heartbeats_judge(now=due)
    check = _status(body)
    assert (check.status, check.cause_kind) == ("down", "heartbeat_late")
    change = StatusChange.objects.filter(healthcheck=check).latest("at")
    assert change.reason.startswith("No ping since 03:00; expected by 03:05 (Europe/Paris)")
    assert change.effective_at == due
    later = due + timedelta(minutes=10)
    with frozen_at(later):
        assert Client().head(path).status_code == 200
        heartbeats_judge(now=later)
    assert _status(body).status == "up"


def test_fail_with_a_body_is_down_naming_its_first_line(client):
    from django.test import Client

    from monitors.models import Ping
    from monitors.services.heartbeats import heartbeats_judge

    body = create(client, NIGHTLY).json()
    path = _ping_path(body)
    anonymous = Client(enforce_csrf_checks=True)
    assert anonymous.post(f"{path}/start").status_code == 200
    answer = anonymous.post(f"{path}/fail", data=b"disk full\nat /backup\n", content_type="text/plain")
    assert answer.status_code == 200
    heartbeats_judge(now=Ping.objects.latest("at").at)
    check = _status(body)
    assert (check.status, check.cause_kind) == ("down", "job_failed")
    assert check.cause_reason == "The job failed: disk full / at /backup"
    assert Ping.objects.filter(healthcheck=check, kind="fail").get().duration_seconds is not None


@pytest.mark.parametrize(("suffix", "status"), [("/0", 200), ("/255", 200), ("/256", 404), ("/nope", 404)])
def test_exit_statuses(client, suffix, status):
    from django.test import Client

    body = create(client, NIGHTLY).json()
    assert Client().get(_ping_path(body) + suffix).status_code == status


def test_an_unknown_ping_id_is_404(client):
    from django.test import Client

    assert Client().get("/ping/00000000-0000-4000-8000-000000000000").status_code == 404


def test_the_create_answers_an_absolute_ping_url_that_rotates(client):
    from django.test import Client

    body = create(client, NIGHTLY).json()
    old = body["ping_url"]
    assert old.startswith("http://testserver/ping/")
    rotated = client.post(f"{URL}{body['id']}/rotate-ping-url/")
    assert rotated.status_code == 200
    new = rotated.json()["ping_url"]
    assert new != old
    assert Client().get(old.removeprefix("http://testserver")).status_code == 404
    assert Client().get(new.removeprefix("http://testserver")).status_code == 200


def test_a_read_only_key_never_sees_the_ping_url(client, read_client):
    # Whoever holds the URL can report the job done or failed; a read-only key changes nothing.
    body = create(client, NIGHTLY).json()

    assert body["ping_url"]
    assert read_client.get(f"{URL}{body['id']}/").json()["ping_url"] is None
    listed = read_client.get(URL).json()["results"]
    assert [hc["ping_url"] for hc in listed] == [None]


def test_a_check_changed_into_a_heartbeat_gets_its_ping_url_and_no_regions(client):
    from django.test import Client

    from monitors.models import StatusChange

    created = client.post(
        URL, {"name": "site", "type": "http", "config": {"uri": "https://example.com/"}}, format="json"
    ).json()
    Healthcheck.objects.filter(public_id=created["id"]).update(status="up")

    response = client.patch(f"{URL}{created['id']}/", {"type": "heartbeat", "config": NIGHTLY}, format="json")

    assert response.status_code == 200, response.json()
    assert (response.json()["type_name"], response.json()["regions"]) == ("heartbeat", [])
    check = _status(created)
    assert (check.status, check.next_check_at) == ("pending", None)
    assert StatusChange.objects.filter(healthcheck=check).latest("at").reason == "Type changed"
    assert Client().get(response.json()["ping_url"].removeprefix("http://testserver")).status_code == 200


def test_a_heartbeat_changed_into_another_type_loses_its_ping_url(client):
    from django.test import Client

    from monitors.models import Ping

    created = create(client, NIGHTLY).json()
    path = _ping_path(created)
    assert Client().get(path).status_code == 200

    response = client.patch(
        f"{URL}{created['id']}/", {"type": "http", "config": {"uri": "https://example.com/"}}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert response.json()["regions"] != []
    check = _status(created)
    assert check.next_check_at is not None
    assert not Heartbeat.objects.filter(healthcheck=check).exists()
    assert not Ping.objects.filter(healthcheck=check).exists()
    assert Client().get(path).status_code == 404
