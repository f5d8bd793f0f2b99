"""Two-factor sign-in's rules and services: RFC 6238 vectors, drift, reuse, recovery codes, the owners' rule."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model

from monitors import roles, selectors
from monitors import two_factor as rules
from monitors.errors import ServiceError
from monitors.models import Membership, RecoveryCode, TwoFactor
from monitors.services import (
    membership_add,
    organization_require_two_factor,
    recovery_codes_left,
    recovery_codes_regenerate,
    two_factor_confirm,
    two_factor_disable,
    two_factor_enrol,
    two_factor_secret,
    two_factor_verify,
)
from tests.totp_reference import totp

PASSWORD = "a-long-test-password-42"
# RFC 6238 appendix B, the SHA-1 rows: the seed is the ASCII string "12345678901234567890".
RFC_SEED = base64.b32encode(b"12345678901234567890").decode()
RFC_VECTORS = [
    (59, "94287082"),
    (1111111109, "07081804"),
    (1111111111, "14050471"),
    (1234567890, "89005924"),
    (2000000000, "69279037"),
    (20000000000, "65353130"),
]


@pytest.mark.parametrize(("timestamp", "expected"), RFC_VECTORS)
def test_the_tests_reference_totp_gives_the_rfc_6238_vectors(timestamp, expected):
    assert totp(RFC_SEED, timestamp, digits=8) == expected


@pytest.mark.parametrize(("timestamp", "expected"), RFC_VECTORS)
def test_the_server_accepts_the_rfc_6238_vector_at_its_step(timestamp, expected):
    # Six digits are the eight-digit value modulo 10^6: the vector's last six.
    step = rules.matching_step(RFC_SEED, expected[-6:], timestamp=timestamp)
    assert step == timestamp // 30


@pytest.mark.parametrize(("offset", "accepted"), [(-2, False), (-1, True), (0, True), (1, True), (2, False)])
def test_a_code_is_good_one_step_either_side_of_now(offset, accepted):
    secret = rules.new_secret()
    now = 1_800_000_015.0
    code = totp(secret, now + offset * 30)
    step = rules.matching_step(secret, code, timestamp=now)
    assert (step == rules.step_at(now) + offset) if accepted else step is None


@pytest.mark.parametrize(
    ("code", "is_totp"), [("123456", True), ("123 456", True), ("12345", False), ("abcde-fghjk", False)]
)
def test_what_was_typed_is_a_totp_code_or_a_recovery_code(code, is_totp):
    assert rules.typed(code).is_totp is is_totp


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user(
        username="ada@example.com", email="ada@example.com", password=PASSWORD
    )


def enrolled(user, now) -> tuple[str, list[str]]:
    """Enrol and confirm ``user``'s second factor at ``now``; return the secret and the recovery codes."""
    two_factor = two_factor_enrol(user=user, now=now)
    secret = two_factor_secret(two_factor=two_factor)
    codes = two_factor_confirm(user=user, code=totp(secret, now.timestamp()), now=now)
    return secret, codes


def test_the_secret_is_stored_encrypted(user, now):
    secret, _ = enrolled(user, now)
    assert secret not in TwoFactor.objects.get(user=user).secret


def test_an_enrolment_signs_nobody_in_until_a_code_confirms_it(user, now):
    two_factor = two_factor_enrol(user=user, now=now)
    secret = two_factor_secret(two_factor=two_factor)
    assert not selectors.two_factor_on(user=user)
    assert two_factor_verify(user=user, code=totp(secret, now.timestamp()), now=now) is None


def test_a_wrong_code_does_not_confirm_the_enrolment(user, now):
    two_factor = two_factor_enrol(user=user, now=now)
    right = totp(two_factor_secret(two_factor=two_factor), now.timestamp())
    with pytest.raises(ServiceError) as refused:
        two_factor_confirm(user=user, code=str((int(right) + 1) % 1_000_000).zfill(6), now=now)
    assert refused.value.field == "code"
    assert not selectors.two_factor_on(user=user)


def test_confirming_gives_ten_recovery_codes_and_stores_only_their_hashes(user, now):
    _, codes = enrolled(user, now)
    assert len(codes) == len(set(codes)) == 10
    stored = set(RecoveryCode.objects.values_list("code_hash", flat=True))
    assert not stored & set(codes)
    assert stored == {rules.recovery_hash(code) for code in codes}


def test_enrolling_again_while_on_is_refused(user, now):
    enrolled(user, now)
    with pytest.raises(ServiceError):
        two_factor_enrol(user=user, now=now)


def test_the_confirming_code_cannot_sign_in_again_within_its_window(user, now):
    secret, _ = enrolled(user, now)
    assert two_factor_verify(user=user, code=totp(secret, now.timestamp()), now=now) is None


@pytest.mark.parametrize(
    ("used_offset", "tried_offset", "accepted"),
    [(0, 0, False), (1, 0, False), (1, -1, False), (0, 1, True), (-1, 0, True)],
)
def test_a_step_is_used_once_and_never_an_earlier_one_after_it(
    user, now, used_offset, tried_offset, accepted
):
    secret, _ = enrolled(user, now - timedelta(minutes=5))
    at = now.timestamp()
    assert two_factor_verify(user=user, code=totp(secret, at + used_offset * 30), now=now) == "totp"
    verdict = two_factor_verify(user=user, code=totp(secret, at + tried_offset * 30), now=now)
    assert verdict == ("totp" if accepted else None)


def test_a_recovery_code_works_once(user, now):
    _, codes = enrolled(user, now)
    assert two_factor_verify(user=user, code=codes[3], now=now) == "recovery"
    assert two_factor_verify(user=user, code=codes[3], now=now) is None
    assert recovery_codes_left(user=user) == 9


def test_a_recovery_code_is_accepted_as_typed_from_paper(user, now):
    _, codes = enrolled(user, now)
    assert two_factor_verify(user=user, code=f" {codes[0].replace('-', '').upper()} ", now=now) == "recovery"


def test_new_recovery_codes_replace_the_old_ones(user, now):
    _, old = enrolled(user, now)
    new = recovery_codes_regenerate(user=user, proof=PASSWORD, now=now)
    assert two_factor_verify(user=user, code=old[0], now=now) is None
    assert two_factor_verify(user=user, code=new[0], now=now) == "recovery"


@pytest.mark.parametrize("proof", ["password", "code"])
def test_disabling_needs_the_password_or_a_current_code(user, now, proof):
    secret, _ = enrolled(user, now - timedelta(minutes=5))
    two_factor_disable(
        user=user, proof=PASSWORD if proof == "password" else totp(secret, now.timestamp()), now=now
    )
    assert not TwoFactor.objects.filter(user=user).exists()
    assert not RecoveryCode.objects.exists()


@pytest.mark.parametrize("proof", ["", "wrong-password", "000000"])
def test_disabling_without_proof_is_refused(user, now, proof):
    enrolled(user, now)
    with pytest.raises(ServiceError) as refused:
        two_factor_disable(user=user, proof=proof, now=now)
    assert refused.value.field == "proof"
    assert selectors.two_factor_on(user=user)


@pytest.mark.parametrize(
    ("role", "actor_enrolled", "required", "refusal"),
    [
        (roles.OWNER, True, True, None),
        (roles.OWNER, False, True, roles.TWO_FACTOR_SELF_FIRST),
        (roles.OWNER, False, False, None),
        (roles.ADMIN, True, True, roles.TWO_FACTOR_OWNERS_ONLY),
        (roles.ADMIN, True, False, roles.TWO_FACTOR_OWNERS_ONLY),
        (roles.MEMBER, True, True, roles.TWO_FACTOR_OWNERS_ONLY),
        (roles.VIEWER, True, False, roles.TWO_FACTOR_OWNERS_ONLY),
    ],
)
def test_only_an_owner_with_a_second_factor_may_require_it(
    org, user, now, role, actor_enrolled, required, refusal
):
    membership = membership_add(organization=org, user=user, role=role)
    if actor_enrolled:
        enrolled(user, now)
    if refusal is None:
        organization_require_two_factor(organization=org, required=required, actor=membership)
        org.refresh_from_db()
        assert org.require_two_factor is required
    else:
        with pytest.raises(ServiceError) as refused:
            organization_require_two_factor(organization=org, required=required, actor=membership)
        assert refused.value.message == refusal
        org.refresh_from_db()
        assert org.require_two_factor is False


def test_an_owner_of_another_organization_cannot_change_this_one(org, other_org, user, now):
    membership = membership_add(organization=other_org, user=user, role=Membership.Role.OWNER)
    enrolled(user, now)
    with pytest.raises(ServiceError):
        organization_require_two_factor(organization=org, required=True, actor=membership)
    org.refresh_from_db()
    assert org.require_two_factor is False
