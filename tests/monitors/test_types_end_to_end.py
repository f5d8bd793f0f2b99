"""Follow each check type from its creation to its report, against its real server on loopback.

For each type a check is created through the REST API in an organization of three regions
(a heartbeat: none), with the default alert policy sending to a real webhook receiver and a
status page showing the check. The type's server then fails (stopped, or answering what the
type calls down): after the recheck the check is down in every region, the receiver gets one
signed alert naming the type's reason, and the page (its HTML and its Statuspage-compatible
summary.json) shows the component down. The server comes back: one recovery, the component
operational, and the report for the period counts the downtime. The embedded worker runs it
all (monitors/worker/embedded.py), as `make run` does; the test waits on rows, never on time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from alerts.models import Delivery
from monitors.models import Healthcheck, ProbeResult, StatusChange
from tests.alerts.channel_support import Receiver, serve
from tests.conftest import SERVICES_SWITCH, unavailable
from tests.monitors.type_servers import TARGETS, Target, open_target
from tests.monitors.worker_support import QUICK_INTERVAL, due_now, embedded, run_worker, walk_statuses
from tests.probes.test_ping_check import UNSHARE, namespace_refusal
from tests.statuspages.html_support import parse

CHECKS = "/api/v1/healthchecks/"
REGIONS = {"eu-west", "us-east", "ap-southeast"}  # the paid plan's
PING_MODULE = Path(__file__).with_name("ping_end_to_end.py")


@pytest.fixture
def hook() -> Iterator[Receiver]:
    """Receive the webhooks on loopback (tests/alerts/channel_support.py's receiver)."""
    with serve() as receiver:
        yield receiver


@pytest.fixture(autouse=True)
def _loopback(settings) -> None:
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 5.0


def alert_to(client, receiver: Receiver) -> str:
    """Send the organization's alerts to ``receiver`` by a webhook channel; return its signing secret."""
    channel = client.post(
        "/api/v1/channels/",
        {"name": "ops hook", "kind": "webhook", "config": {"url": receiver.url()}},
        format="json",
    )
    assert channel.status_code == 201, channel.content
    policy = client.put(
        "/api/v1/alert-policies/default/", {"channels": [channel.json()["id"]]}, format="json"
    )
    assert policy.status_code == 200, policy.content
    return channel.json()["signing_secret"]


def page_of(client, check_id: str) -> str:
    """Make a public status page with one component, the check; return its slug."""
    page = client.post("/api/v1/status-pages/", {"slug": "acme", "title": "Acme status"}, format="json")
    assert page.status_code == 201, page.content
    component = client.post(
        f"/api/v1/status-pages/{page.json()['id']}/components/", {"healthcheck": check_id}, format="json"
    )
    assert component.status_code == 201, component.content
    return "acme"


def shown(slug: str) -> tuple[str, str]:
    """Return the component's status as the page's HTML says it and as its summary.json does."""
    from django.core.cache import cache

    # The page's HTML is kept for HTML_SECONDS and a check's new status shows within them
    # (statuspages/cache.py); the test reads the status as it is now, not as it was.
    cache.clear()
    web = Client()
    html = web.get(f"/s/{slug}/")
    summary = web.get(f"/s/{slug}/api/v2/summary.json")
    assert (html.status_code, summary.status_code) == (200, 200)
    label = parse(html.content).one("component").one("status-label").text
    (component,) = json.loads(summary.content)["components"]
    return label, component["status"]


def alerts(receiver: Receiver, secret: str) -> list[dict[str, Any]]:
    """Return the webhooks received, each verified with the channel's secret by standardwebhooks."""
    bodies = []
    for got in receiver.received:
        Webhook(secret).verify(got.body, got.headers)
        bodies.append(json.loads(got.body))
    return bodies


def delivered(count: int) -> bool:
    return run_worker(lambda _: Delivery.objects.filter(state=Delivery.State.DELIVERED).count() >= count)


def report_of(client, check_id: str) -> dict[str, Any]:
    """Return the check's availability in the report of the days from its creation to today (UTC)."""
    created = Healthcheck.objects.get(public_id=check_id).created_at
    answer = client.get(
        "/api/v1/reports/",
        {
            "from": f"{created:%Y-%m-%d}",
            "to": f"{timezone.now():%Y-%m-%d}",
            "tz": "UTC",
            "healthcheck": check_id,
        },
    )
    assert answer.status_code == 200, answer.content
    (check,) = answer.json()["healthchecks"]
    return check["availability"]


def downtime_bounds(check: Healthcheck) -> tuple[int, int]:
    """Return the fewest and most seconds the outage can count, from each region's results.

    A report counts downtime from the failing results that made the check down to the good
    ones that ended it (monitors.uptime.down_since, down_until): between the last region's first
    failure and the first region's first good result, and the first's failure and the last's.
    """
    failed, recovered = [], []
    for region in REGIONS:
        results = ProbeResult.objects.filter(healthcheck=check, region__slug=region).order_by("checked_at")
        first_failed = results.exclude(status="up").first()
        assert first_failed is not None, region
        failed.append(first_failed.checked_at)
        first_good = results.filter(status="up", checked_at__gt=first_failed.checked_at).first()
        assert first_good is not None, region
        recovered.append(first_good.checked_at)
    # Whole seconds, as the report answers them.
    return (
        int((min(recovered) - max(failed)).total_seconds()),
        int((max(recovered) - min(failed)).total_seconds()) + 1,
    )


def quick(client, type_name: str, config: dict[str, Any], *, interval: int = QUICK_INTERVAL) -> Healthcheck:
    """Create a check of the type through the API, in every region, with one recheck; make it due now."""
    created = client.post(
        CHECKS,
        {
            "name": f"the {type_name} check",
            "type": type_name,
            "config": config,
            "recheck_count": 1,
            "recheck_delay_seconds": 1,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert set(created.json()["regions"]) == REGIONS
    check = Healthcheck.objects.get(public_id=created.json()["id"])
    # Quick slots (a domain check's API minimum is an hour): the test's pace, not the rule's.
    Healthcheck.objects.filter(pk=check.pk).update(interval_seconds=interval)
    check.refresh_from_db()
    due_now(check)
    return check


def changes(check: Healthcheck) -> list[StatusChange]:
    return list(check.status_changes.order_by("id"))


def goes_down_and_up(target: Target, client, hook: Receiver) -> None:
    """Walk a check of ``target`` up, down and up again; assert what the alerts, page and report say."""
    type_name = target.type
    secret = alert_to(client, hook)
    check = quick(client, type_name, target.config, interval=target.interval)
    check_id = str(check.public_id)
    slug = page_of(client, check_id)

    walk_statuses(check, [("up", target.fail), ("down", lambda: None)])
    assert delivered(1)
    down_shown = shown(slug)
    opened = alerts(hook, secret)
    walk_statuses(check, [("down", target.recover), ("up", lambda: None)])
    assert delivered(2)
    up_shown = shown(slug)

    first_up, down, up = changes(check)
    assert [(c.from_status, c.to_status) for c in (first_up, down, up)] == [
        ("pending", "up"),
        ("up", "down"),
        ("down", "up"),
    ]
    assert set(down.failed_regions) == REGIONS
    assert set(down.failed_regions.values()) == {target.kind}
    assert target.reason in down.cause_reason
    ((alert,),) = [opened]
    assert alert["type"] == "incident.opened"
    assert alert["data"]["healthcheck"]["name"] == f"the {type_name} check"
    assert alert["data"]["cause"]["kind"] == target.kind
    assert target.reason in alert["data"]["cause"]["reason"]
    assert {region["region"] for region in alert["data"]["cause"]["regions"]} == REGIONS
    assert [body["type"] for body in alerts(hook, secret)] == ["incident.opened", "incident.resolved"]
    assert down_shown == ("Major outage (3 regions down)", "major_outage")
    assert up_shown == ("Operational", "operational")
    availability = report_of(client, check_id)
    assert availability["incidents"] == 1
    shortest, longest = downtime_bounds(check)
    assert shortest <= availability["downtime_seconds"] <= longest


@embedded
@pytest.mark.parametrize("type_name", sorted(TARGETS))
def test_each_active_type_goes_down_and_up_through_alerts_a_status_page_and_a_report(
    type_name, client, hook, settings, monkeypatch, tmp_path
):
    with open_target(type_name, monkeypatch=monkeypatch, settings=settings, tmp_path=tmp_path) as target:
        goes_down_and_up(target, client, hook)


def test_a_ping_check_goes_down_and_up_the_same_way_inside_a_network_namespace_of_its_own():
    """Run tests/monitors/ping_end_to_end.py in a namespace where unprivileged ICMP is allowed.

    Echoes need ``net.ipv4.ping_group_range`` to hold the worker's group, a setting of the
    network namespace: the machine's own must not decide the test (tests/probes/test_ping_check.py
    does the same). The namespace has only its loopback, so the run is on the embedded SQLite
    database, whatever DATABASE_URL this run has.
    """
    refusal = namespace_refusal()
    if refusal:
        unavailable(f"no network namespace for the ping test: {refusal}", switch=SERVICES_SWITCH)
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    done = subprocess.run(
        [*UNSHARE, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PING_MODULE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )

    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


# embedded's mark, written out: a live-server module restores by serialized rollback (tests/test_live_server_modules.py).
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_heartbeat_goes_down_when_late_and_up_on_its_next_ping_through_alerts_a_page_and_a_report(
    client, hook, live_server
):
    # From Python's clock, shifted in a CLOCK_OFFSET run as the webhook receiver's is: from the
    # machine's real time, the alerts' signatures looked 45 days old to the receiver.
    with time_machine.travel(datetime.now(UTC), tick=True) as traveller:
        secret = alert_to(client, hook)
        created = client.post(
            CHECKS,
            {"name": "nightly job", "type": "heartbeat", "config": {"schedule": {"period": 60}, "grace": 60}},
            format="json",
        )
        assert created.status_code == 201, created.content
        assert created.json()["regions"] == []
        check_id = created.json()["id"]
        slug = page_of(client, check_id)
        check = Healthcheck.objects.get(public_id=check_id)
        # The pings are real HTTP requests to the live server, at the path the API answered.
        ping = live_server.url + urlsplit(created.json()["ping_url"]).path

        def pinged() -> None:
            assert httpx.get(ping, timeout=10).text == "OK"

        pinged()
        walk_statuses(check, [("up", lambda: None)])
        # Late: past the period and the grace, with no ping.
        traveller.shift(timedelta(seconds=121))
        walk_statuses(check, [("down", lambda: None)])
        assert delivered(1)
        down_shown = shown(slug)
        opened = alerts(hook, secret)
        pinged()
        walk_statuses(check, [("up", lambda: None)])
        assert delivered(2)
        up_shown = shown(slug)
        availability = report_of(client, check_id)

    first_up, down, up = changes(check)
    assert [(c.from_status, c.to_status) for c in (first_up, down, up)] == [
        ("pending", "up"),
        ("up", "down"),
        ("down", "up"),
    ]
    assert down.failed_regions == {}
    assert down.cause_kind == "heartbeat_late"
    ((alert,),) = [opened]
    assert alert["type"] == "incident.opened"
    assert alert["data"]["cause"]["kind"] == "heartbeat_late"
    assert alert["data"]["cause"]["reason"].startswith("No ping since ")
    assert [body["type"] for body in alerts(hook, secret)] == ["incident.opened", "incident.resolved"]
    assert down_shown == ("Major outage", "major_outage")
    assert up_shown == ("Operational", "operational")
    assert availability["incidents"] == 1
    # A heartbeat's outage runs from when its ping was due to the ping that ended it, in whole seconds.
    late = (up.at - down.effective_at).total_seconds()
    assert int(late) <= availability["downtime_seconds"] <= int(late) + 1


@embedded
def test_a_tls_check_degraded_by_an_expiring_certificate_alerts_with_the_days_left(
    client, hook, settings, monkeypatch, tmp_path
):
    with open_target("tls", monkeypatch=monkeypatch, settings=settings, tmp_path=tmp_path) as target:
        secret = alert_to(client, hook)
        check = quick(client, "tls", target.config)

        # The default policy alerts on degraded (AlertPolicy.notify_on_degraded).
        walk_statuses(check, [("up", target.answers["expiring"]), ("degraded", lambda: None)])
        assert delivered(1)

    ((alert,),) = [alerts(hook, secret)]
    assert alert["type"] == "incident.opened"
    assert alert["data"]["incident"]["severity"] == "warning"
    assert alert["data"]["cause"]["kind"] == "certificate_expiring"
    assert "expires in 3 days" in alert["data"]["cause"]["reason"]
    assert "expires in 3 days" in alert["data"]["summary"]
