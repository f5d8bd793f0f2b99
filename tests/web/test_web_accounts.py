"""Sign up, sign in (rate-limited), sign out, password reset, organization switch; login required."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client, override_settings

from monitors.models import Membership, Organization
from tests.web.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/app/",
        "/app/healthchecks/new/",
        "/app/settings/api-keys/",
        "/app/settings/members/",
        "/app/settings/channels/",
        "/app/settings/maintenance/",
        "/app/settings/reports/",
        "/app/status-pages/",
    ],
)
def test_app_pages_send_a_signed_out_visitor_to_sign_in(path):
    answer = Client().get(path)
    assert answer.status_code == 302
    assert answer["Location"] == f"/app/login/?next={path}"


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost", "uptimy.example.com"])
@override_settings(UPTIMY_PUBLIC_URL="https://uptimy.example.com", ALLOWED_HOSTS=["*"])
def test_the_root_of_uptimy_s_own_address_leads_to_the_app(host):
    answer = Client().get("/", HTTP_HOST=host)
    assert answer.status_code == 302
    assert answer["Location"] == "/app/"


@override_settings(UPTIMY_PUBLIC_URL="https://uptimy.example.com", ALLOWED_HOSTS=["*"])
def test_the_root_of_another_host_stays_the_status_pages_custom_domain():
    # No page has this domain: the status pages' own 404, not the app.
    assert Client().get("/", HTTP_HOST="status.other.example").status_code == 404


def test_public_status_pages_stay_public():
    # No such page: a 404 of the status pages, not a redirect to sign in.
    assert Client().get("/s/no-such-page/").status_code == 404


def test_sign_up_creates_an_organization_on_the_free_plan_owned_by_the_new_user():
    browser = Client()
    answer = browser.post(
        "/app/signup/",
        {
            "email": "Ada@Example.com",
            "organization": "Acme Docs",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert answer.status_code == 302
    assert answer["Location"] == "/app/"
    user = get_user_model().objects.get(username="ada@example.com")
    membership = Membership.objects.get(user=user)
    assert membership.role == Membership.Role.OWNER
    assert membership.organization.name == "Acme Docs"
    assert membership.organization.slug == "acme-docs"
    assert membership.organization.plan.slug == "free"
    assert browser.get("/app/").status_code == 200


CONSENT = "/oauth/authorize/?client_id=abc&response_type=code"


@pytest.mark.parametrize(
    ("next_url", "lands_on"),
    [
        (CONSENT, CONSENT),  # an assistant's consent screen, which sent the new user to sign in
        ("https://evil.example/steal", "/app/"),  # another host: never followed
        ("", "/app/"),
    ],
)
def test_sign_up_goes_on_to_next_only_on_this_host(next_url, lands_on):
    answer = Client().post(
        "/app/signup/?" + urlencode({"next": next_url}),
        {"email": "e@example.com", "organization": "E", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert answer.status_code == 302
    assert answer["Location"] == lands_on


def test_the_sign_in_page_s_sign_up_link_keeps_next():
    page = Client().get("/app/login/?" + urlencode({"next": CONSENT})).content.decode()

    assert 'href="/app/signup/?next=/oauth/authorize/%3Fclient_id%3Dabc%26response_type%3Dcode"' in page


def test_sign_up_with_a_taken_organization_name_gets_a_slug_of_its_own(org):
    Organization.objects.filter(pk=org.pk).update(slug="acme")
    Client().post(
        "/app/signup/",
        {"email": "b@example.com", "organization": "Acme", "password1": PASSWORD, "password2": PASSWORD},
    )
    created = Membership.objects.get(user__username="b@example.com").organization
    assert created.slug.startswith("acme-")


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"password2": "something-else-entirely"}, "password2", "The two passwords differ."),
        ({"password1": "short", "password2": "short"}, "password1", "This password is too short."),
        ({"email": "not-an-email"}, "email", "Enter a valid email address."),
        ({"organization": ""}, "organization", "This field is required."),
    ],
)
def test_sign_up_shows_what_to_fix_next_to_the_field(fields, field, message):
    data = {
        "email": "c@example.com",
        "organization": "Team",
        "password1": PASSWORD,
        "password2": PASSWORD,
        **fields,
    }
    answer = Client().post("/app/signup/", data)
    assert answer.status_code == 400
    assert message in answer.context["form"].errors[field][0]
    assert not get_user_model().objects.filter(username="c@example.com").exists()


def test_sign_up_refuses_an_email_that_has_an_account(make_member, org):
    make_member(org, username="d@example.com")
    answer = Client().post(
        "/app/signup/",
        {"email": "d@example.com", "organization": "X", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert "An account with this email exists" in answer.context["form"].errors["email"][0]


def test_sign_in_and_sign_out(make_member, org):
    make_member(org, username="e@example.com")
    browser = Client()
    answer = browser.post("/app/login/", {"username": "e@example.com", "password": PASSWORD})
    assert answer.status_code == 302
    assert browser.get("/app/").status_code == 200
    assert browser.post("/app/logout/").status_code == 302
    assert browser.get("/app/").status_code == 302


@override_settings(UPTIMY_LOGIN_ATTEMPTS=3)
def test_sign_in_is_refused_after_too_many_failures_with_a_clear_message(make_member, org):
    make_member(org, username="f@example.com")
    browser = Client()
    for _ in range(3):
        answer = browser.post("/app/login/", {"username": "f@example.com", "password": "wrong"})
        assert "Please enter a correct" in answer.content.decode()
    # The right password is refused too while the limit holds: guessing gains nothing.
    answer = browser.post("/app/login/", {"username": "f@example.com", "password": PASSWORD})
    assert answer.status_code == 200
    assert "Too many failed sign-ins. Try again in 15 minutes" in answer.content.decode()
    assert browser.get("/app/").status_code == 302


def test_password_reset_by_email_sets_a_new_password(make_member, org):
    make_member(org, username="g@example.com")
    browser = Client()
    answer = browser.post("/app/password-reset/", {"email": "g@example.com"})
    assert answer["Location"] == "/app/password-reset/sent/"
    assert len(mail.outbox) == 1
    link = re.search(r"http://testserver(/app/password-reset/\S+/)", mail.outbox[0].body).group(1)
    form_page = browser.get(link, follow=True)
    assert form_page.context["validlink"]
    new = "another-long-password-77"
    done = browser.post(form_page.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done["Location"] == "/app/password-reset/done/"
    assert Client().login(username="g@example.com", password=new)


def test_a_user_of_two_organizations_switches_between_them(make_member, make_org, make_check, org):
    browser = make_member(org)
    other = make_org()
    Membership.objects.create(user=browser.user, organization=other, role=Membership.Role.VIEWER)
    make_check(org, name="Acme check")
    make_check(other, name="Other check")
    assert "Acme check" in browser.get("/app/").content.decode()
    browser.post("/app/organization/", {"organization": str(other.public_id)})
    page = browser.get("/app/").content.decode()
    assert "Other check" in page
    assert "Acme check" not in page


def test_switching_to_an_organization_not_ones_own_is_404(owner, other_org):
    assert owner.post("/app/organization/", {"organization": str(other_org.public_id)}).status_code == 404


def test_every_form_needs_its_csrf_token(make_member, org):
    browser = make_member(org)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(browser.user)
    assert strict.post("/app/healthchecks/new/", {"name": "x"}).status_code == 403
    assert (
        Client(enforce_csrf_checks=True).post("/app/login/", {"username": "x", "password": "y"}).status_code
        == 403
    )


def test_app_pages_carry_a_content_security_policy_without_inline_scripts(owner):
    policy = owner.get("/app/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "Content-Security-Policy" in Client().get("/app/login/").headers


def test_the_api_docs_keep_their_own_scripts():
    # Swagger UI starts inline and from a CDN: the app's policy is not sent there.
    assert "Content-Security-Policy" not in Client().get("/api/v1/docs/").headers
