"""Write the audit log (one event per change, in the change's transaction) and prune it past retention."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from monitors.audit import Actor, current_actor
from monitors.models import ApiKey, AuditEvent, Organization, Plan
from monitors.secrets import MASK
from monitors.timestamps import iso_or_none

# Keys whose value is a secret whatever the entity: a last line behind each snapshot's own
# masking (the API's masked representations), so a snapshot that forgets one still masks it.
SECRET_WORDS = ("password", "secret", "token", "api_key", "routing_key", "integration_key", "webhook_url")

Snapshot = Mapping[str, Any]


def audit_record(
    *,
    organization: Organization | int,
    action: str,
    target_type: str,
    target_id: object = "",
    target_name: str = "",
    before: Snapshot | None = None,
    after: Snapshot | None = None,
    actor: Actor | None = None,
    now: datetime | None = None,
) -> AuditEvent | None:
    """Record one change in ``organization``'s audit log, in the caller's transaction.

    Call it inside the service's ``transaction.atomic()``, after the change: the event commits
    with it or not at all, and a failure to write it rolls the change back (it is refused
    outside a transaction for that reason).

    - ``action``: ``<type>.<verb>``, e.g. ``healthcheck.created``, ``channel.secret_rotated``.
    - ``target_type``, ``target_id`` (a public id), ``target_name``: the object, as shown.
    - ``before`` / ``after``: plain JSON snapshots with secrets already masked, using the API's
      masked representation (``monitors.secrets.masked``, a channel kind's ``masked``). None for
      the side that does not exist (no ``before`` on a create, no ``after`` on a delete). For an
      update both are cut to the keys that changed. Keys naming a secret (``SECRET_WORDS``) are
      masked again here. An update whose snapshots do not differ changed nothing and records
      nothing (None is returned): saving a form unchanged is not a change.
    - ``actor``: who; by default the context's (``monitors.audit.current_actor``, set by the
      edges), ``system`` where none was set. ``now``: when; by default ``timezone.now()``.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit_record must run in the transaction of the change it records.")
    who = actor or current_actor()
    before_value, after_value = _compact(_masked(before), _masked(after))
    if before is not None and after is not None and before_value == after_value == {}:
        return None
    organization_id = organization if isinstance(organization, int) else organization.pk
    return AuditEvent.objects.create(
        organization_id=organization_id,
        at=now or timezone.now(),
        action=action,
        actor_kind=who.kind,
        actor_user_id=who.user_id,
        actor_email=_email_of(who.user_id),
        actor_api_key_id=who.api_key_id,
        actor_api_key_public_id=_key_public_id(who.api_key_id),
        actor_oauth_client_id=who.oauth_client_id,
        actor_label=_label(who)[:300],
        via=who.via,
        address=who.address,
        user_agent=who.user_agent,
        target_type=target_type,
        target_id=str(target_id or ""),
        target_name=target_name[:300],
        before=before_value,
        after=after_value,
    )


def _masked(snapshot: Snapshot | None) -> Any:
    if snapshot is None:
        return None
    return _mask_value(dict(snapshot))


def _mask_value(value: Any, *, secret: bool = False) -> Any:
    if isinstance(value, Mapping):
        return {
            str(key): _mask_value(item, secret=secret or _secret_key(str(key))) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_mask_value(item, secret=secret) for item in value]
    if secret and value not in (None, "", MASK):
        return MASK
    return value


def _secret_key(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in SECRET_WORDS)


def _compact(before: Any, after: Any) -> tuple[Any, Any]:
    """Keep only the keys that differ when both sides are there: an update's event says what changed."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return before, after
    keys = [key for key in {**before, **after} if before.get(key) != after.get(key)]
    return {key: before.get(key) for key in keys}, {key: after.get(key) for key in keys}


def _email_of(user_id: int | None) -> str:
    if user_id is None:
        return ""
    user = get_user_model().objects.filter(pk=user_id).first()
    return str(getattr(user, "email", "") or user) if user is not None else ""


def _key_public_id(api_key_id: int | None) -> Any:
    if api_key_id is None:
        return None
    return ApiKey.objects.filter(pk=api_key_id).values_list("public_id", flat=True).first()


def _label(actor: Actor) -> str:
    """Say who acted in a few words, as the log shows it."""
    person = _email_of(actor.user_id)
    if actor.kind == "api_key" and actor.api_key_id is not None:
        key = ApiKey.objects.filter(pk=actor.api_key_id).values_list("prefix", "name").first()
        if key is not None:
            prefix, name = key
            return f"API key {prefix}…" + (f" ({name})" if name else "")
        return "API key"
    if actor.kind == "oauth_client":
        client = actor.oauth_client_name or actor.oauth_client_id
        return f"{client} for {person}" if person else client
    if actor.kind == "person":
        return person
    return actor.kind


def audit_prune(*, now: datetime, batch_size: int = 5_000) -> int:
    """Delete audit events older than each plan's retention (``Plan.retention_days``) in batches; return how many.

    Each batch is its own short transaction, as results' pruning does (``results_prune``).
    """
    deleted = 0
    for plan in Plan.objects.all():
        cutoff = now - timedelta(days=plan.retention_days)
        while True:
            ids = list(
                AuditEvent.objects.filter(organization__plan=plan, at__lt=cutoff).values_list(
                    "id", flat=True
                )[:batch_size]
            )
            if not ids:
                break
            deleted += AuditEvent.objects.filter(id__in=ids).retention_delete()
    return deleted


def healthcheck_snapshot(healthcheck: Any) -> dict[str, Any]:
    """Return a healthcheck as the audit log keeps it: its stored config (header values masked), schedule and rules."""
    return {
        "name": healthcheck.name,
        "type": healthcheck.type,
        # The stored config carries header names with masked values (monitors.secrets.masked):
        # the values themselves live encrypted in secret_headers, which is never copied here.
        "config": healthcheck.config,
        "interval_seconds": healthcheck.interval_seconds,
        "paused": healthcheck.paused,
        "regions": sorted(healthcheck.regions.values_list("slug", flat=True)) if healthcheck.pk else [],
        "tags": sorted(healthcheck.tag_rows.values_list("name", flat=True)) if healthcheck.pk else [],
        "recheck_count": healthcheck.recheck_count,
        "recheck_delay_seconds": healthcheck.recheck_delay_seconds,
        "quorum": healthcheck.quorum,
        "degraded_threshold_ms": healthcheck.degraded_threshold_ms,
    }


def maintenance_window_snapshot(window: Any) -> dict[str, Any]:
    """Return a maintenance window as the audit log keeps it."""
    return {
        "name": window.name,
        "description": window.description,
        "starts_at": iso_or_none(window.starts_at),
        "duration_seconds": window.duration.total_seconds() if window.duration is not None else None,
        "rrule": window.rrule,
        "timezone": window.timezone,
        "healthchecks": sorted(str(p) for p in window.healthchecks.values_list("public_id", flat=True)),
        "tags": sorted(window.tag_rows.values_list("name", flat=True)),
    }


def api_key_snapshot(api_key: ApiKey) -> dict[str, Any]:
    """Return an API key as the audit log keeps it: its prefix, never the key or its hash."""
    return {
        "name": api_key.name,
        "prefix": api_key.prefix,
        "scope": api_key.scope,
        "revoked_at": iso_or_none(api_key.revoked_at),
    }


def member_target(user: Any) -> tuple[str, str]:
    """Return the (id, name) a member is logged under: their email both, users have no public id."""
    email = str(getattr(user, "email", "") or user)
    return email, email
