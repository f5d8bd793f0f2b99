"""Write members and invitations: invite by email, accept, revoke, change a role, remove a member.

Who may do what is ``monitors.roles`` (pure); these functions apply it under a lock on the
organization's memberships, so two owners demoting each other at once can't leave none.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core import signing
from django.db import transaction

from monitors import roles
from monitors.audit import current_actor
from monitors.errors import ServiceError
from monitors.models import Invitation, Membership, Organization
from monitors.services.audit import audit_record, member_target

INVITATION_LIFETIME = timedelta(days=7)
INVITATION_SALT = "uptimy.invitation"
INVITATION_GONE = "This invitation link is no longer valid; ask for a new one."


def invitation_addressee_refusal(*, invitation: Invitation, email: str) -> str | None:
    """Return why an account with ``email`` may not accept ``invitation``, or None when it was sent to that address.

    An invitation is for the address it was mailed to: a forwarded or leaked link must not let
    someone else join. Addresses compare case-insensitively, as invitation_create stores them.
    """
    if email.strip().casefold() == invitation.email.strip().casefold():
        return None
    return (
        f"This invitation was sent to {invitation.email}: sign in or sign up with that address to accept it."
    )


def invitation_token(invitation: Invitation) -> str:
    """Return the secret part of an invitation's link: its public_id, signed with SECRET_KEY."""
    return signing.dumps(str(invitation.public_id), salt=INVITATION_SALT)


def invitation_public_id(token: str) -> str | None:
    """Return the public_id a link's token signs, or None for a token this server never signed."""
    try:
        value = signing.loads(token, salt=INVITATION_SALT)
    except signing.BadSignature:
        return None
    return value if isinstance(value, str) else None


def _refuse(refusal: str | None, field: str = "role") -> None:
    if refusal is not None:
        raise ServiceError(field, refusal)


def _owners(organization: Organization) -> int:
    """Count the organization's owners, locking its memberships until the transaction ends."""
    locked = Membership.objects.select_for_update().filter(organization=organization).order_by("id")
    return sum(1 for role in locked.values_list("role", flat=True) if role == roles.OWNER)


def invitation_create(
    *, organization: Organization, email: str, role: str, actor: Membership, now: datetime
) -> Invitation:
    """Invite ``email`` with ``role``; an earlier pending invitation of the same address is replaced."""
    email = email.strip().lower()
    _refuse(roles.role_change_refusal(actor=actor.role, current=None, wanted=role, owners=0))
    if Membership.objects.filter(organization=organization, user__email__iexact=email).exists():
        raise ServiceError("email", "This person is a member already; change their role in the list.")
    with transaction.atomic():
        Invitation.objects.filter(
            organization=organization, email=email, accepted_at__isnull=True, revoked_at__isnull=True
        ).update(revoked_at=now)
        invitation = Invitation.objects.create(
            organization=organization,
            email=email,
            role=role,
            invited_by=actor.user,
            created_at=now,
            expires_at=now + INVITATION_LIFETIME,
        )
        _audit_invitation(invitation, "invitation.created", after=_invitation_snapshot(invitation), now=now)
    return invitation


def _invitation_snapshot(invitation: Invitation) -> dict[str, Any]:
    # The link's signed token is never kept: the public id alone does not open it.
    return {
        "email": invitation.email,
        "role": invitation.role,
        "expires_at": invitation.expires_at.isoformat(),
    }


def _audit_invitation(invitation: Invitation, action: str, *, now: datetime, **sides: Any) -> None:
    audit_record(
        organization=invitation.organization_id,
        action=action,
        target_type="invitation",
        target_id=invitation.public_id,
        target_name=invitation.email,
        now=now,
        **sides,
    )


def _audit_member(membership: Membership, action: str, **sides: Any) -> None:
    target_id, name = member_target(membership.user)
    audit_record(
        organization=membership.organization_id,
        action=action,
        target_type="member",
        target_id=target_id,
        target_name=name,
        **sides,
    )


def invitation_revoke(*, invitation: Invitation, actor: Membership, now: datetime) -> None:
    _refuse(roles.role_change_refusal(actor=actor.role, current=None, wanted=invitation.role, owners=0))
    with transaction.atomic():
        revoked = Invitation.objects.filter(
            pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True
        ).update(revoked_at=now)
        if revoked:
            _audit_invitation(
                invitation, "invitation.revoked", before=_invitation_snapshot(invitation), now=now
            )


def invitation_accept(*, invitation: Invitation, user: Any, now: datetime) -> Membership:
    """Make ``user`` a member with the invitation's role; the link works once, until it expires.

    Only an account with the invited address may accept it. A user who is a member already
    keeps their role: an invitation never demotes anyone.
    """
    with transaction.atomic():
        locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if locked.accepted_at or locked.revoked_at or locked.expires_at <= now:
            raise ServiceError("invitation", INVITATION_GONE)
        _refuse(invitation_addressee_refusal(invitation=locked, email=user.email or ""), field="email")
        membership, joined = Membership.objects.get_or_create(
            organization=locked.organization, user=user, defaults={"role": locked.role}
        )
        locked.accepted_at, locked.accepted_by = now, user
        locked.save(update_fields=["accepted_at", "accepted_by"])
        # The one accepting acts, signed in or signing up at this very moment.
        accepting = replace(current_actor(), kind="person", user_id=user.pk)
        _audit_invitation(
            locked, "invitation.accepted", after={"accepted_by": user.email}, now=now, actor=accepting
        )
        if joined:
            _audit_member(
                membership, "member.added", after={"role": membership.role}, actor=accepting, now=now
            )
    return membership


def invitation_sign_up(
    *, invitation: Invitation, email: str, password: str, now: datetime
) -> tuple[Any, Membership]:
    """Create a user (their email is their user name) who joins through ``invitation``, in one transaction."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=email, email=email, password=password)
        return user, invitation_accept(invitation=invitation, user=user, now=now)


def membership_role_set(*, membership: Membership, role: str, actor: Membership) -> Membership:
    with transaction.atomic():
        owners = _owners(membership.organization)
        current = Membership.objects.get(pk=membership.pk).role
        _refuse(roles.role_change_refusal(actor=actor.role, current=current, wanted=role, owners=owners))
        Membership.objects.filter(pk=membership.pk).update(role=role)
        _audit_member(membership, "member.role_changed", before={"role": current}, after={"role": role})
    membership.role = role
    return membership


def membership_remove(*, membership: Membership, actor: Membership) -> None:
    with transaction.atomic():
        owners = _owners(membership.organization)
        current = Membership.objects.get(pk=membership.pk).role
        _refuse(roles.role_change_refusal(actor=actor.role, current=current, wanted=None, owners=owners))
        Membership.objects.filter(pk=membership.pk).delete()
        _audit_member(membership, "member.removed", before={"role": current})
