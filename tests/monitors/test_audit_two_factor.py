"""The audit log of two-factor sign-in: a person's own changes in each of their organizations, the owners' rule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model

from monitors.audit import Actor, acting_as
from monitors.errors import ServiceError
from monitors.models import AuditEvent, Membership
from monitors.services import (
    membership_add,
    organization_require_two_factor,
    recovery_codes_regenerate,
    two_factor_confirm,
    two_factor_disable,
    two_factor_enrol,
    two_factor_secret,
)
from tests.totp_reference import totp

PASSWORD = "a-long-test-password-42"


@pytest.fixture
def person(db, org, other_org):
    user = get_user_model().objects.create_user(
        username="ada@example.com", email="ada@example.com", password=PASSWORD
    )
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    membership_add(organization=other_org, user=user, role=Membership.Role.MEMBER)
    return user


def _enrol(user, now):
    """Turn the second factor on; return its secret and recovery codes."""
    earlier = now - timedelta(minutes=5)
    secret = two_factor_secret(two_factor=two_factor_enrol(user=user, now=earlier))
    codes = two_factor_confirm(user=user, code=totp(secret, earlier.timestamp()), now=earlier)
    return secret, codes


def _logged(action):
    return AuditEvent.objects.filter(action=action)


def test_enrolling_is_recorded_in_every_organization_of_the_person(person, org, other_org, now):
    _enrol(person, now)

    assert set(_logged("member.two_factor_enrolled").values_list("organization_id", flat=True)) == {
        org.pk,
        other_org.pk,
    }


def test_enrolling_is_recorded_against_the_person_as_a_member(person, now):
    _enrol(person, now)

    event = _logged("member.two_factor_enrolled").first()
    assert (event.target_type, event.target_name) == ("member", "ada@example.com")
    assert (event.before["two_factor"], event.after["two_factor"]) == (False, True)


def test_starting_an_enrolment_records_nothing_until_it_is_confirmed(person, now):
    two_factor_enrol(user=person, now=now)

    assert not AuditEvent.objects.exists()


def test_no_secret_or_recovery_code_is_ever_in_the_log(person, now):
    secret, codes = _enrol(person, now)
    codes += recovery_codes_regenerate(user=person, proof=PASSWORD, now=now)
    two_factor_disable(user=person, proof=PASSWORD, now=now)

    logged = str(list(AuditEvent.objects.values_list("before", "after", "target_name", "actor_label")))
    assert secret not in logged
    assert not [code for code in codes if code in logged]


@pytest.mark.parametrize(
    ("change", "action"),
    [
        (
            lambda user, now: recovery_codes_regenerate(user=user, proof=PASSWORD, now=now),
            "member.recovery_codes_regenerated",
        ),
        (
            lambda user, now: two_factor_disable(user=user, proof=PASSWORD, now=now),
            "member.two_factor_disabled",
        ),
    ],
)
def test_a_later_change_of_the_second_factor_is_recorded_in_each_organization(person, now, change, action):
    _enrol(person, now)

    change(person, now)

    assert _logged(action).count() == 2


def test_a_refused_proof_records_nothing(person, now):
    _enrol(person, now)

    with pytest.raises(ServiceError):
        two_factor_disable(user=person, proof="wrong", now=now)

    assert not _logged("member.two_factor_disabled").exists()


def test_the_person_acting_is_the_actor(person, now):
    with acting_as(Actor(kind="person", via="web", user_id=person.pk, address="198.51.100.4")):
        _enrol(person, now)

    assert set(_logged("member.two_factor_enrolled").values_list("actor_email", "via", "address")) == {
        ("ada@example.com", "web", "198.51.100.4")
    }


def test_requiring_two_factor_records_the_organization_s_before_and_after(person, org, now):
    _enrol(person, now)
    owner = Membership.objects.get(organization=org, user=person)

    organization_require_two_factor(organization=org, required=True, actor=owner)

    event = _logged("organization.updated").get()
    assert (event.organization_id, event.target_type, event.target_id) == (
        org.pk,
        "organization",
        str(org.public_id),
    )
    assert (event.before, event.after) == ({"require_two_factor": False}, {"require_two_factor": True})


def test_saving_the_rule_unchanged_records_nothing(person, org, now):
    _enrol(person, now)
    owner = Membership.objects.get(organization=org, user=person)
    organization_require_two_factor(organization=org, required=True, actor=owner)

    organization_require_two_factor(organization=org, required=True, actor=owner)

    assert _logged("organization.updated").count() == 1
