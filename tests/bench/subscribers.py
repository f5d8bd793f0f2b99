"""Measure telling a page's email subscribers of an incident: the fan-out and the sending, through a real SMTP server.

``[DATABASE_URL=postgres://…] python tests/bench/subscribers.py [--subscribers 10000] [--json]``

Builds, inside one transaction that is rolled back at the end (nothing stays in the database), a
page with ``--subscribers`` confirmed email subscribers, publishes an incident, then runs what the
beat entry ``statuspages.notify_subscribers`` runs: the fan-out (one short transaction per
FANOUT_CHUNK subscribers) and the rounds of sending (ROUND_SIZE deliveries per round, each round's
mails over one SMTP connection) to an aiosmtpd server on loopback that accepts every message.
Prints the fan-out's time and transactions, the sending's time, rounds, SMTP sessions and
messages per second. No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

import django

django.setup()

from aiosmtpd.controller import Controller  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from monitors.models import Plan  # noqa: E402
from monitors.services import organization_create  # noqa: E402
from statuspages import services  # noqa: E402
from statuspages.models import NoticeDelivery, Subscriber  # noqa: E402
from statuspages.services import notices, sending  # noqa: E402


class Rollback(Exception):
    """End the benchmark's transaction so nothing it built stays."""


class Count:
    def __init__(self) -> None:
        self.messages = 0
        self.sessions = 0

    async def handle_EHLO(self, server, session, envelope, hostname, responses):  # type: ignore[no-untyped-def]
        self.sessions += 1
        session.host_name = hostname
        return responses

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.messages += 1
        return "250 OK"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(subscribers: int) -> dict[str, float]:
    # aiosmtpd logs every SMTP command at INFO: that, not the sending, would be measured.
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    counter = Count()
    controller = Controller(counter, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    figures: dict[str, float] = {}
    try:
        with transaction.atomic():
            now = timezone.now()
            stamp = int(time.time())
            organization = organization_create(slug=f"bench-{stamp}", plan=Plan.objects.get(slug="paid"))
            page = services.status_page_create(
                organization=organization, changes={"slug": f"bench-{stamp}", "title": "Bench"}
            )
            Subscriber.objects.bulk_create(
                (
                    Subscriber(
                        page=page, kind="email", email=f"s{i}@example.com", confirmed_at=now, created_at=now
                    )
                    for i in range(subscribers)
                ),
                batch_size=2000,
            )
            services.incident_create(
                page=page,
                changes={"title": "Slow answers"},
                body="We are looking into it.",
                now=timezone.now(),
            )
            started = time.perf_counter()
            transactions = 0
            while notices.notices_fan_out(now=timezone.now()):
                transactions += 1
            figures["fanout_seconds"] = time.perf_counter() - started
            figures["fanout_transactions"] = transactions
            figures["deliveries"] = NoticeDelivery.objects.filter(notice__page=page).count()
            started = time.perf_counter()
            rounds = 0
            while sending.deliveries_send():
                rounds += 1
            elapsed = time.perf_counter() - started
            figures["send_seconds"] = elapsed
            figures["send_rounds"] = rounds
            figures["smtp_sessions"] = counter.sessions
            figures["messages"] = counter.messages
            figures["messages_per_second"] = counter.messages / elapsed if elapsed else 0.0
            raise Rollback
    except Rollback:
        pass
    finally:
        controller.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = run(args.subscribers)
    if args.json:
        print(json.dumps(figures))
        return
    for name, value in figures.items():
        print(f"{name:>22}: {value:.2f}" if isinstance(value, float) else f"{name:>22}: {value}")


if __name__ == "__main__":
    main()
