"""Alerts through the real process model: beat, the default worker (outbox consumer and sender),
region workers, PostgreSQL and Redis, an official-SDK server, a webhook receiver and an SMTP server.

The SDK server goes down: after the rechecks each channel gets exactly one "down" alert; it comes
back: each gets exactly one "recovered", and so again across a Redis restart in the middle of the
outage. The sender's worker killed in the middle of a delivery: the delivery is sent again (the
same webhook-id: receivers drop the double), never lost. A receiver answering 500 five times gets
the alert on the sixth attempt; one answering 410 has its channel disabled and the owners told.
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import tempfile
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from e2e_stack import INTERVAL, SLOW_SECONDS, Stack, require_services
from standardwebhooks.webhooks import Webhook

from tests.alerts.channel_support import Receiver, Reply, _Collect, _free_port, serve

pytestmark = [pytest.mark.services, pytest.mark.timeout(240)]

RECHECKS = {"recheck_count": 2, "recheck_delay_seconds": 1}
SLOT_SECONDS = INTERVAL + SLOW_SECONDS + 10

# Seconds a delivery attempt may take in this stack: short, so a kill lands inside one and the
# claim's lease (alerts.services.sending.round_lease: 32 s here) lapses soon after.
SEND_TIMEOUT = "2"

# Seconds before a failed delivery's first retry (then doubling): five failures fit in ~30 s.
RETRY_FIRST = "1"

# Run inside `manage.py shell`: a webhook channel named E2E_NAME (and, with E2E_MAIL, an email
# channel), which the e2e organization's default policy then sends to alone; with E2E_OWNER, a
# user of that address owns the organization. Prints the webhook's signing secret.
CREATE_CHANNELS = """
import json, os
from django.contrib.auth import get_user_model
from alerts.services import alert_policy_set, channel_add
from monitors.models import Membership, Organization, Plan, Region
from monitors.services import organization_create

plan, _ = Plan.objects.get_or_create(
    slug="e2e", defaults={"name": "E2E", "max_healthchecks": 100, "min_interval_seconds": 1}
)
plan.allowed_regions.set(Region.objects.all())
org = Organization.objects.filter(slug="e2e").first() or organization_create(slug="e2e", plan=plan)
name = os.environ["E2E_NAME"]
channels = [channel_add(organization=org, name=name, kind="webhook", config={"url": os.environ["E2E_HOOK"]})]
if os.environ.get("E2E_MAIL"):
    channels.append(
        channel_add(organization=org, name=name + "-mail", kind="email", config={"recipients": [os.environ["E2E_MAIL"]]})
    )
alert_policy_set(organization=org, channels=[saved.channel for saved in channels])
if os.environ.get("E2E_OWNER"):
    owner, _ = get_user_model().objects.get_or_create(
        username=os.environ["E2E_OWNER"], defaults={"email": os.environ["E2E_OWNER"]}
    )
    Membership.objects.get_or_create(user=owner, organization=org, defaults={"role": Membership.Role.OWNER})
print(json.dumps(channels[0].generated_secret))
"""


class Mailbox:
    """A real SMTP server on loopback, collecting what it is sent."""

    def __init__(self) -> None:
        self.handler = _Collect()
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=_free_port())

    @property
    def messages(self) -> list[Message]:
        return [
            email.message_from_bytes(content, policy=email.policy.default)
            for _, _, content in self.handler.messages
        ]


@pytest.fixture(scope="module")
def receivers() -> Iterator[tuple[Receiver, Mailbox]]:
    mailbox = Mailbox()
    mailbox.controller.start()
    try:
        with serve() as hook:
            yield hook, mailbox
    finally:
        mailbox.controller.stop()


@pytest.fixture(scope="module")
def stack(receivers: tuple[Receiver, Mailbox]) -> Iterator[Stack]:
    admin_url = require_services()
    _, mailbox = receivers
    # The stack's processes take their environment from this one as the stack is made.
    settings = {
        "EMAIL_URL": f"smtp://127.0.0.1:{mailbox.controller.port}",
        "UPTIMY_ALERT_SEND_TIMEOUT": SEND_TIMEOUT,
        "UPTIMY_ALERT_RETRY_FIRST_SECONDS": RETRY_FIRST,
    }
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        running = Stack(Path(tempfile.mkdtemp(prefix="uptimy-e2e-alerts-")), admin_url)
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    try:
        running.start()
        yield running
        running.supervise("the end of the module")
    finally:
        running.close()


def test_a_server_down_then_up_sends_each_channel_one_alert_and_one_recovery(
    stack: Stack, receivers: tuple[Receiver, Mailbox]
) -> None:
    hook, mailbox = receivers
    out = stack.manage(
        "shell",
        "-c",
        CREATE_CHANNELS,
        env={"E2E_HOOK": hook.url(), "E2E_NAME": "hook", "E2E_MAIL": "ops@e2e.example"},
    )
    secret = json.loads(out.strip().splitlines()[-1])
    [hc_id] = stack.create_healthchecks(1, name="alerted", uri=stack.mcp.url + "/mcp", rules=RECHECKS)

    def status() -> str:
        return str(stack.query("SELECT status FROM monitors_healthcheck WHERE id = %s", [hc_id])[0].status)

    def webhook_types() -> list[str]:
        return [kind for kind, _ in _events_of(hook, "alerted-0")]

    stack.wait_for("the check is up", lambda: status() == "up", timeout=2 * SLOT_SECONDS)
    stack.mcp.kill()
    stack.wait_for("the check is down", lambda: status() == "down", timeout=2 * SLOT_SECONDS)
    stack.wait_for(
        "both channels have the down alert",
        lambda: webhook_types() == ["incident.opened"] and len(mailbox.messages) == 1,
        timeout=SLOT_SECONDS,
    )
    stack.mcp.start().wait_ready()
    stack.wait_for("the check is up again", lambda: status() == "up", timeout=2 * SLOT_SECONDS)
    stack.wait_for(
        "both channels have the recovery",
        lambda: len(webhook_types()) >= 2 and len(mailbox.messages) >= 2,
        timeout=SLOT_SECONDS,
    )
    # A few more ticks: nothing else may arrive (no degraded, no doubles).
    ticks = stack.query("SELECT count(*) AS n FROM monitors_proberesult WHERE healthcheck_id = %s", [hc_id])[
        0
    ].n
    stack.wait_for(
        "two more slots ran",
        lambda: (
            stack.query("SELECT count(*) AS n FROM monitors_proberesult WHERE healthcheck_id = %s", [hc_id])[
                0
            ].n
            >= ticks + 4
        ),
        timeout=3 * SLOT_SECONDS,
    )

    assert webhook_types() == ["incident.opened", "incident.resolved"]
    for got in hook.received:
        Webhook(secret).verify(got.body, got.headers)
    assert len({webhook_id for _, webhook_id in _events_of(hook, "alerted-0")}) == 2
    subjects = [str(message["Subject"]).strip() for message in mailbox.messages]
    assert len(subjects) == 2, subjects
    assert subjects[0].startswith("[Uptimy] DOWN: alerted-0"), subjects
    assert subjects[1].startswith("[Uptimy] RECOVERED: alerted-0"), subjects
    assert all(message["To"] == "ops@e2e.example" for message in mailbox.messages)


def test_a_sender_killed_mid_delivery_sends_it_again_with_the_same_webhook_id(stack: Stack) -> None:
    with serve() as hook:
        hook.answer(Reply(hang=True))  # the first message: the receiver holds it until the kill
        stack.manage("shell", "-c", CREATE_CHANNELS, env={"E2E_HOOK": hook.url(), "E2E_NAME": "held"})
        # Nothing listens there: the check goes straight to down, and its alert to the held receiver.
        refused = f"http://127.0.0.1:{_free_port()}/mcp"
        [hc_id] = stack.create_healthchecks(1, name="killed", uri=refused, rules=RECHECKS)

        # Woken by the request itself: the kill lands well inside the attempt's 2 s.
        assert hook.wait_received(1, timeout=3 * SLOT_SECONDS), "the alert never reached the receiver"
        stack.workers["default"].kill()
        hook.released.set()
        stack.workers["default"].start().wait_ready()

        def deliveries() -> list[Any]:
            return stack.query(
                "SELECT d.id, d.state, d.attempts FROM alerts_delivery d"
                " JOIN alerts_notification n ON n.id = d.notification_id"
                " JOIN alerts_incident i ON i.id = n.incident_id WHERE i.healthcheck_id = %s",
                [hc_id],
            )

        stack.wait_for(
            "the delivery is sent again and delivered",
            lambda: [row.state for row in deliveries()] == ["delivered"],
            timeout=90,
        )

    [delivery] = deliveries()
    recorded = stack.query("SELECT ok FROM alerts_deliveryattempt WHERE delivery_id = %s", [delivery.id])
    # Claimed twice; the killed attempt was never recorded, the second one delivered.
    assert (delivery.attempts, [row.ok for row in recorded]) == (2, [True])
    assert len(hook.received) == 2
    assert len({got.headers["webhook-id"] for got in hook.received}) == 1, hook.received
    assert {json.loads(got.body)["type"] for got in hook.received} == {"incident.opened"}


def _deliveries(stack: Stack, hc_id: int) -> list[Any]:
    return stack.query(
        "SELECT d.id, d.state, d.attempts, c.enabled, c.disabled_reason FROM alerts_delivery d"
        " JOIN alerts_notification n ON n.id = d.notification_id"
        " JOIN alerts_incident i ON i.id = n.incident_id"
        " JOIN alerts_channel c ON c.id = d.channel_id WHERE i.healthcheck_id = %s",
        [hc_id],
    )


def _events_of(hook: Receiver, name: str) -> list[tuple[str, str]]:
    """Return one check's events as (type, webhook-id): other tests' checks share the SDK server."""
    mine = []
    for got in hook.received:
        body = json.loads(got.body)
        if body["data"].get("healthcheck", {}).get("name") == name:
            mine.append((body["type"], got.headers["webhook-id"]))
    return mine


def _down_check(stack: Stack, name: str) -> int:
    """Create a check of a port nothing listens on: it goes straight to down, and alerts."""
    refused = f"http://127.0.0.1:{_free_port()}/mcp"
    [hc_id] = stack.create_healthchecks(1, name=name, uri=refused, rules=RECHECKS)
    return int(hc_id)


def test_a_receiver_failing_five_times_gets_the_alert_on_the_sixth_attempt(stack: Stack) -> None:
    with serve() as hook:
        hook.answer(*[Reply(status=500, body=b"busy")] * 5)
        out = stack.manage("shell", "-c", CREATE_CHANNELS, env={"E2E_HOOK": hook.url(), "E2E_NAME": "flaky"})
        secret = json.loads(out.strip().splitlines()[-1])
        hc_id = _down_check(stack, "retried")

        stack.wait_for(
            "the sixth attempt delivers the alert",
            lambda: [row.state for row in _deliveries(stack, hc_id)] == ["delivered"],
            timeout=3 * SLOT_SECONDS + 60,
        )

    [delivery] = _deliveries(stack, hc_id)
    recorded = stack.query(
        "SELECT ok, status_code FROM alerts_deliveryattempt WHERE delivery_id = %s ORDER BY at", [delivery.id]
    )
    assert [(row.ok, row.status_code) for row in recorded] == [(False, 500)] * 5 + [(True, 200)]
    assert len(hook.received) == 6
    assert len({got.headers["webhook-id"] for got in hook.received}) == 1
    for got in hook.received:
        Webhook(secret).verify(got.body, got.headers)


def test_a_receiver_answering_410_disables_its_channel_and_tells_the_owners(
    stack: Stack, receivers: tuple[Receiver, Mailbox]
) -> None:
    _, mailbox = receivers
    with serve() as hook:
        hook.answer(Reply(status=410, body=b"gone"))
        stack.manage(
            "shell",
            "-c",
            CREATE_CHANNELS,
            env={"E2E_HOOK": hook.url(), "E2E_NAME": "gone", "E2E_OWNER": "owner@e2e.example"},
        )
        hc_id = _down_check(stack, "refused")

        def disabled_notice() -> list[Message]:
            return [
                message for message in mailbox.messages if "'gone' was disabled" in str(message["Subject"])
            ]

        stack.wait_for("the owner is told", disabled_notice, timeout=3 * SLOT_SECONDS)

    [delivery] = _deliveries(stack, hc_id)
    assert (delivery.state, delivery.attempts, delivery.enabled) == ("given_up", 1, False)
    assert "410" in delivery.disabled_reason
    [notice] = disabled_notice()
    assert notice["To"] == "owner@e2e.example"
    assert "410" in notice.get_body(("plain",)).get_content()
    assert len(hook.received) == 1


def test_a_redis_restart_in_the_middle_of_an_outage_still_sends_one_alert_and_one_recovery(
    stack: Stack,
) -> None:
    with serve() as hook:
        stack.manage("shell", "-c", CREATE_CHANNELS, env={"E2E_HOOK": hook.url(), "E2E_NAME": "restarted"})
        [hc_id] = stack.create_healthchecks(
            1, name="through-restart", uri=stack.mcp.url + "/mcp", rules=RECHECKS
        )
        name = "through-restart-0"

        def status() -> str:
            return str(
                stack.query("SELECT status FROM monitors_healthcheck WHERE id = %s", [hc_id])[0].status
            )

        def events() -> list[tuple[str, str]]:
            return _events_of(hook, name)

        stack.wait_for("the check is up", lambda: status() == "up", timeout=2 * SLOT_SECONDS)
        stack.mcp.kill()
        stack.restart_redis()
        stack.wait_for("the check is down", lambda: status() == "down", timeout=3 * SLOT_SECONDS)
        stack.wait_for(
            "the down alert arrives",
            lambda: "incident.opened" in [kind for kind, _ in events()],
            timeout=SLOT_SECONDS,
        )
        stack.mcp.start().wait_ready()
        stack.wait_for("the check is up again", lambda: status() == "up", timeout=2 * SLOT_SECONDS)
        stack.wait_for(
            "the recovery arrives",
            lambda: "incident.resolved" in [kind for kind, _ in events()],
            timeout=SLOT_SECONDS,
        )

    kinds = [kind for kind, _ in events()]
    # A region left silent by the restart may make the first verdict degraded, escalated to down:
    # what may never happen is a lost or doubled event.
    assert kinds in (
        ["incident.opened", "incident.resolved"],
        ["incident.opened", "incident.escalated", "incident.resolved"],
    ), kinds
    assert len({webhook_id for _, webhook_id in events()}) == len(kinds)
