"""Read who belongs where: memberships, invitations, API keys, sign-in sessions, two-factor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db.models import Case, Exists, OuterRef, QuerySet, Value, When

from monitors import roles
from monitors.access_rules import api_key_expired, api_key_unused, user_agent_summary
from monitors.models import ApiKey, Invitation, Membership, Organization, SignInSession, TwoFactor


def memberships_of(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Membership]:
    """Return the user's memberships with their organizations and plans, oldest first (none when signed out)."""
    if user.pk is None:
        return Membership.objects.none()
    return (
        Membership.objects.filter(user_id=user.pk)
        .select_related("organization", "organization__plan")
        .order_by("created_at", "id")
    )


def members_of(*, organization: Organization) -> QuerySet[Membership]:
    """Return the organization's memberships with their users, owners first, then by email."""
    order = Case(*(When(role=role, then=Value(rank)) for rank, role in enumerate(roles.ROLES)))
    return (
        Membership.objects.filter(organization=organization)
        .select_related("user")
        .order_by(order, "user__email", "id")
    )


def invitations_pending(*, organization: Organization, now: datetime) -> QuerySet[Invitation]:
    """Return the organization's invitations neither accepted, revoked nor expired, newest first."""
    return Invitation.objects.filter(
        organization=organization, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
    ).order_by("-created_at", "-id")


def invitation_by_public_id(*, public_id: str) -> Invitation | None:
    """Return the invitation with its organization, or None."""
    try:
        return Invitation.objects.select_related("organization").get(public_id=public_id)
    except (Invitation.DoesNotExist, ValueError, ValidationError):
        return None


def api_keys_of(*, organization: Organization) -> QuerySet[ApiKey]:
    """Return the organization's API keys, revoked ones too, newest first."""
    return ApiKey.objects.filter(organization=organization).order_by("-created_at", "-id")


@dataclass(frozen=True, slots=True)
class ListedApiKey:
    """One key as its list shows it: the key, whether it has expired, and whether it looks abandoned."""

    key: ApiKey
    expired: bool
    unused: bool


def api_keys_listed(*, organization: Organization, now: datetime) -> list[ListedApiKey]:
    """Return the organization's keys, newest first, each judged at ``now`` (a revoked key is never flagged)."""
    listed = []
    for key in api_keys_of(organization=organization):
        expired = api_key_expired(key.expires_at, now=now)
        live = key.is_active and not expired
        unused = live and api_key_unused(last_used_at=key.last_used_at, created_at=key.created_at, now=now)
        listed.append(ListedApiKey(key=key, expired=expired, unused=unused))
    return listed


@dataclass(frozen=True, slots=True)
class SignInSessionRow:
    """One signed-in session as its person sees it; never its key."""

    public_id: UUID
    device: str
    address: str | None
    created_at: datetime
    last_seen_at: datetime
    current: bool


def sign_in_sessions_of(
    *, user: Any, current_session_key: str | None, now: datetime
) -> list[SignInSessionRow]:
    """Return the person's live sessions (Django still has them, unexpired), the current one first, in one query."""
    live = Session.objects.filter(session_key=OuterRef("session_key"), expire_date__gt=now)
    rows = [
        SignInSessionRow(
            public_id=record.public_id,
            device=user_agent_summary(record.user_agent),
            address=record.address,
            created_at=record.created_at,
            last_seen_at=record.last_seen_at,
            current=record.session_key == current_session_key,
        )
        for record in SignInSession.objects.filter(Exists(live), user=user).order_by("-last_seen_at", "-id")
    ]
    return sorted(rows, key=lambda row: not row.current)


def api_key_by_hash(*, key_hash: str) -> ApiKey | None:
    return (
        ApiKey.objects.select_related("organization", "organization__plan").filter(key_hash=key_hash).first()
    )


def two_factor_on(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the account signs in with a confirmed second factor."""
    if user.pk is None:
        return False
    return TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=False).exists()


def two_factor_enrolment(*, user: AbstractBaseUser | AnonymousUser) -> TwoFactor | None:
    """Return the account's enrolment in progress (a secret not yet confirmed by a code), if any."""
    if user.pk is None:
        return None
    return TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=True).first()


def two_factor_requirers(*, user: AbstractBaseUser | AnonymousUser) -> list[Organization]:
    """Return the user's organizations whose owners require two-factor sign-in, by name."""
    if user.pk is None:
        return []
    return list(
        Organization.objects.filter(memberships__user_id=user.pk, require_two_factor=True).order_by("name")
    )
