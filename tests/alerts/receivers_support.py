"""An organization's three kinds of receiver on loopback, read the way their owners read them.

A PagerDuty-shaped Events API v2 receiver (its events per dedup_key), a Standard Webhooks receiver
(every body verified by the ``standardwebhooks`` package before it is read) and an SMTP server
(aiosmtpd; each message parsed by the standard library's email parser). The tests of what a storm
and its digests look like from outside share them, on the recorder → consumer → sender path and on
the embedded worker.
"""

from __future__ import annotations

import email
import email.policy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from standardwebhooks.webhooks import Webhook

from alerts.channels.webhook import generate_secret
from alerts.models import Channel
from alerts.services import alert_policy_set, channel_create
from monitors.models import Organization
from tests.alerts.channel_support import Receiver, Reply, SmtpServer, serve

ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF"
ACCEPTED = Reply(
    status=202,
    body=b'{"status":"success","message":"Event processed","dedup_key":"x"}',
    headers=(("Content-Type", "application/json"),),
)


@dataclass
class Receivers:
    """The organization's email, webhook and PagerDuty channels, and what each receiver got."""

    pagerduty: Receiver
    webhook: Receiver
    secret: str
    smtp: SmtpServer
    channels: tuple[Channel, ...]

    def pagerduty_actions(self) -> dict[str, list[str]]:
        """Return PagerDuty's events by dedup_key, each key's actions in the order they arrived."""
        actions: dict[str, list[str]] = {}
        for got in self.pagerduty.received:
            assert got.path == "/v2/enqueue", got.path
            event = json.loads(got.body)
            assert event["routing_key"] == ROUTING_KEY
            actions.setdefault(event["dedup_key"], []).append(event["event_action"])
        return actions

    def pagerduty_events(self) -> list[dict[str, Any]]:
        return [json.loads(got.body) for got in self.pagerduty.received]

    def webhooks(self) -> list[dict[str, Any]]:
        """Return every webhook body, in order, once its Standard Webhooks signature checked out."""
        verifier = Webhook(self.secret)
        return [verifier.verify(got.body, got.headers) for got in self.webhook.received]

    def mails(self) -> list[EmailMessage]:
        """Return every message the SMTP server accepted, parsed."""
        return [
            email.message_from_bytes(content, policy=email.policy.default)  # type: ignore[misc]
            for _, _, content in self.smtp.handler.messages
        ]

    def mail_texts(self) -> list[tuple[str, str]]:
        """Return each message's subject and plain-text body."""
        shown = []
        for message in self.mails():
            part = message.get_body(preferencelist=("plain",))
            assert part is not None
            # A long, non-ASCII subject is folded right after "Subject:": unfolded, it keeps that space.
            shown.append((str(message["Subject"]).strip(), part.get_content()))
        return shown


@contextmanager
def organization_receivers(
    organization: Organization, *, webhook: Receiver, smtp: SmtpServer
) -> Iterator[Receivers]:
    """Give ``organization`` an email, a webhook and a PagerDuty channel (its default policy's) on loopback."""
    secret = generate_secret()
    with serve() as pagerduty:
        pagerduty.default = ACCEPTED
        channels = (
            channel_create(
                organization=organization,
                name="mail",
                kind=Channel.Kind.EMAIL,
                config={"recipients": ["oncall@acme.example"]},
            ),
            channel_create(
                organization=organization,
                name="hook",
                kind=Channel.Kind.WEBHOOK,
                config={"url": webhook.url(), "secret": secret},
            ),
            channel_create(
                organization=organization,
                name="pager",
                kind=Channel.Kind.PAGERDUTY,
                config={"routing_key": ROUTING_KEY, "events_url": pagerduty.url("/v2/enqueue")},
            ),
        )
        alert_policy_set(organization=organization, channels=list(channels))
        yield Receivers(pagerduty, webhook, secret, smtp, channels)


def use_loopback_receivers(settings: Any, smtp: SmtpServer) -> None:
    """Let alerts reach loopback receivers, email through the SMTP server."""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 5.0
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = smtp.port
    settings.EMAIL_USE_TLS = False
