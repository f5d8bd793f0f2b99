"""Write two-factor sign-in: enrol, confirm, verify a code, regenerate recovery codes, disable; the owners' rule.

The code rules are ``monitors.two_factor`` (pure); here they meet the rows. A time step and a
recovery code are each consumed by one conditional UPDATE, so two requests racing with the same
code can't both sign in.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from monitors import roles
from monitors import two_factor as rules
from monitors.errors import ServiceError
from monitors.models import Membership, Organization, RecoveryCode, TwoFactor
from monitors.secrets import decrypt_document, encrypt_document
from monitors.services.audit import audit_record, member_target

ALREADY_ON = "Two-factor sign-in is on already; disable it first to enrol another authenticator."
NOT_ENROLLING = "Start the set-up again: there is no authenticator waiting to be confirmed."
NOT_ON = "Two-factor sign-in is not on for this account."
WRONG_CODE = "That code is not right: type the 6 digits your authenticator shows now."
WRONG_PROOF = "Type a current code from your authenticator, or your password."

Used = Literal["totp", "recovery"]


def two_factor_secret(*, two_factor: TwoFactor) -> str:
    """Return the plain TOTP secret of ``two_factor`` (only to draw an enrolment's QR code and check codes)."""
    secret: str = decrypt_document(two_factor.secret, what="two-factor secret")
    return secret


def two_factor_enrol(*, user: AbstractBaseUser, now: datetime) -> TwoFactor:
    """Start (or restart) enrolment with a new secret; not active until two_factor_confirm.

    Raises ServiceError while a confirmed second factor exists: replacing it would switch off
    the authenticator in use without proof of it.
    """
    with transaction.atomic():
        current = TwoFactor.objects.select_for_update().filter(user_id=user.pk).first()
        if current is not None and current.confirmed_at is not None:
            raise ServiceError("two_factor", ALREADY_ON)
        if current is not None:
            current.delete()
        return TwoFactor.objects.create(
            user_id=user.pk, secret=encrypt_document(rules.new_secret()), created_at=now
        )


def two_factor_confirm(*, user: AbstractBaseUser, code: str, now: datetime) -> list[str]:
    """Turn on the enrolment in progress once ``code`` is a current code of its secret; return new recovery codes.

    The codes are returned once, to be shown once: only their hashes are kept.
    """
    with transaction.atomic():
        pending = TwoFactor.objects.select_for_update().filter(user_id=user.pk).first()
        if pending is None or pending.confirmed_at is not None:
            raise ServiceError("two_factor", NOT_ENROLLING if pending is None else ALREADY_ON)
        step = rules.matching_step(
            two_factor_secret(two_factor=pending), rules.typed(code).text, timestamp=now.timestamp()
        )
        if step is None:
            raise ServiceError("code", WRONG_CODE)
        pending.confirmed_at = now
        pending.last_used_step = step
        pending.save(update_fields=["confirmed_at", "last_used_step"])
        codes = _recovery_codes_replace(pending)
        _audit_person(
            user,
            "member.two_factor_enrolled",
            before={"two_factor": False},
            after={"two_factor": True, "recovery_codes_left": len(codes)},
            now=now,
        )
        return codes


def two_factor_verify(*, user: AbstractBaseUser, code: str, now: datetime) -> Used | None:
    """Check a second factor at sign-in: a TOTP code not used before, or an unused recovery code; consume it.

    Return which kind let the person in, or None (wrong, used already, or no second factor on).
    """
    two_factor = _confirmed(user)
    if two_factor is None:
        return None
    entered = rules.typed(code)
    if entered.is_totp:
        return "totp" if _step_consume(two_factor, entered.text, now) else None
    consumed = RecoveryCode.objects.filter(
        two_factor=two_factor, code_hash=rules.recovery_hash(entered.text), used_at__isnull=True
    ).update(used_at=now)
    return "recovery" if consumed else None


def recovery_codes_left(*, user: AbstractBaseUser) -> int:
    """Return how many unused recovery codes the account has."""
    return RecoveryCode.objects.filter(two_factor__user_id=user.pk, used_at__isnull=True).count()


def recovery_codes_regenerate(*, user: AbstractBaseUser, proof: str, now: datetime) -> list[str]:
    """Replace every recovery code with a new set once ``proof`` (a current code or the password) holds; return them."""
    two_factor = _proven(user, proof, now)
    with transaction.atomic():
        left = recovery_codes_left(user=user)
        codes = _recovery_codes_replace(two_factor)
        _audit_person(
            user,
            "member.recovery_codes_regenerated",
            # Say the set was replaced even when as many were left as are made: it is a change.
            before={"recovery_codes": f"{left} unused, replaced"},
            after={"recovery_codes": f"{len(codes)} new"},
            now=now,
        )
        return codes


def two_factor_disable(*, user: AbstractBaseUser, proof: str, now: datetime) -> None:
    """Turn two-factor sign-in off (secret and recovery codes deleted) once ``proof`` holds."""
    two_factor = _proven(user, proof, now)
    with transaction.atomic():
        two_factor.delete()
        _audit_person(
            user,
            "member.two_factor_disabled",
            before={"two_factor": True},
            after={"two_factor": False},
            now=now,
        )


def organization_require_two_factor(*, organization: Organization, required: bool, actor: Membership) -> None:
    """Require (or stop requiring) a second factor of every member; owners only (monitors.roles)."""
    if actor.organization_id != organization.pk:
        raise ServiceError("require_two_factor", roles.TWO_FACTOR_OWNERS_ONLY)
    refusal = roles.two_factor_policy_refusal(
        actor=actor.role, actor_enrolled=_confirmed(actor.user) is not None, required=required
    )
    if refusal is not None:
        raise ServiceError("require_two_factor", refusal)
    with transaction.atomic():
        was = (
            Organization.objects.select_for_update()
            .values_list("require_two_factor", flat=True)
            .get(pk=organization.pk)
        )
        Organization.objects.filter(pk=organization.pk).update(require_two_factor=required)
        audit_record(  # records nothing when the setting stays as it was
            organization=organization,
            action="organization.updated",
            target_type="organization",
            target_id=organization.public_id,
            target_name=organization.name,
            before={"require_two_factor": was},
            after={"require_two_factor": required},
        )
    organization.require_two_factor = required


def _audit_person(user: AbstractBaseUser, action: str, *, now: datetime, **sides: Any) -> None:
    """Record a change of a person's own sign-in in every organization they belong to (it is theirs in each).

    The sides say on or off and how many recovery codes: never the secret nor a code.
    """
    target_id, name = member_target(user)
    organization_ids = Membership.objects.filter(user_id=user.pk).values_list("organization_id", flat=True)
    for organization_id in sorted(organization_ids):
        audit_record(
            organization=organization_id,
            action=action,
            target_type="member",
            target_id=target_id,
            target_name=name,
            now=now,
            **sides,
        )


def _confirmed(user: AbstractBaseUser) -> TwoFactor | None:
    return TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=False).first()


def _step_consume(two_factor: TwoFactor, code: str, now: datetime) -> bool:
    """Accept ``code`` when it is a current step's, later than the last used; record that step. True when accepted."""
    step = rules.matching_step(
        two_factor_secret(two_factor=two_factor),
        code,
        timestamp=now.timestamp(),
        after=two_factor.last_used_step,
    )
    if step is None:
        return False
    # Conditional: a concurrent request that consumed this step (or a later one) first wins, this one fails.
    moved = (
        TwoFactor.objects.filter(pk=two_factor.pk)
        .filter(Q(last_used_step__isnull=True) | Q(last_used_step__lt=step))
        .update(last_used_step=step)
    )
    return moved == 1


def _proven(user: AbstractBaseUser, proof: str, now: datetime) -> TwoFactor:
    """Return the account's confirmed second factor once ``proof`` is a current code or the password."""
    two_factor = _confirmed(user)
    if two_factor is None:
        raise ServiceError("two_factor", NOT_ON)
    entered = rules.typed(proof)
    if entered.is_totp and _step_consume(two_factor, entered.text, now):
        return two_factor
    if proof and user.check_password(proof):
        return two_factor
    raise ServiceError("proof", WRONG_PROOF)


def _recovery_codes_replace(two_factor: TwoFactor) -> list[str]:
    codes = rules.new_recovery_codes()
    RecoveryCode.objects.filter(two_factor=two_factor).delete()
    RecoveryCode.objects.bulk_create(
        RecoveryCode(two_factor=two_factor, code_hash=rules.recovery_hash(code)) for code in codes
    )
    return codes
