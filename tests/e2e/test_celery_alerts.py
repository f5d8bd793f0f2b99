"""Alerts through the real process model: beat, the default worker (outbox consumer and sender),
region workers, PostgreSQL and Redis, an official-SDK server, a webhook receiver and an SMTP server.

The SDK server goes down: after the rechecks each channel gets exactly one "down" alert; it comes
back: each gets exactly one "recovered".
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

import pytest
from aiosmtpd.controller import Controller
from e2e_stack import INTERVAL, SLOW_SECONDS, Stack, require_services
from standardwebhooks.webhooks import Webhook

from tests.alerts.channel_support import Receiver, _Collect, _free_port, serve

pytestmark = [pytest.mark.services, pytest.mark.timeout(240)]

RECHECKS = {"recheck_count": 2, "recheck_delay_seconds": 1}
SLOT_SECONDS = INTERVAL + SLOW_SECONDS + 10

# Run inside `manage.py shell`: the e2e organization's webhook and email channels, its default
# policy sending to both; prints the webhook's signing secret.
CREATE_CHANNELS = """
import json, os
from alerts.services import alert_policy_set, channel_add
from monitors.models import Organization, Plan, Region
from monitors.services import organization_create

plan, _ = Plan.objects.get_or_create(
    slug="e2e", defaults={"name": "E2E", "max_healthchecks": 100, "min_interval_seconds": 1}
)
plan.allowed_regions.set(Region.objects.all())
org = Organization.objects.filter(slug="e2e").first() or organization_create(slug="e2e", plan=plan)
hook = channel_add(organization=org, name="hook", kind="webhook", config={"url": os.environ["E2E_HOOK"]})
mail = channel_add(organization=org, name="mail", kind="email", config={"recipients": ["ops@e2e.example"]})
alert_policy_set(organization=org, channels=[hook.channel, mail.channel])
print(json.dumps(hook.generated_secret))
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
    before = os.environ.get("EMAIL_URL")
    os.environ["EMAIL_URL"] = f"smtp://127.0.0.1:{mailbox.controller.port}"
    try:
        running = Stack(Path(tempfile.mkdtemp(prefix="uptimy-e2e-alerts-")), admin_url)
    finally:
        if before is None:
            del os.environ["EMAIL_URL"]
        else:
            os.environ["EMAIL_URL"] = before
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
    out = stack.manage("shell", "-c", CREATE_CHANNELS, env={"E2E_HOOK": hook.url()})
    secret = json.loads(out.strip().splitlines()[-1])
    [hc_id] = stack.create_healthchecks(1, name="alerted", uri=stack.mcp.url + "/mcp", rules=RECHECKS)

    def status() -> str:
        return str(stack.query("SELECT status FROM monitors_healthcheck WHERE id = %s", [hc_id])[0].status)

    def webhook_types() -> list[str]:
        return [json.loads(got.body)["type"] for got in hook.received]

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
        lambda: len(hook.received) >= 2 and len(mailbox.messages) >= 2,
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
    assert len({got.headers["webhook-id"] for got in hook.received}) == 2
    subjects = [str(message["Subject"]).strip() for message in mailbox.messages]
    assert len(subjects) == 2, subjects
    assert subjects[0].startswith("[Uptimy] DOWN: alerted-0"), subjects
    assert subjects[1].startswith("[Uptimy] RECOVERED: alerted-0"), subjects
    assert all(message["To"] == "ops@e2e.example" for message in mailbox.messages)
