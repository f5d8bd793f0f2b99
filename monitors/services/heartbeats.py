"""Take heartbeat pings fast, and judge heartbeats on the beat: the status change goes to the same outbox.

A ping is one indexed read (the ping id), a rate-limit step, one INSERT and one UPDATE of the
narrow Heartbeat row: never a lock on the healthcheck row. The beat's judge
(:func:`heartbeats_judge`) takes the heartbeats pinged since it last looked or whose due-by has
passed, locks their healthchecks and applies :func:`probes.heartbeats.verdict`, writing a
StatusChange (or a CauseChange) like the recorder's: alerts, status pages and reports read them
as any other check's. ``effective_at`` is where the downtime really began or ended (the due-by
of a late heartbeat, the failing or recovering ping), since there are no results to bound it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F, Q

from monitors.errors import ServiceError
from monitors.models import CauseChange, Healthcheck, Heartbeat, Ping, StatusChange
from monitors.ratelimit import rate_take
from probes.checks import check_kind
from probes.checks.heartbeat import HeartbeatConfig
from probes.heartbeats import Ping as PingValue
from probes.heartbeats import PingKind, verdict
from probes.text import storable
from probes.types import Status

MAX_BODY_BYTES = 100 * 1024
PINGS_PER_MINUTE = 60


@dataclass(frozen=True, slots=True)
class PingAnswer:
    """What the ping endpoint answers: found (else 404) and whether the rate limit refused it."""

    found: bool
    limited: bool = False


def ping_record(
    *,
    ping_id: uuid.UUID,
    kind: PingKind,
    exit_status: int | None,
    body: bytes,
    source: str | None,
    user_agent: str,
    now: datetime,
) -> PingAnswer:
    """Store one ping of the heartbeat ``ping_id`` and mark it for the judge; no healthcheck lock."""
    row = Heartbeat.objects.filter(ping_id=ping_id).values_list("healthcheck_id", "last_start_at").first()
    if row is None:
        return PingAnswer(found=False)
    hc_id, last_start_at = row
    if rate_take(keys=[f"ping:{hc_id}"], limit=PINGS_PER_MINUTE, window=60):
        return PingAnswer(found=True, limited=True)
    text = storable(body[:MAX_BODY_BYTES].decode("utf-8", errors="replace"))
    duration = None
    if kind is not PingKind.START and last_start_at is not None and last_start_at <= now:
        duration = (now - last_start_at).total_seconds()
    with transaction.atomic():
        Ping.objects.create(
            healthcheck_id=hc_id,
            at=now,
            kind=kind.value,
            exit_status=exit_status,
            source=source,
            user_agent=user_agent,
            body=text,
            duration_seconds=duration,
        )
        Heartbeat.objects.filter(pk=hc_id).update(
            ping_count=F("ping_count") + 1, last_start_at=now if kind is PingKind.START else None
        )
    return PingAnswer(found=True)


def heartbeat_rotate(*, healthcheck: Healthcheck) -> Healthcheck:
    """Give the heartbeat a new ping id: the old URL answers 404 from now on."""
    if not Heartbeat.objects.filter(pk=healthcheck.pk).update(ping_id=uuid.uuid4()):
        raise ServiceError("type", "Only a heartbeat has a ping URL to rotate.")
    return healthcheck


def heartbeats_judge(*, now: datetime, limit: int = 1000) -> int:
    """Judge the heartbeats pinged since last judged or past their due-by; return how many."""
    ids = list(
        Heartbeat.objects.filter(Q(ping_count__gt=F("judged_count")) | Q(due_at__lte=now))
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    for hc_id in ids:
        _judge_one(hc_id, now)
    return len(ids)


def _judge_one(hc_id: int, now: datetime) -> None:
    with transaction.atomic():
        check = Healthcheck.objects.select_for_update().filter(pk=hc_id).first()
        if check is None:
            return
        state = Heartbeat.objects.get(pk=hc_id)
        seen = state.ping_count
        last = (
            Ping.objects.filter(healthcheck_id=hc_id)
            .exclude(kind=PingKind.START.value)
            .order_by("-at", "-id")
            .first()
        )
        config = check_kind(check.type).parse(check.config)
        if check.paused or not isinstance(config, HeartbeatConfig):
            Heartbeat.objects.filter(pk=hc_id).update(judged_count=seen, due_at=None)
            return
        found = verdict(
            schedule=config.schedule,
            grace=config.grace,
            max_run_seconds=config.max_run_seconds,
            last=None
            if last is None
            else PingValue(
                at=last.at,
                kind=PingKind(last.kind),
                exit_status=last.exit_status,
                body=last.body,
                duration_seconds=last.duration_seconds,
            ),
            now=now,
        )
        Heartbeat.objects.filter(pk=hc_id).update(judged_count=seen, due_at=found.due_at)
        kind = found.kind.value if found.kind else ""
        if found.status != check.status:
            StatusChange.objects.create(
                healthcheck_id=hc_id,
                at=now,
                from_status=check.status,
                to_status=found.status,
                reason=found.reason,
                cause_kind=kind,
                cause_reason=found.reason,
                cause_since=found.since if kind else None,
                effective_at=found.since if Status.DOWN in (found.status, check.status) else None,
            )
            Healthcheck.objects.filter(pk=hc_id).update(
                status=found.status,
                status_changed_at=now,
                cause_kind=kind,
                cause_reason=found.reason if kind else "",
                cause_since=found.since if kind else None,
            )
        elif kind and (kind != check.cause_kind or found.reason != check.cause_reason):
            if kind != check.cause_kind:
                CauseChange.objects.create(
                    healthcheck_id=hc_id,
                    at=now,
                    status=check.status,
                    from_kind=check.cause_kind,
                    to_kind=kind,
                    reason=found.reason,
                    previous_reason=check.cause_reason,
                )
            Healthcheck.objects.filter(pk=hc_id).update(
                cause_kind=kind, cause_reason=found.reason, cause_since=found.since
            )
