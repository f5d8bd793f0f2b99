"""Send claimed deliveries through their channel's kind and record what each attempt gave.

A round (:func:`deliveries_send`) claims due deliveries (alerts.services.deliveries: SKIP
LOCKED, a lease, the per-incident order), builds each one's :class:`alerts.channels.Alert` from
the notification as it was decided (once: the first build is stored on the delivery, and every
retry resends it, so one ``webhook-id`` always carries the same body), sends them at once on a few threads (a sender never touches
the database: it is pure, alerts.channels), and records the round's attempts in one
transaction:

- delivered;
- failed, tried again after a backed-off, jittered delay (``alerts.rules.retry_delay``) that
  honours the receiver's Retry-After, unless that passes the kind's horizon (chat 1 h, webhook
  3 days): then given up;
- given up at once on a permanent refusal (a webhook's 410, a revoked PagerDuty key, a config
  that no longer reads): the channel is disabled with the reason, and the organization's owners
  are told by email.

Every delay, short or long, is the delivery's ``next_attempt_at``, which the next round (every
tick) claims: no delay lives only in a broker or a process, so a restart loses no retry.
"""

from __future__ import annotations

import logging
import math
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from alerts import metrics
from alerts.channels import (
    Alert,
    Attempt,
    Cause,
    ChannelConfigError,
    EventType,
    HealthcheckRef,
    IncidentInfo,
    Notice,
    RegionFailure,
    ToolInputs,
    ToolsChange,
    channel_kind,
)
from alerts.channels.stored import StoredAlertUnreadable, alert_document, alert_from_document
from alerts.links import acknowledge_url
from alerts.models import Channel, Delivery, Incident, Notification
from alerts.rules import NotificationKind, retry_delay
from alerts.selectors import digest_entries
from alerts.services.deliveries import AttemptRecord, deliveries_claim, delivery_attempts_record
from monitors.models import Membership
from monitors.secrets import SecretUnreadable
from monitors.services import audit_record
from probes.text import storable

logger = logging.getLogger(__name__)

# Deliveries one round sends at once: each waits on a remote for up to the send timeout.
SEND_THREADS = 8
# Deliveries one round claims: a round takes at most ceil(ROUND_SIZE / SEND_THREADS) timeouts.
ROUND_SIZE = 64
# The shortest claim: a sender that dies leaves its deliveries to another after this.
MIN_LEASE = timedelta(seconds=10)


@dataclass(frozen=True)
class _Job:
    """One claimed delivery, ready to send: what the sender needs, and what recording needs."""

    delivery_id: int
    channel_id: int
    kind: str
    config: Any
    alert: Alert
    created_at: datetime
    attempts: int


def deliveries_send(*, now: datetime | None = None, limit: int = ROUND_SIZE) -> int:
    """Claim up to ``limit`` due deliveries, send them, record every attempt; return how many were claimed."""
    claimed_at = now or timezone.now()
    ids = deliveries_claim(now=claimed_at, limit=limit, lease=round_lease(limit))
    if not ids:
        return 0
    jobs: list[_Job] = []
    records: list[AttemptRecord] = []
    refusals: dict[int, str] = {}
    kinds: dict[int, str] = {}
    occurred: dict[int, datetime] = {}
    # A round's deliveries often share a channel: its config is decrypted and parsed once.
    configs: dict[int, Any] = {}
    first_built: list[Delivery] = []
    for delivery in _claimed(ids):
        channel = delivery.channel
        kinds[delivery.pk] = channel.kind
        occurred[delivery.pk] = delivery.notification.at
        if channel.pk not in configs:
            configs[channel.pk] = channel_config(channel)
        config = configs[channel.pk]
        if isinstance(config, Unsendable):
            records.append(
                AttemptRecord(delivery.pk, timezone.now(), ok=False, duration_ms=0.0, error=config.reason)
            )
            refusals[channel.pk] = config.reason
            continue
        alert = _stored_alert(delivery)
        if alert is None:
            alert = alert_of(
                delivery.notification,
                delivery_public_id=delivery.public_id,
                channel_id=channel.pk,
                now=claimed_at,
            )
            delivery.payload = alert_document(alert)
            first_built.append(delivery)
        jobs.append(
            _Job(delivery.pk, channel.pk, channel.kind, config, alert, delivery.created_at, delivery.attempts)
        )
    # Kept before anything is sent: a retry, even after this sender died mid-send, resends the
    # very alert the receiver may already have seen.
    Delivery.objects.bulk_update(first_built, ["payload"])
    if jobs:
        with ThreadPoolExecutor(max_workers=min(SEND_THREADS, len(jobs)), thread_name_prefix="send") as pool:
            futures = {pool.submit(_send, job): job for job in jobs}
            for future in as_completed(futures):
                job, attempt = futures[future], future.result()
                records.append(_record_of(job, attempt))
                if attempt.permanent:
                    refusals[job.channel_id] = attempt.error or "The receiver refused for good"
    # One transaction for the round's attempts. A sender that dies before it leaves them claimed:
    # another takes them once the lease lapses (a receiver may see one twice, never loses it).
    delivery_attempts_record(attempts=records)
    metrics.observe_attempts(
        (kinds[record.delivery_id], _RESULTS[record.state], occurred.get(record.delivery_id), record.at)
        for record in records
    )
    for channel_id, reason in refusals.items():
        channel_disable(channel_id=channel_id, reason=reason, now=timezone.now())
    return len(ids)


# What the metrics call each outcome of an attempt.
_RESULTS = {
    Delivery.State.DELIVERED: "delivered",
    Delivery.State.FAILED: "retry",
    Delivery.State.GIVEN_UP: "given_up",
}


def round_lease(limit: int) -> timedelta:
    """Return how long a round's claim lasts: twice its slowest (every thread's share timing out).

    Another sender may take the deliveries only after it, so a live sender is never doubled,
    and a dead one's are sent again minutes later at worst (64 deliveries at the default 10 s
    timeout: 160 s), never lost.
    """
    slowest = math.ceil(limit / SEND_THREADS) * float(settings.UPTIMY_ALERT_SEND_TIMEOUT)
    return max(MIN_LEASE, timedelta(seconds=2 * slowest))


def _claimed(ids: Sequence[int]) -> list[Delivery]:
    return list(
        Delivery.objects.filter(id__in=ids)
        .select_related("channel", "notification", "notification__organization", "notification__incident")
        .order_by("id")
    )


def _stored_alert(delivery: Delivery) -> Alert | None:
    """Return the alert a delivery first carried, None when it was never built (or can't be read)."""
    if delivery.payload is None:
        return None
    try:
        return alert_from_document(delivery.payload)
    except StoredAlertUnreadable:
        logger.warning("delivery %s: its stored alert can't be read; built again", delivery.pk)
        return None


@dataclass(frozen=True)
class Unsendable:
    """Why a channel's stored config can never be sent with: a sentence without the config."""

    reason: str


def channel_config(channel: Channel) -> Any:
    """Return the channel's stored config, parsed by its kind, or Unsendable saying why it can't be."""
    try:
        return channel_kind(channel.kind).parse(channel.config)
    except SecretUnreadable:
        return Unsendable("The channel's stored settings can't be decrypted with this server's keys")
    except ChannelConfigError as exc:
        return Unsendable(f"The channel's stored settings are no longer valid ({exc.field}: {exc.message})")


def send_alert(kind: str, config: Any, alert: Alert) -> Attempt:
    """Send ``alert`` through a channel of ``kind`` with this server's timeout, guard and DNS; never raise."""
    started = time.perf_counter()
    try:
        return channel_kind(kind).send(
            config,
            alert,
            timeout=float(settings.UPTIMY_ALERT_SEND_TIMEOUT),
            allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
            nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
        )
    except Exception:
        # Senders never raise for a remote; this is a bug of ours, which must not lose the delivery.
        logger.exception("sending through a %s channel failed", kind)
        return Attempt(
            ok=False,
            duration=time.perf_counter() - started,
            error="Uptimy failed to send this (an error inside Uptimy); it will try again",
        )


def _send(job: _Job) -> Attempt:
    return send_alert(job.kind, job.config, job.alert)


def _record_of(job: _Job, attempt: Attempt) -> AttemptRecord:
    """Return the attempt as recorded: delivered, failed until its backed-off retry, or given up."""
    at = timezone.now()
    retry_at = None
    if not attempt.ok and not attempt.permanent:
        delay = retry_delay(
            job.attempts,
            retry_after=attempt.retry_after,
            jitter=random.random(),  # noqa: S311
            first=timedelta(seconds=settings.UPTIMY_ALERT_RETRY_FIRST_SECONDS),
        )
        horizon = job.created_at + channel_kind(job.kind).retry_horizon
        retry_at = at + delay if at + delay <= horizon else None
    return AttemptRecord(
        job.delivery_id,
        at,
        ok=attempt.ok,
        duration_ms=attempt.duration * 1000,
        status_code=attempt.status_code,
        error=attempt.error,
        retry_at=retry_at,
    )


def channel_disable(*, channel_id: int, reason: str, now: datetime) -> bool:
    """Disable a channel that refused for good, say why, and tell the organization's owners; return whether it was enabled."""
    with transaction.atomic():
        changed = Channel.objects.filter(pk=channel_id, enabled=True).update(
            enabled=False, disabled_reason=storable(reason, 500), updated_at=now
        )
        if changed:
            channel = Channel.objects.get(pk=channel_id)
            audit_record(
                organization=channel.organization_id,
                action="channel.disabled",
                target_type="channel",
                target_id=channel.public_id,
                target_name=channel.name,
                before={"enabled": True},
                after={"enabled": False, "disabled_reason": channel.disabled_reason},
                now=now,
            )
    if changed:
        _tell_owners(channel_id, reason)
    return bool(changed)


def _tell_owners(channel_id: int, reason: str) -> None:
    channel = Channel.objects.select_related("organization").get(pk=channel_id)
    owners = list(
        Membership.objects.filter(organization=channel.organization, role=Membership.Role.OWNER)
        .exclude(user__email="")
        .values_list("user__email", flat=True)
    )
    if not owners:
        return
    try:
        send_mail(
            subject=f"Uptimy: alert channel {channel.name!r} was disabled",
            message=(
                f"Uptimy stopped sending alerts to the channel {channel.name!r} ({channel.kind}) of "
                f"{channel.organization.name}, because its receiver refused for good:\n\n{reason}\n\n"
                "Fix the channel and enable it again; until then its alerts are not sent."
            ),
            from_email=None,
            recipient_list=owners,
            fail_silently=False,
        )
    except Exception as exc:  # the channel is disabled either way; this is a courtesy
        logger.warning("channel %s disabled; telling its owners failed: %s", channel_id, type(exc).__name__)


# --- The alert a delivery carries -------------------------------------------------------------


def alert_of(
    notification: Notification, *, delivery_public_id: uuid.UUID, channel_id: int, now: datetime
) -> Alert:
    """Return what ``notification`` says to one channel, as the pure senders take it."""
    kind = EventType(notification.kind)
    if kind is EventType.INCIDENTS_DIGEST:
        members = digest_entries(digest=notification, channel_id=channel_id)
        incidents = {
            incident.pk: incident
            for incident in Incident.objects.filter(id__in=[m.incident_id for m in members if m.incident_id])
        }
        notices = tuple(
            _notice(
                NotificationKind(m.kind),
                m.details,
                incidents.get(m.incident_id or 0),
                now,
                event=EventType(m.kind),
            )
            for m in members
        )
    else:
        notices = (
            _notice(NotificationKind(notification.kind), notification.details, notification.incident, now),
        )
    return Alert(
        event_type=kind,
        event_id=str(delivery_public_id),
        occurred_at=notification.at,
        organization=notification.organization.name,
        notices=notices,
        incidents_link=_url("/api/v1/incidents/"),
    )


def _notice(
    kind: NotificationKind,
    details: Mapping[str, Any],
    incident: Incident | None,
    now: datetime,
    *,
    event: EventType | None = None,
) -> Notice:
    healthcheck = details.get("healthcheck") or {}
    healthcheck_id = str(healthcheck.get("id", ""))
    ref = HealthcheckRef(
        id=healthcheck_id,
        name=str(healthcheck.get("name", "")),
        status=_status_of(kind, details, incident),
        link=_url(f"/api/v1/healthchecks/{healthcheck_id}/") if healthcheck_id else "",
    )
    acknowledge = ""
    if incident is not None and incident.resolved_at is None and incident.acknowledged_at is None:
        acknowledge = acknowledge_url(incident_public_id=incident.public_id, now=now)
    return Notice(
        healthcheck=ref,
        incident=_incident_info(incident, details),
        cause=_cause(details.get("cause"), incident),
        tools=_tools(details) if kind is NotificationKind.TOOLS_CHANGED else None,
        acknowledge_link=acknowledge,
        event=event,
    )


def _status_of(kind: NotificationKind, details: Mapping[str, Any], incident: Incident | None) -> str:
    if kind is NotificationKind.TOOLS_CHANGED:
        return "up"
    if kind is NotificationKind.RESOLVED:
        resolution = details.get("resolution", "recovered")
        return "up" if resolution == "recovered" else str(resolution)
    if isinstance(details.get("to"), str):
        return str(details["to"])
    if incident is not None and incident.severity == "warning":
        return "degraded"
    return "down"


def _incident_info(incident: Incident | None, details: Mapping[str, Any]) -> IncidentInfo | None:
    if incident is None:
        return None
    if incident.resolved_at is not None:
        status = "resolved"
    elif incident.acknowledged_at is not None:
        status = "acknowledged"
    else:
        status = "open"
    duration = details.get("duration_seconds")
    return IncidentInfo(
        id=str(incident.public_id),
        status=status,
        severity=incident.severity,
        opened_at=incident.opened_at,
        acknowledged_at=incident.acknowledged_at,
        acknowledged_by=incident.acknowledged_by,
        resolved_at=incident.resolved_at,
        resolution=incident.resolution,
        duration_seconds=float(duration) if isinstance(duration, int | float) else None,
    )


def _cause(cause: object, incident: Incident | None) -> Cause | None:
    """Return the cause frozen into a notification: the healthcheck API's cause, with each region's sentence.

    A notification made before causes kept their start and regions' sentences falls back to the
    incident's opening and the cause's own sentence.
    """
    if not isinstance(cause, Mapping) or (not cause.get("kind") and not cause.get("reason")):
        return None
    regions = dict(cause.get("regions") or {})
    reasons = dict(cause.get("region_reasons") or {})
    reason = str(cause.get("reason", ""))
    kind = str(cause.get("kind", ""))
    since = _moment(cause.get("since")) or (incident.opened_at if incident is not None else None)
    return Cause(
        kind=kind,
        reason=reason,
        regions=tuple(
            # Without the region's own sentence, the cause's stands for a region failing the same way.
            RegionFailure(
                str(slug), str(failed), str(reasons.get(slug) or (reason if failed == kind else ""))
            )
            for slug, failed in sorted(regions.items())
        ),
        missing_tools=tuple(str(tool) for tool in cause.get("missing_tools") or ()),
        since=since,
    )


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _tools(details: Mapping[str, Any]) -> ToolsChange:
    stricter = details.get("new_required_inputs") or {}
    return ToolsChange(
        removed=tuple(str(tool) for tool in details.get("removed") or ()),
        gained_required_inputs=tuple(
            ToolInputs(str(tool), tuple(str(name) for name in inputs))
            for tool, inputs in dict(stricter).items()
        ),
    )


def _url(path: str) -> str:
    return str(settings.UPTIMY_PUBLIC_URL).rstrip("/") + path
