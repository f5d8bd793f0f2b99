"""Write organizations, memberships and API keys; keyword-only, each owns its transaction."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from monitors.access_rules import api_key_expiry_refusal, client_address
from monitors.audit import current_actor
from monitors.errors import ServiceError
from monitors.models import ApiKey, Membership, Organization, Plan
from monitors.services.audit import api_key_snapshot, audit_record

API_KEY_PREFIX = "upt_"
# Writing last_used_at on every request would turn reads into writes; a minute is precise enough.
API_KEY_TOUCH_INTERVAL = timedelta(minutes=1)
DEFAULT_PLAN_SLUG = "free"


def hash_api_key(raw_key: str) -> str:
    """Return the stored form of a key: keys are long random strings, so plain SHA-256 suffices."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def organization_create(*, slug: str, name: str = "", plan: Plan | None = None) -> Organization:
    try:
        validate_slug(slug)
    except ValidationError:
        raise ServiceError("slug", "Use letters, digits, hyphens and underscores only.") from None
    plan = plan or Plan.objects.get(slug=DEFAULT_PLAN_SLUG)
    return Organization.objects.create(slug=slug, name=name or slug, plan=plan)


def organization_sign_up(*, email: str, password: str, organization_name: str) -> tuple[Any, Organization]:
    """Create a user (their email is their user name) and an organization of theirs on the free plan, owned by them.

    The organization's slug is made of its name, with a random tail when that slug is taken.
    """
    base = (slugify(organization_name) or "org")[:48]
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=email, email=email, password=password)
        slug = base
        while Organization.objects.filter(slug=slug).exists():
            slug = f"{base}-{secrets.token_hex(3)}"
        organization = organization_create(
            slug=slug, name=organization_name, plan=Plan.objects.get(slug=DEFAULT_PLAN_SLUG)
        )
        membership_add(organization=organization, user=user, role=Membership.Role.OWNER)
        audit_record(
            organization=organization,
            action="organization.created",
            target_type="organization",
            target_id=organization.public_id,
            target_name=organization.name,
            after={"name": organization.name, "slug": organization.slug, "plan": organization.plan.slug},
            actor=replace(current_actor(), kind="person", user_id=user.pk),
        )
    return user, organization


def membership_add(
    *, organization: Organization, user: Any, role: str = Membership.Role.MEMBER
) -> Membership:
    membership, _ = Membership.objects.update_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    return membership


def api_key_create(
    *,
    organization: Organization,
    name: str = "",
    scope: str = ApiKey.Scope.READ_WRITE,
    expires_at: datetime | None = None,
    now: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Create a key and return it with the raw key, which is shown once and never stored.

    ``expires_at`` (None: never) must be in the future and within two years of ``now``.
    """
    refusal = api_key_expiry_refusal(expires_at, now=now or timezone.now())
    if refusal:
        raise ServiceError("expires_at", refusal)
    raw_key = API_KEY_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        api_key = ApiKey.objects.create(
            organization=organization,
            name=name,
            prefix=raw_key[: len(API_KEY_PREFIX) + 8],
            key_hash=hash_api_key(raw_key),
            scope=scope,
            expires_at=expires_at,
        )
        _audit_key(api_key, "api_key.created", after=api_key_snapshot(api_key))
    return api_key, raw_key


def _audit_key(api_key: ApiKey, action: str, **sides: Any) -> None:
    audit_record(
        organization=api_key.organization_id,
        action=action,
        target_type="api_key",
        target_id=api_key.public_id,
        target_name=api_key.name or f"{api_key.prefix}…",
        **sides,
    )


def api_key_revoke(*, api_key: ApiKey, now: datetime) -> ApiKey:
    """Revoke a key at once; revoking a revoked key changes (and records) nothing."""
    with transaction.atomic():
        before = api_key_snapshot(api_key)
        revoked = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=now)
        api_key.refresh_from_db(fields=["revoked_at"])
        if revoked:
            _audit_key(api_key, "api_key.revoked", before=before, after=api_key_snapshot(api_key))
    return api_key


def api_key_touch(*, api_key: ApiKey, now: datetime, address: str | None = None) -> None:
    """Record that the key was used, and from which address, at most once per API_KEY_TOUCH_INTERVAL.

    The condition is in the UPDATE itself, so concurrent requests within the interval write once.
    """
    if api_key.last_used_at and now - api_key.last_used_at < API_KEY_TOUCH_INTERVAL:
        return
    used_from = client_address(address)
    due = Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - API_KEY_TOUCH_INTERVAL)
    if ApiKey.objects.filter(due, pk=api_key.pk).update(last_used_at=now, last_used_address=used_from):
        api_key.last_used_at, api_key.last_used_address = now, used_from


def demo_bootstrap(*, org_slug: str = "demo", username: str = "admin") -> dict[str, str | None]:
    """Make sure the demo organization, an admin user and an API key exist.

    Return the password and the raw key when this call created them (they can't be shown
    later), and None for those that already existed.
    """
    user_model = get_user_model()
    with transaction.atomic():
        organization = Organization.objects.filter(slug=org_slug).first()
        if organization is None:
            organization = organization_create(slug=org_slug, name="Demo", plan=Plan.objects.get(slug="paid"))
        password = None
        user = user_model.objects.filter(username=username).first()
        if user is None:
            password = secrets.token_urlsafe(12)
            user = user_model.objects.create_superuser(username=username, email="", password=password)
        membership_add(organization=organization, user=user, role=Membership.Role.OWNER)
        raw_key = None
        if not organization.api_keys.filter(revoked_at__isnull=True).exists():
            _, raw_key = api_key_create(organization=organization, name="demo")
    return {"organization": organization.slug, "username": username, "password": password, "api_key": raw_key}
