"""Send subscribers' deliveries: claim with a lease, send (emails on one SMTP connection, webhooks on a few threads), record.

The same ideas as alerts' ledger, smaller:

- :func:`deliveries_claim` takes due deliveries with SKIP LOCKED on PostgreSQL (plain on
  SQLite, whose writers are one at a time) and marks them sending with a lease. A subscriber's
  deliveries go in order: one is not claimed while an earlier one of the same subscriber is
  unfinished, so "resolved" never overtakes "created".
- A sender that dies after its claim leaves the rows sending; once the lease lapses the next
  round claims them again (the receiver may see one twice, always with the same webhook-id or
  Message-ID, and never loses it). A row recorded sent is never claimed again.
- A failure is retried after a backed-off, jittered delay (the receiver's Retry-After if longer)
  until the kind's horizon; a permanent refusal (a webhook's 410, a mailbox that does not
  exist, a private address) gives up and disables the subscriber with the reason.

Each attempt is bounded (UPTIMY_NOTICE_SEND_TIMEOUT) and a round claims at most ROUND_SIZE, so
the lease (twice a round's worst case) is never shorter than a live round.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import smtplib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from monitors.secrets import SecretUnreadable
from probes.text import storable
from statuspages import webhooks
from statuspages.models import Notice, NoticeDelivery, Subscriber
from statuspages.render import notices as words
from statuspages.services.subscribers import confirm_url, unsubscribe_url

logger = logging.getLogger(__name__)

ROUND_SIZE = 100
SEND_THREADS = 8
MIN_LEASE = timedelta(seconds=10)
FIRST_RETRY = timedelta(seconds=30)
LONGEST_RETRY = timedelta(hours=1)
HORIZON = {Subscriber.Kind.EMAIL: timedelta(days=1), Subscriber.Kind.WEBHOOK: timedelta(days=3)}
MAX_ERROR = 500
_MESSAGE_DOMAIN = "status.uptimy"

State = NoticeDelivery.State


def _timeout() -> float:
    return float(settings.UPTIMY_NOTICE_SEND_TIMEOUT)


def round_lease(limit: int) -> timedelta:
    """Return how long a round's claim lasts: twice its slowest (every webhook thread's share timing out, and the SMTP session)."""
    slowest = (math.ceil(limit / SEND_THREADS) + 2) * _timeout()
    return max(MIN_LEASE, timedelta(seconds=2 * slowest))


def deliveries_claim(*, now: datetime, limit: int = ROUND_SIZE, lease: timedelta | None = None) -> list[int]:
    """Claim up to ``limit`` due deliveries whose turn it is for their subscriber; return their ids."""
    earlier = NoticeDelivery.objects.filter(
        subscriber_id=OuterRef("subscriber_id"), id__lt=OuterRef("id"), state__in=NoticeDelivery.UNFINISHED
    )
    with transaction.atomic():
        ids = list(
            NoticeDelivery.objects.select_for_update(skip_locked=True)
            .filter(state__in=NoticeDelivery.UNFINISHED, next_attempt_at__lte=now)
            .exclude(Exists(earlier))
            .order_by("next_attempt_at", "id")
            .values_list("id", flat=True)[:limit]
        )
        NoticeDelivery.objects.filter(id__in=ids).update(
            state=State.SENDING,
            next_attempt_at=now + (lease or round_lease(limit)),
            attempts=F("attempts") + 1,
        )
    return ids


@dataclass(frozen=True)
class Outcome:
    """One attempt of a claimed delivery as recorded."""

    delivery_id: int
    subscriber_id: int
    ok: bool
    error: str = ""
    permanent: bool = False
    retry_at: datetime | None = None


def deliveries_send(*, now: datetime | None = None, limit: int = ROUND_SIZE) -> int:
    """Claim up to ``limit`` due deliveries, send them, record every attempt; return how many were claimed."""
    claimed_at = now or timezone.now()
    ids = deliveries_claim(now=claimed_at, limit=limit)
    if not ids:
        return 0
    claimed = list(
        NoticeDelivery.objects.filter(id__in=ids)
        .select_related("notice", "notice__page", "subscriber")
        .order_by("id")
    )
    mails = [d for d in claimed if d.subscriber.kind == Subscriber.Kind.EMAIL]
    hooks = [d for d in claimed if d.subscriber.kind == Subscriber.Kind.WEBHOOK]
    outcomes: list[Outcome] = []
    pool = ThreadPoolExecutor(max_workers=SEND_THREADS, thread_name_prefix="notice") if hooks else None
    try:
        futures = [(d, pool.submit(_post, d)) for d in hooks] if pool else []
        outcomes += _send_mails(mails)
        outcomes += [_outcome(d, future.result()) for d, future in futures]
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    deliveries_record(outcomes=outcomes)
    return len(ids)


# --- email ---------------------------------------------------------------------------------------


def message_for(delivery: NoticeDelivery, connection: Any = None) -> EmailMultiAlternatives:
    """Return the delivery's email: text and HTML, the RFC 8058 one-click unsubscribe headers, a stable Message-ID."""
    notice, subscriber, page = delivery.notice, delivery.subscriber, delivery.notice.page
    unsubscribe = unsubscribe_url(subscriber=subscriber, page=page)
    confirm = (
        confirm_url(subscriber=subscriber, page=page)
        if notice.kind == Notice.Kind.SUBSCRIPTION_CONFIRM
        else ""
    )
    mail = words.email(notice.kind, notice.data, words.Links(unsubscribe=unsubscribe, confirm=confirm))
    headers = {
        "Message-ID": f"<{delivery.public_id}@{_MESSAGE_DOMAIN}>",
        "Auto-Submitted": "auto-generated",
        "X-Uptimy-Notice": notice.kind,
    }
    if notice.kind != Notice.Kind.SUBSCRIPTION_CONFIRM:
        # RFC 8058: an https link a mail client POSTs "List-Unsubscribe=One-Click" to, no cookie, no form.
        headers["List-Unsubscribe"] = f"<{unsubscribe}>"
        headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
        headers["Precedence"] = "bulk"
        incident = (notice.data.get("incident") or {}).get("id")
        if incident:
            # Every mail of one incident refers to it, so mail clients thread them.
            headers["References"] = f"<incident-{incident}@{_MESSAGE_DOMAIN}>"
    message = EmailMultiAlternatives(
        subject=mail.subject, body=mail.text, to=[subscriber.email], headers=headers, connection=connection
    )
    message.attach_alternative(mail.html, "text/html")
    return message


def _send_mails(deliveries: Sequence[NoticeDelivery]) -> list[Outcome]:
    """Send the round's mails over one connection; a connection that breaks fails the rest of the round (retried)."""
    if not deliveries:
        return []
    outcomes: list[Outcome] = []
    try:
        connection = get_connection(timeout=_timeout())
        connection.open()
    except (smtplib.SMTPException, OSError) as exc:
        words_ = f"The mail server could not be reached: {type(exc).__name__}"
        return [_outcome(d, webhooks.Posted(ok=False, error=words_)) for d in deliveries]
    try:
        for index, delivery in enumerate(deliveries):
            try:
                connection.send_messages([message_for(delivery, connection)])
            except smtplib.SMTPRecipientsRefused as exc:
                codes = [code for code, _ in exc.recipients.values()]
                outcomes.append(
                    _outcome(
                        delivery,
                        webhooks.Posted(
                            ok=False,
                            status_code=codes[0] if codes else None,
                            error=f"The mail server refused the address (SMTP {', '.join(map(str, codes))})",
                            permanent=bool(codes) and all(code >= 500 for code in codes),
                        ),
                    )
                )
            except smtplib.SMTPResponseException as exc:
                posted = webhooks.Posted(ok=False, error=f"The mail server answered SMTP {exc.smtp_code}")
                outcomes.append(_outcome(delivery, posted))
            except (smtplib.SMTPException, OSError) as exc:
                # The session broke (disconnected, timed out): the rest wait for the next round.
                posted = webhooks.Posted(
                    ok=False, error=f"The mail server connection failed: {type(exc).__name__}"
                )
                outcomes += [_outcome(d, posted) for d in deliveries[index:]]
                break
            else:
                outcomes.append(_outcome(delivery, webhooks.Posted(ok=True)))
    finally:
        with contextlib.suppress(smtplib.SMTPException, OSError):
            connection.close()
    return outcomes


# --- webhooks ------------------------------------------------------------------------------------


def _post(delivery: NoticeDelivery) -> webhooks.Posted:
    try:
        config = delivery.subscriber.config
    except SecretUnreadable:
        return webhooks.Posted(
            ok=False, error="The webhook's stored settings can't be decrypted with this server's keys"
        )
    notice = delivery.notice
    body = words.webhook_body(notice.kind, notice.at, notice.data)
    try:
        return webhooks.post_signed(
            url=config["url"],
            secret=config["secret"],
            msg_id=str(delivery.public_id),
            body=body,
            timeout=_timeout(),
            allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
            nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
        )
    except Exception:
        # The sender never raises for a receiver; this is a bug of ours, which must not lose the delivery.
        logger.exception("posting a status page notice failed")
        return webhooks.Posted(
            ok=False, error="Uptimy failed to send this (an error inside Uptimy); it will try again"
        )


# --- recording -----------------------------------------------------------------------------------


def retry_delay(attempts: int, *, retry_after: float | None = None, jitter: float = 0.5) -> timedelta:
    """Return the wait before the next attempt: 30 s doubling to an hour, ±20 % jitter, at least Retry-After."""
    base: timedelta = min(FIRST_RETRY * 2 ** min(max(attempts - 1, 0), 20), LONGEST_RETRY)
    delay = base * (0.8 + 0.4 * jitter)
    if retry_after is not None:
        delay = max(delay, timedelta(seconds=retry_after))
    return delay


def _outcome(delivery: NoticeDelivery, posted: webhooks.Posted) -> Outcome:
    at = timezone.now()
    retry_at = None
    if not posted.ok and not posted.permanent:
        delay = retry_delay(delivery.attempts, retry_after=posted.retry_after, jitter=random.random())  # noqa: S311
        horizon = delivery.created_at + HORIZON[Subscriber.Kind(delivery.subscriber.kind)]
        retry_at = at + delay if at + delay <= horizon else None
    return Outcome(delivery.pk, delivery.subscriber_id, posted.ok, posted.error, posted.permanent, retry_at)


def deliveries_record(*, outcomes: Sequence[Outcome]) -> None:
    """Record a round's attempts in one transaction; a row already sent stays sent whatever a later attempt says."""
    if not outcomes:
        return
    now = timezone.now()
    with transaction.atomic():
        open_rows = NoticeDelivery.objects.exclude(state=State.SENT)
        sent = [o.delivery_id for o in outcomes if o.ok]
        if sent:
            open_rows.filter(id__in=sent).update(state=State.SENT, sent_at=now, last_error="")
        for outcome in outcomes:
            if outcome.ok:
                continue
            error = storable(outcome.error, MAX_ERROR)
            if outcome.retry_at is not None:
                open_rows.filter(pk=outcome.delivery_id).update(
                    state=State.FAILED, next_attempt_at=outcome.retry_at, last_error=error
                )
            else:
                open_rows.filter(pk=outcome.delivery_id).update(state=State.GIVEN_UP, last_error=error)
            if outcome.permanent:
                # Nothing more goes to a receiver that refused for good; the owner sees why.
                Subscriber.objects.filter(pk=outcome.subscriber_id, disabled_reason="").update(
                    disabled_reason=error
                )
                NoticeDelivery.objects.filter(
                    subscriber_id=outcome.subscriber_id, state__in=[State.PENDING, State.FAILED]
                ).update(state=State.GIVEN_UP, last_error=error)
