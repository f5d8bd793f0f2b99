"""Add, change, test and remove alert channels, and set alert policies.

A config from a caller goes through its kind's parser (every problem a ServiceError naming the
field, ``config.url``), then through the address guard for every URL the kind sends to, before
it is stored encrypted. Secrets are write-only: a field sent back in its masked form keeps its
stored value (alerts.channels.unmask). A webhook without a secret gets one generated, which
the caller sees once.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from alerts.channels import (
    Attempt,
    ChannelConfigError,
    ChannelKind,
    channel_kind,
    channel_test_alert,
    generate_secret,
    target_problem,
    unmask,
    webhook,
)
from alerts.models import AlertPolicy, Channel
from alerts.services.sending import send_alert
from monitors.errors import ServiceError
from monitors.models import Healthcheck, Organization
from monitors.secrets import SecretUnreadable
from monitors.services import audit_record
from probes.connection import origin_of_uri

# At most this many channels per organization: each one is a destination every alert may fan out to.
MAX_CHANNELS = 100


@dataclass(frozen=True)
class ChannelSaved:
    """A channel as stored, the secret generated for it (shown once), and the test its re-enabling sent."""

    channel: Channel
    generated_secret: str = ""
    test: Attempt | None = None


def channel_add(
    *, organization: Organization, name: str, kind: str, config: Mapping[str, Any], enabled: bool = True
) -> ChannelSaved:
    """Validate and store a new channel; a webhook sent without a secret gets one (returned once)."""
    channel_type = _kind(kind)
    raw = dict(config)
    generated = ""
    if channel_type.name == webhook.KIND.name and not raw.get("secret"):
        generated = raw["secret"] = generate_secret()
    parsed = _validated(channel_type, raw)
    with transaction.atomic():
        if Channel.objects.select_for_update().filter(organization=organization).count() >= MAX_CHANNELS:
            raise ServiceError("name", f"An organization has at most {MAX_CHANNELS} channels.")
        try:
            with transaction.atomic():
                channel = channel_create(
                    organization=organization,
                    name=_name(name),
                    kind=Channel.Kind(channel_type.name),
                    config=channel_type.dump(parsed),
                    enabled=enabled,
                )
            _audit(channel, "channel.created", after=channel_snapshot(channel))
        except IntegrityError:
            raise ServiceError("name", "Another channel of this organization has this name.") from None
    return ChannelSaved(channel, generated_secret=generated)


def channel_snapshot(channel: Channel) -> dict[str, Any]:
    """Return a channel as the audit log keeps it: its config as the API shows it, every secret masked."""
    kind = channel_kind(channel.kind)
    try:
        config: dict[str, Any] | None = kind.masked(kind.parse(channel.config))
    except (SecretUnreadable, ChannelConfigError):
        config = None  # unreadable here: nothing of it is copied
    return {"name": channel.name, "kind": channel.kind, "config": config, "enabled": channel.enabled}


def _audit(channel: Channel, action: str, **sides: Any) -> None:
    audit_record(
        organization=channel.organization_id,
        action=action,
        target_type="channel",
        target_id=channel.public_id,
        target_name=channel.name,
        **sides,
    )


def channel_change(
    *,
    channel: Channel,
    now: datetime,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
    enabled: bool | None = None,
) -> ChannelSaved:
    """Change a channel's name, config or switch; enabling a disabled one sends it a test at once."""
    channel_type = _kind(channel.kind)
    before = channel_snapshot(channel)
    changes: list[str] = ["updated_at"]
    if name is not None:
        channel.name = _name(name)
        changes.append("name")
    if config is not None:
        stored = _stored(channel, channel_type)
        parsed = _validated(channel_type, unmask(channel_type, stored, config))
        _secrets_stay_home(channel_type, stored, parsed, config)
        channel.config = channel_type.dump(parsed)
        changes.append("config_encrypted")
    reenabled = enabled is True and not channel.enabled
    if enabled is not None:
        channel.enabled = enabled
        channel.disabled_reason = "" if enabled else channel.disabled_reason
        changes += ["enabled", "disabled_reason"]
    try:
        with transaction.atomic():
            channel.save(update_fields=changes)
            _audit(channel, "channel.updated", before=before, after=channel_snapshot(channel))
    except IntegrityError:
        raise ServiceError("name", "Another channel of this organization has this name.") from None
    return ChannelSaved(channel, test=channel_test(channel=channel, now=now) if reenabled else None)


def channel_delete(*, channel: Channel) -> None:
    """Remove a channel; its deliveries go with it, and policies stop naming it."""
    with transaction.atomic():
        _audit(channel, "channel.deleted", before=channel_snapshot(channel))
        channel.delete()


def channel_rotate_secret(*, channel: Channel, now: datetime) -> str:
    """Give a webhook a new signing secret; the old one keeps signing for a day. Return the new one (shown once)."""
    if channel.kind != webhook.KIND.name:
        raise ServiceError("kind", "Only webhook channels have a signing secret.")
    rotated = webhook.rotate(_stored(channel, webhook.KIND), now=now)
    channel.config = webhook.KIND.dump(rotated)
    with transaction.atomic():
        channel.save(update_fields=["config_encrypted", "updated_at"])
        # Both sides masked: the event says a rotation happened, never what either secret is.
        _audit(channel, "channel.secret_rotated")
    return rotated.secret


def channel_test(*, channel: Channel, now: datetime) -> Attempt:
    """Send the channel a test alert now (a ``channel.test`` event) and return the attempt."""
    channel_type = _kind(channel.kind)
    alert = channel_test_alert(
        event_id=str(uuid.uuid4()), organization=channel.organization.name, occurred_at=now
    )
    return send_alert(channel.kind, _stored(channel, channel_type), alert)


def _secrets_stay_home(
    channel_type: ChannelKind[Any], stored: Any, parsed: Any, incoming: Mapping[str, Any]
) -> None:
    """Refuse a stored secret (sent back masked) that would go with the channel to another origin.

    A PagerDuty routing key travels in every event's body: kept while the events URL moves to
    another host, it would reach that host. As for a healthcheck's headers, a new origin needs
    the secrets sent again.
    """
    shown = channel_type.masked(stored)
    kept = [
        name for name in channel_type.secret_fields if name in incoming and incoming[name] == shown.get(name)
    ]
    if not kept:
        return
    before = {origin_of_uri(url) for url in channel_type.targets(stored)}
    after = {origin_of_uri(url) for url in channel_type.targets(parsed)}
    if before != after:
        raise ServiceError(
            f"config.{kept[0]}",
            "The channel now sends to another host: send this secret again (a stored one stays with its host).",
        )


def _kind(name: str) -> ChannelKind[Any]:
    try:
        return channel_kind(name)
    except ChannelConfigError as exc:
        raise ServiceError("kind", exc.message) from None


def _stored(channel: Channel, channel_type: ChannelKind[Any]) -> Any:
    """Return the channel's stored config, parsed (monitors.secrets.SecretUnreadable when no key opens it)."""
    try:
        return channel_type.parse(channel.config)
    except ChannelConfigError as exc:
        raise ServiceError(
            "config", f"The stored config no longer reads ({exc.field}: {exc.message}); send it whole."
        ) from None


def _validated(channel_type: ChannelKind[Any], raw: Mapping[str, Any]) -> Any:
    """Return the parsed config once every URL it sends to passes the address guard."""
    try:
        parsed = channel_type.parse(raw)
    except ChannelConfigError as exc:
        raise ServiceError(exc.field, exc.message) from None
    for url in channel_type.targets(parsed):
        problem = target_problem(
            url,
            allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
            nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
        )
        if problem:
            raise ServiceError(_url_field(channel_type, parsed, url), problem)
    return parsed


def _url_field(channel_type: ChannelKind[Any], parsed: Any, url: str) -> str:
    stored = channel_type.dump(parsed)
    named = next((f"config.{name}" for name, value in stored.items() if value == url), None)
    if named is None and len(stored) == 1:
        # A URL the kind derived from its one field (the host an Apprise plugin connects to).
        named = f"config.{next(iter(stored))}"
    return named or "config"


def _name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned:
        raise ServiceError("name", "A channel needs a name.")
    if len(cleaned) > 128:
        raise ServiceError("name", "Keep the name within 128 characters.")
    return cleaned


def channel_create(
    *, organization: Organization, name: str, kind: Channel.Kind, config: dict[str, Any], enabled: bool = True
) -> Channel:
    """Store a channel; ``config`` is the kind's validated config, stored encrypted."""
    channel = Channel(organization=organization, name=name, kind=kind, enabled=enabled)
    channel.config = config
    channel.save(force_insert=True)
    return channel


def alert_policy_set(
    *,
    organization: Organization,
    healthcheck: Healthcheck | None = None,
    channels: Sequence[Channel],
    escalation_channels: Sequence[Channel] = (),
    **switches: Any,
) -> AlertPolicy:
    """Create or replace the healthcheck's policy (the organization's default when ``healthcheck`` is None).

    ``switches``: notify_on_degraded, notify_on_recovery, notify_on_tool_changes,
    reminder_minutes, escalation_minutes.
    """
    policy, _ = AlertPolicy.objects.update_or_create(
        organization=organization, healthcheck=healthcheck, defaults=switches
    )
    policy.channels.set(channels)
    policy.escalation_channels.set(escalation_channels)
    return policy


# Bounds of a policy's minutes: a reminder at most daily, an escalation within a week.
MAX_REMINDER_MINUTES = 24 * 60
MAX_ESCALATION_MINUTES = 7 * 24 * 60


def alert_policy_put(
    *,
    organization: Organization,
    healthcheck: Healthcheck | None,
    channel_ids: Sequence[uuid.UUID],
    escalation_channel_ids: Sequence[uuid.UUID] = (),
    notify_on_degraded: bool = True,
    notify_on_recovery: bool = True,
    notify_on_tool_changes: bool = True,
    reminder_minutes: int | None = None,
    escalation_minutes: int | None = None,
) -> AlertPolicy:
    """Validate and store a policy (the organization's default when ``healthcheck`` is None), replacing any."""
    channels = _channels_of(organization, channel_ids, field="channels")
    escalation = _channels_of(organization, escalation_channel_ids, field="escalation_channels")
    _minutes("reminder_minutes", reminder_minutes, MAX_REMINDER_MINUTES)
    _minutes("escalation_minutes", escalation_minutes, MAX_ESCALATION_MINUTES)
    if escalation_minutes is not None and not escalation:
        raise ServiceError(
            "escalation_channels", "Name the channels an unacknowledged incident escalates to."
        )
    with transaction.atomic():
        existing = AlertPolicy.objects.filter(organization=organization, healthcheck=healthcheck).first()
        before = alert_policy_snapshot(existing) if existing is not None else None
        policy = alert_policy_set(
            organization=organization,
            healthcheck=healthcheck,
            channels=channels,
            escalation_channels=escalation,
            notify_on_degraded=notify_on_degraded,
            notify_on_recovery=notify_on_recovery,
            notify_on_tool_changes=notify_on_tool_changes,
            reminder_minutes=reminder_minutes,
            escalation_minutes=escalation_minutes,
        )
        action = "alert_policy.created" if before is None else "alert_policy.updated"
        _audit_policy(organization, healthcheck, action, before=before, after=alert_policy_snapshot(policy))
        return policy


def alert_policy_snapshot(policy: AlertPolicy) -> dict[str, Any]:
    """Return a policy as the audit log keeps it: its switches and its channels by name."""
    return {
        "channels": sorted(policy.channels.values_list("name", flat=True)),
        "escalation_channels": sorted(policy.escalation_channels.values_list("name", flat=True)),
        "notify_on_degraded": policy.notify_on_degraded,
        "notify_on_recovery": policy.notify_on_recovery,
        "notify_on_tool_changes": policy.notify_on_tool_changes,
        "reminder_minutes": policy.reminder_minutes,
        "escalation_minutes": policy.escalation_minutes,
    }


def _audit_policy(
    organization: Organization, healthcheck: Healthcheck | None, action: str, **sides: Any
) -> None:
    # A policy is logged under its healthcheck (the organization's default under the organization).
    audit_record(
        organization=organization,
        action=action,
        target_type="alert_policy",
        target_id=healthcheck.public_id if healthcheck is not None else organization.public_id,
        target_name=f"{healthcheck.name}'s policy" if healthcheck is not None else "Default policy",
        **sides,
    )


def alert_policy_delete(*, organization: Organization, healthcheck: Healthcheck | None) -> bool:
    """Remove a policy (a healthcheck's then follows the organization's default); return whether there was one."""
    with transaction.atomic():
        existing = AlertPolicy.objects.filter(organization=organization, healthcheck=healthcheck).first()
        if existing is None:
            return False
        _audit_policy(
            organization, healthcheck, "alert_policy.deleted", before=alert_policy_snapshot(existing)
        )
        existing.delete()
    return True


def _channels_of(organization: Organization, ids: Sequence[uuid.UUID], *, field: str) -> list[Channel]:
    wanted = list(dict.fromkeys(ids))
    found = {
        channel.public_id: channel
        for channel in Channel.objects.filter(organization=organization, public_id__in=wanted)
    }
    for channel_id in wanted:
        if channel_id not in found:
            # The same words whether it does not exist or is another organization's.
            raise ServiceError(field, f"Channel {channel_id} not found.")
    return [found[channel_id] for channel_id in wanted]


def _minutes(field: str, value: int | None, most: int) -> None:
    if value is not None and not 1 <= value <= most:
        raise ServiceError(field, f"Give 1 to {most} minutes, or null for none.")
