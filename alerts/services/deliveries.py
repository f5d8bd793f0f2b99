"""Claim deliveries for a sender and record what each attempt gave; the sending itself is the channels'.

The claim (:func:`deliveries_claim`) takes due deliveries with SKIP LOCKED on PostgreSQL, so
senders never take the same one, and marks them sending with a lease: a sender that dies
leaves its deliveries to be claimed again once the lease lapses (the receiver may see one
twice, always with the same webhook-id, and never loses it).

The ordering rule: on one channel, an incident's deliveries go one after the other, in the
order they were made. A delivery is not claimed while an earlier unfinished delivery on its
channel is of the same incident, or is a digest holding the incident; digests on a channel
go in order too. So a resolve never reaches a receiver before the open it closes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q

from alerts.models import DIGEST_SEQUENCE, Delivery, DeliveryAttempt, Notification

SEND_LEASE = timedelta(minutes=2)
MAX_ERROR = 500


def deliveries_claim(*, now: datetime, limit: int = 100, lease: timedelta = SEND_LEASE) -> list[int]:
    """Claim up to ``limit`` due deliveries whose turn it is on their channel; return their ids, oldest due first."""
    unfinished = {"state__in": Delivery.UNFINISHED}
    # Three EXISTS, not one with ORs: each is one probe of an index (delivery_channel_incident,
    # or the member's incident), where the ORs made PostgreSQL scan the channel's deliveries.
    same_incident = Delivery.objects.filter(
        channel_id=OuterRef("channel_id"),
        incident_id=OuterRef("incident_id"),
        id__lt=OuterRef("id"),
        **unfinished,
    )
    digest_holding_it = Notification.objects.filter(
        incident_id=OuterRef("incident_id"),
        digest__deliveries__channel_id=OuterRef("channel_id"),
        digest__deliveries__id__lt=OuterRef("id"),
        digest__deliveries__state__in=Delivery.UNFINISHED,
    )
    earlier_digest = Delivery.objects.filter(
        channel_id=OuterRef("channel_id"),
        incident__isnull=True,
        sequence=DIGEST_SEQUENCE,
        id__lt=OuterRef("id"),
        **unfinished,
    )
    with transaction.atomic():
        ids = list(
            Delivery.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(state__in=Delivery.UNFINISHED, next_attempt_at__lte=now, channel__enabled=True)
            .exclude(Exists(same_incident))
            .exclude(Exists(digest_holding_it))
            .exclude(Q(sequence=DIGEST_SEQUENCE) & Exists(earlier_digest))
            .order_by("next_attempt_at", "id")
            .values_list("id", flat=True)[:limit]
        )
        Delivery.objects.filter(id__in=ids).update(
            state=Delivery.State.SENDING, next_attempt_at=now + lease, attempts=F("attempts") + 1
        )
    return ids


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One try of a claimed delivery, as recorded: delivered (ok), failed (tried again at ``retry_at``) or given up."""

    delivery_id: int
    at: datetime
    ok: bool
    duration_ms: float
    status_code: int | None = None
    error: str = ""
    retry_at: datetime | None = None

    @property
    def state(self) -> Delivery.State:
        if self.ok:
            return Delivery.State.DELIVERED
        return Delivery.State.FAILED if self.retry_at is not None else Delivery.State.GIVEN_UP


def delivery_attempt_record(
    *,
    delivery_id: int,
    at: datetime,
    ok: bool,
    duration_ms: float,
    status_code: int | None = None,
    error: str = "",
    retry_at: datetime | None = None,
) -> Delivery.State:
    """Record one attempt of a claimed delivery: delivered, failed (tried again at ``retry_at``) or given up."""
    record = AttemptRecord(delivery_id, at, ok, duration_ms, status_code, error, retry_at)
    delivery_attempts_record(attempts=[record])
    return record.state


def delivery_attempts_record(*, attempts: Sequence[AttemptRecord]) -> None:
    """Record a round's attempts in one transaction: a few statements, not two per delivery.

    A delivery already delivered (a second sender took it after the first one's lease lapsed,
    and got there first) stays delivered whatever a later attempt says.
    """
    if not attempts:
        return
    with transaction.atomic():
        DeliveryAttempt.objects.bulk_create(
            DeliveryAttempt(
                delivery_id=record.delivery_id,
                at=record.at,
                ok=record.ok,
                status_code=record.status_code,
                duration_ms=record.duration_ms,
                error=record.error[:MAX_ERROR],
            )
            for record in attempts
        )
        pending = Delivery.objects.exclude(state=Delivery.State.DELIVERED)
        delivered = [record for record in attempts if record.ok]
        if delivered:
            pending.filter(id__in=[record.delivery_id for record in delivered]).update(
                state=Delivery.State.DELIVERED, delivered_at=max(record.at for record in delivered)
            )
        given_up = [record.delivery_id for record in attempts if record.state is Delivery.State.GIVEN_UP]
        if given_up:
            pending.filter(id__in=given_up).update(state=Delivery.State.GIVEN_UP)
        for record in attempts:
            if record.state is Delivery.State.FAILED:
                pending.filter(pk=record.delivery_id).update(
                    state=Delivery.State.FAILED, next_attempt_at=record.retry_at
                )
