"""Two-factor sign-in through Django's test client: enrolment, the second step, recovery codes, the owners' rule."""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from monitors import selectors
from monitors.models import Membership, TwoFactor
from monitors.services import (
    membership_add,
    organization_require_two_factor,
    two_factor_confirm,
    two_factor_enrol,
    two_factor_secret,
)
from tests.clock import frozen_at
from tests.totp_reference import totp
from tests.web.conftest import PASSWORD
from web.two_factor import pending_expired

LOGIN = "/app/login/"
SECOND_STEP = "/app/login/two-factor/"
SECURITY = "/app/account/security/"


@pytest.fixture
def person(db):
    return get_user_model().objects.create_user(
        username="ada@example.com", email="ada@example.com", password=PASSWORD
    )


def enrol(user, now) -> tuple[str, list[str]]:
    """Turn ``user``'s second factor on, confirmed five minutes before ``now`` (its step long used)."""
    earlier = now - timedelta(minutes=5)
    secret = two_factor_secret(two_factor=two_factor_enrol(user=user, now=earlier))
    return secret, two_factor_confirm(user=user, code=totp(secret, earlier.timestamp()), now=earlier)


def password_step(browser: Client, username: str = "ada@example.com", password: str = PASSWORD):
    return browser.post(LOGIN, {"username": username, "password": password})


@pytest.mark.parametrize(
    ("age", "expired"), [(0, False), (299, False), (300, False), (301, True), (-5, True)]
)
def test_a_pending_sign_in_lasts_its_lifetime(age, expired):
    assert pending_expired(started=1000.0, now=1000.0 + age, lifetime=300) is expired


def test_the_password_alone_does_not_sign_in_an_account_with_a_second_factor(org, person, now):
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    enrol(person, now)
    browser = Client()
    answer = password_step(browser)
    assert answer.status_code == 302
    assert answer["Location"] == SECOND_STEP
    assert "_auth_user_id" not in browser.session
    assert browser.get("/app/")["Location"].startswith(LOGIN)


def test_a_current_code_signs_in(org, person, now):
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    secret, _ = enrol(person, now)
    browser = Client()
    password_step(browser)
    assert browser.get(SECOND_STEP).status_code == 200
    answer = browser.post(SECOND_STEP, {"code": totp(secret, now.timestamp())})
    assert answer["Location"] == "/app/"
    assert browser.get("/app/").status_code == 200


def test_the_same_code_cannot_sign_in_twice(org, person, now):
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    secret, _ = enrol(person, now)
    code = totp(secret, now.timestamp())
    first = Client()
    password_step(first)
    assert first.post(SECOND_STEP, {"code": code}).status_code == 302
    second = Client()
    password_step(second)
    answer = second.post(SECOND_STEP, {"code": code})
    assert answer.status_code == 400
    assert "wrong or was used already" in answer.content.decode()
    assert "_auth_user_id" not in second.session


def test_a_recovery_code_signs_in_once(org, person, now):
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    _, codes = enrol(person, now)
    browser = Client()
    password_step(browser)
    answer = browser.post(SECOND_STEP, {"code": codes[0]}, follow=True)
    assert "9 left" in answer.content.decode()
    again = Client()
    password_step(again)
    assert again.post(SECOND_STEP, {"code": codes[0]}).status_code == 400


def test_the_second_step_expires(org, person, now, settings):
    settings.UPTIMY_TWO_FACTOR_PENDING_SECONDS = 300
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    secret, _ = enrol(person, now)
    browser = Client()
    password_step(browser)
    later = now + timedelta(seconds=301)
    with frozen_at(later):
        answer = browser.post(SECOND_STEP, {"code": totp(secret, later.timestamp())})
    assert answer["Location"] == LOGIN
    assert "_auth_user_id" not in browser.session


def test_the_second_step_without_a_password_step_goes_back_to_sign_in(db):
    assert Client().get(SECOND_STEP)["Location"] == LOGIN


def test_wrong_codes_count_against_the_sign_in_limit(org, person, now, settings):
    settings.UPTIMY_LOGIN_ATTEMPTS = 3
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    secret, _ = enrol(person, now)
    browser = Client()
    password_step(browser)
    for _ in range(3):
        assert browser.post(SECOND_STEP, {"code": "000000"}).status_code == 400
    answer = browser.post(SECOND_STEP, {"code": totp(secret, now.timestamp())})
    assert "Too many failed sign-ins" in answer.content.decode()
    assert "_auth_user_id" not in browser.session


def test_a_good_code_does_not_count_against_the_limit(org, person, now, settings):
    settings.UPTIMY_LOGIN_ATTEMPTS = 2
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    secret, _ = enrol(person, now)
    for offset in (0, 30):
        browser = Client()
        password_step(browser)
        at = now.timestamp() + offset
        assert browser.post(SECOND_STEP, {"code": totp(secret, at)}).status_code == 302
    browser = Client()
    password_step(browser)
    assert "Too many" not in browser.post(SECOND_STEP, {"code": "000000"}).content.decode()


def test_a_password_reset_still_asks_for_the_second_factor(org, person, now):
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    enrol(person, now)
    browser = Client()
    browser.post("/app/password-reset/", {"email": "ada@example.com"})
    link = re.search(r"http://testserver(/app/password-reset/\S+/)", mail.outbox[0].body).group(1)
    form_page = browser.get(link, follow=True)
    new = "another-long-password-77"
    browser.post(form_page.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert "_auth_user_id" not in browser.session
    assert password_step(browser, password=new)["Location"] == SECOND_STEP
    assert "_auth_user_id" not in browser.session


def test_enrolment_from_the_security_page(make_member, org, now):
    browser = make_member(org)
    assert "Off:" in browser.get(SECURITY).content.decode()
    browser.post("/app/account/security/enrol/")
    page = browser.get(SECURITY)
    assert page["Cache-Control"] == "no-store"
    html = page.content.decode()
    assert 'src="data:image/svg+xml' in html
    secret = re.search(r'id="two-factor-secret">([A-Z2-7 ]+)<', html).group(1)
    assert not selectors.two_factor_on(user=browser.user)
    codes_page = browser.post("/app/account/security/confirm/", {"code": totp(secret, now.timestamp())})
    assert codes_page.status_code == 200
    assert codes_page["Cache-Control"] == "no-store"
    assert (
        len(re.findall(r"<li><code>[a-z0-9]{5}-[a-z0-9]{5}</code></li>", codes_page.content.decode())) == 10
    )
    assert selectors.two_factor_on(user=browser.user)
    after = browser.get(SECURITY).content.decode()
    assert secret.replace(" ", "") not in after.replace(" ", "")
    assert "10 unused recovery codes" in after


def test_a_wrong_code_does_not_turn_enrolment_on(make_member, org, now):
    browser = make_member(org)
    browser.post("/app/account/security/enrol/")
    answer = browser.post("/app/account/security/confirm/", {"code": "12"})
    assert answer.status_code == 400
    assert not selectors.two_factor_on(user=browser.user)


def test_disabling_needs_the_password(make_member, org, now):
    browser = make_member(org)
    enrol(browser.user, now)
    assert browser.post("/app/account/security/disable/", {"disable-proof": "nope"}).status_code == 400
    assert selectors.two_factor_on(user=browser.user)
    assert browser.post("/app/account/security/disable/", {"disable-proof": PASSWORD}).status_code == 302
    assert not TwoFactor.objects.filter(user=browser.user).exists()


def test_regenerated_recovery_codes_are_shown_once(make_member, org, now):
    browser = make_member(org)
    _, old = enrol(browser.user, now)
    page = browser.post("/app/account/security/recovery-codes/", {"regenerate-proof": PASSWORD})
    assert page.status_code == 200
    assert old[0] not in page.content.decode()
    assert len(re.findall(r"<li><code>", page.content.decode())) == 10


@pytest.mark.parametrize(
    ("role", "status"),
    [(Membership.Role.ADMIN, 403), (Membership.Role.MEMBER, 403), (Membership.Role.VIEWER, 403)],
)
def test_only_an_owner_changes_the_organization_s_rule(make_member, org, now, role, status):
    browser = make_member(org, role)
    enrol(browser.user, now)
    assert browser.post("/app/settings/organization/", {"require_two_factor": "on"}).status_code == status
    org.refresh_from_db()
    assert org.require_two_factor is False


def test_an_owner_requires_two_factor_sign_in(make_member, org, now):
    browser = make_member(org)
    enrol(browser.user, now)
    answer = browser.post("/app/settings/organization/", {"require_two_factor": "on"})
    assert answer["Location"] == "/app/settings/organization/"
    org.refresh_from_db()
    assert org.require_two_factor is True


def test_a_member_without_a_second_factor_is_sent_to_enrol(make_member, org, person, now):
    owner = make_member(org)
    enrol(owner.user, now)
    organization_require_two_factor(organization=org, required=True, actor=owner.user.memberships.get())
    membership_add(organization=org, user=person, role=Membership.Role.MEMBER)
    browser = Client()
    assert password_step(browser)["Location"] == SECURITY
    for path in ("/app/", "/app/incidents/", "/app/settings/members/"):
        assert browser.get(path)["Location"] == SECURITY, path
    assert "requires two-factor sign-in" in browser.get(SECURITY).content.decode()
    htmx = browser.get("/app/", headers={"HX-Request": "true"})
    assert htmx["HX-Redirect"] == SECURITY
    enrol(person, now)
    assert browser.get("/app/").status_code == 200


def test_a_password_change_between_the_steps_ends_the_pending_sign_in(org, person, now):
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    secret, _ = enrol(person, now)
    browser = Client()
    password_step(browser)
    person.set_password("changed-meanwhile-long-99")
    person.save()
    assert browser.post(SECOND_STEP, {"code": totp(secret, now.timestamp())})["Location"] == LOGIN
    assert "_auth_user_id" not in browser.session


def test_the_pending_sign_in_belongs_to_its_session_only(org, person, now):
    membership_add(organization=org, user=person, role=Membership.Role.OWNER)
    secret, _ = enrol(person, now)
    password_step(Client())
    other = Client()
    assert other.post(SECOND_STEP, {"code": totp(secret, now.timestamp())})["Location"] == LOGIN
    assert "_auth_user_id" not in other.session


def test_no_log_line_holds_the_secret_or_a_code(make_member, org, now, caplog):
    caplog.set_level(logging.DEBUG)
    browser = make_member(org, username="logs@example.com")
    browser.post("/app/account/security/enrol/")
    html = browser.get(SECURITY).content.decode()
    secret = re.search(r'id="two-factor-secret">([A-Z2-7 ]+)<', html).group(1).replace(" ", "")
    code = totp(secret, now.timestamp())
    page = browser.post("/app/account/security/confirm/", {"code": code}).content.decode()
    recovery = re.findall(r"<code>([a-z0-9]{5}-[a-z0-9]{5})</code>", page)
    signing_in = Client()
    password_step(signing_in, username="logs@example.com")
    signing_in.post(SECOND_STEP, {"code": "000000"})
    signing_in.post(SECOND_STEP, {"code": recovery[0]})
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for value in (secret, code, *recovery):
        assert value not in logged


def test_the_admin_signs_in_through_the_second_factor_too(org, person, now):
    person.is_staff = person.is_superuser = True
    person.save()
    secret, _ = enrol(person, now)
    browser = Client()
    sent = browser.get("/admin/", follow=True)
    assert sent.redirect_chain[-1][0] == "/app/login/?next=/admin/"
    answer = browser.post(
        f"{LOGIN}?next=/admin/", {"username": "ada@example.com", "password": PASSWORD, "next": "/admin/"}
    )
    assert answer["Location"] == SECOND_STEP
    assert browser.get("/admin/").status_code == 302
    assert browser.post(SECOND_STEP, {"code": totp(secret, now.timestamp())})["Location"] == "/admin/"
    assert browser.get("/admin/").status_code == 200


def test_a_signed_in_account_without_admin_access_is_refused_not_looped(make_member, org):
    browser = make_member(org)
    assert browser.get("/admin/", follow=True).status_code == 403
