"""Alerts end to end on the embedded default: an official SDK server goes down and comes back."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from alerts.channels.webhook import generate_secret
from alerts.models import Channel, Delivery
from alerts.services import alert_policy_set, channel_create
from monitors.models import Healthcheck
from monitors.services import healthcheck_create
from probes.checks.mcp import MCP
from tests.alerts.channel_support import Receiver
from tests.monitors.conftest import start_sdk_peer, stop
from tests.monitors.worker_support import embedded, quick_check, run_worker, status_changes, walk_statuses


@embedded
def test_a_server_down_then_up_sends_one_opened_and_one_resolved_webhook(org, receiver: Receiver, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    secret = generate_secret()
    hook = channel_create(
        organization=org,
        name="hook",
        kind=Channel.Kind.WEBHOOK,
        config={"url": receiver.url(), "secret": secret},
    )
    alert_policy_set(organization=org, channels=[hook])
    server, url = start_sdk_peer("stateful")
    port = urlsplit(url).port

    def create(uri: str, **rules: object) -> Healthcheck:
        healthcheck = healthcheck_create(
            organization=org, name="Docs MCP", check_type=MCP, config={"uri": uri}, now=timezone.now()
        )
        Healthcheck.objects.filter(pk=healthcheck.pk).update(**rules)
        return healthcheck

    healthcheck = quick_check(lambda uri, now, **rules: create(uri, **rules), url)

    def restart() -> None:
        nonlocal server
        server, _ = start_sdk_peer("stateful", port=port)

    try:
        walk_statuses(healthcheck, [("up", lambda: stop(server)), ("down", restart), ("up", lambda: None)])
        # The worker runs the consumer and the sender every tick: wait for both messages.
        assert run_worker(lambda _: Delivery.objects.filter(state=Delivery.State.DELIVERED).count() == 2)
    finally:
        stop(server)

    assert status_changes(healthcheck) == [("pending", "up"), ("up", "down"), ("down", "up")]
    types = []
    for got in receiver.received:
        Webhook(secret).verify(got.body, got.headers)
        types.append(json.loads(got.body)["type"])
    assert types == ["incident.opened", "incident.resolved"]
    opened = json.loads(receiver.received[0].body)
    assert opened["data"]["healthcheck"]["name"] == "Docs MCP"
