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

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q

from alerts.channels import channel_kind
from alerts.models import DIGEST_SEQUENCE, Delivery, DeliveryAttempt, Notification
from probes.text import storable

SEND_LEASE = timedelta(minutes=2)
MAX_ERROR = 500


# How many candidates a claim reads per delivery it may take, so that one channel at its rate
# does not starve the others in the same round.
CANDIDATES_PER_CLAIM = 4
RATE_WINDOW = timedelta(minutes=1)


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
        # A few more than asked: those of a channel at its rate are passed over, not claimed.
        candidates = list(
            Delivery.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(state__in=Delivery.UNFINISHED, next_attempt_at__lte=now, channel__enabled=True)
            .exclude(Exists(same_incident))
            .exclude(Exists(digest_holding_it))
            .exclude(Q(sequence=DIGEST_SEQUENCE) & Exists(earlier_digest))
            .order_by("next_attempt_at", "id")
            .values_list("id", "channel_id", "channel__kind")[: limit * CANDIDATES_PER_CLAIM]
        )
        ids = _within_rates(candidates, now=now, limit=limit)
        Delivery.objects.filter(id__in=ids).update(
            state=Delivery.State.SENDING, next_attempt_at=now + lease, attempts=F("attempts") + 1
        )
    return ids


def _within_rates(candidates: Sequence[tuple[int, int, str]], *, now: datetime, limit: int) -> list[int]:
    """Return the candidates to claim, in order, leaving out a channel's beyond its kind's rate per minute.

    A channel's use is its attempts in the last minute and its deliveries being sent now; what
    is left out stays due and is claimed once the minute moves on.
    """
    channels = {channel_id for _, channel_id, _ in candidates}
    if not channels:
        return []
    used: Counter[int] = Counter(
        dict(
            DeliveryAttempt.objects.filter(at__gt=now - RATE_WINDOW, delivery__channel_id__in=channels)
            .values_list("delivery__channel_id")
            .annotate(count=Count("id"))
            .values_list("delivery__channel_id", "count")
        )
    )
    used.update(
        dict(
            Delivery.objects.filter(state=Delivery.State.SENDING, channel_id__in=channels)
            .values_list("channel_id")
            .annotate(count=Count("id"))
            .values_list("channel_id", "count")
        )
    )
    taken: list[int] = []
    for delivery_id, channel_id, kind in candidates:
        if used[channel_id] >= channel_kind(kind).rate_per_minute:
            continue
        used[channel_id] += 1
        taken.append(delivery_id)
        if len(taken) == limit:
            break
    return taken


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
                # Senders' sentences may quote a receiver (an error page's title, an SMTP reply):
                # made storable here, once for every kind, as recording does for targets' text.
                error=storable(record.error, MAX_ERROR),
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
