"""Members and invitations: invite by a signed email link, join by signing up or in, roles, removal."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.utils import timezone

from monitors.models import Invitation, Membership, Organization
from monitors.roles import LAST_OWNER, OWNERS_ONLY
from tests.web.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def invite(browser: Client, email: str = "new@example.com", role: str = "member") -> str:
    """Invite ``email`` and return the link the mail carries (a path)."""
    answer = browser.post("/app/settings/members/invite/", {"email": email, "role": role})
    assert answer.status_code == 302, answer.content.decode()
    return re.search(r"http://testserver(/app/invitations/\S+/)", mail.outbox[-1].body).group(1)


def membership_of(organization: Organization, email: str) -> Membership:
    return Membership.objects.get(organization=organization, user__email=email)


def test_an_invitation_mails_a_link_and_is_listed_as_pending(owner, org):
    invite(owner, "new@example.com", "viewer")
    assert mail.outbox[-1].to == ["new@example.com"]
    assert org.name in mail.outbox[-1].subject
    page = owner.get("/app/settings/members/").content.decode()
    assert "new@example.com" in page
    assert "Pending invitations" in page


def test_an_invitee_signs_up_through_the_link_and_joins_with_the_role(owner, org):
    link = invite(owner, "new@example.com", "viewer")
    visitor = Client()
    signup = visitor.get(link).content.decode()
    assert f"join <strong>{org.name}</strong> as <strong>viewer</strong>" in signup
    path = re.search(r'href="(/app/signup/\?invitation=[^"]+)"', signup).group(1)
    assert 'value="new@example.com"' in visitor.get(path).content.decode()
    answer = visitor.post(path, {"email": "new@example.com", "password1": PASSWORD, "password2": PASSWORD})
    assert answer.status_code == 302
    assert membership_of(org, "new@example.com").role == "viewer"
    assert Organization.objects.count() == 1  # joined, no organization of their own
    assert org.name in visitor.get("/app/").content.decode()


def test_someone_with_an_account_signs_in_through_the_link_and_joins(owner, org, other_org, make_member):
    someone = make_member(other_org, username="someone@example.com")
    link = invite(owner, "someone@example.com", "admin")
    assert Client().get(link).content.decode().count("Sign in to accept") == 1
    answer = someone.post(link)
    assert answer.status_code == 302
    assert membership_of(org, "someone@example.com").role == "admin"
    assert someone.get("/app/").context["seat"].organization == org


def test_accepting_while_signed_out_leads_to_sign_in(owner):
    link = invite(owner)
    answer = Client().post(link)
    assert answer.status_code == 302
    assert answer["Location"] == f"/app/login/?next={link}"


def test_a_link_works_once(owner, org, make_member, other_org):
    link = invite(owner, "a@example.com")
    invitee = make_member(other_org, username="a@example.com")
    assert invitee.post(link).status_code == 302
    second = invitee.post(link)
    assert second.status_code == 404
    assert "no longer valid" in second.content.decode()


@pytest.mark.parametrize("address", ["someone@example.com", "Someone@Example.COM"])
def test_the_invited_address_accepts_whatever_its_case(owner, org, other_org, make_member, address):
    someone = make_member(other_org, username=address)
    link = invite(owner, "someone@example.com", "member")
    assert someone.post(link).status_code == 302
    assert Membership.objects.get(organization=org, user=someone.user).role == "member"


def test_another_account_can_t_accept_an_invitation_sent_to_someone_else(owner, org, other_org, make_member):
    link = invite(owner, "invited@example.com", "admin")
    intruder = make_member(other_org, username="intruder@example.com")
    answer = intruder.post(link)
    assert answer.status_code == 403
    assert "This invitation was sent to invited@example.com" in answer.content.decode()
    assert not Membership.objects.filter(organization=org, user=intruder.user).exists()
    assert Invitation.objects.get().accepted_at is None  # the invited address can still accept it


def test_the_invitation_page_tells_another_account_before_it_tries(owner, other_org, make_member):
    link = invite(owner, "invited@example.com")
    page = make_member(other_org, username="intruder@example.com").get(link).content.decode()
    assert "sign in or sign up with that address to accept it" in page
    assert "You are signed in as intruder@example.com" in page
    assert "Join " not in page


def test_signing_up_through_a_link_with_another_address_is_a_field_error(owner, org):
    link = invite(owner, "invited@example.com")
    token = link.split("/")[-2]
    answer = Client().post(
        f"/app/signup/?invitation={token}",
        {"email": "other@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert answer.status_code == 400
    assert "This invitation was sent to invited@example.com" in answer.context["form"].errors["email"][0]
    assert not get_user_model().objects.filter(username="other@example.com").exists()
    assert Invitation.objects.get().accepted_at is None


@pytest.mark.parametrize("spoil", ["revoked", "expired", "forged"])
def test_a_revoked_expired_or_forged_link_is_refused(owner, spoil):
    link = invite(owner)
    invitation = Invitation.objects.get()
    if spoil == "revoked":
        assert owner.post(f"/app/settings/invitations/{invitation.public_id}/revoke/").status_code == 302
    elif spoil == "expired":
        Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    else:
        link = link[:-3] + "xx/"
    answer = Client().get(link)
    assert answer.status_code == 404
    assert "no longer valid" in answer.content.decode()
    assert Client().get(f"/app/signup/?invitation={link.split('/')[-2]}").status_code == 404


def test_inviting_an_address_again_replaces_its_pending_link(owner):
    first = invite(owner)
    second = invite(owner)
    assert Client().get(first).status_code == 404
    assert Client().get(second).status_code == 200


def test_inviting_a_member_says_so_next_to_the_email(owner, org, make_member):
    make_member(org, username="there@example.com")
    answer = owner.post("/app/settings/members/invite/", {"email": "there@example.com", "role": "member"})
    assert answer.status_code == 400
    assert answer.context["invite_form"].errors["email"] == [
        "This person is a member already; change their role in the list."
    ]


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"email": "not-an-email", "role": "member"}, "email"),
        ({"email": "a@example.com", "role": "boss"}, "role"),
    ],
)
def test_a_bad_invitation_comes_back_with_field_errors(owner, form, field):
    answer = owner.post("/app/settings/members/invite/", form)
    assert answer.status_code == 400
    assert field in answer.context["invite_form"].errors
    assert not mail.outbox


def test_an_owner_sets_a_role(owner, org, make_member):
    make_member(org, username="m@example.com")
    member = membership_of(org, "m@example.com")
    assert owner.post(f"/app/settings/members/{member.pk}/role/", {"role": "admin"}).status_code == 302
    assert membership_of(org, "m@example.com").role == "admin"


def test_an_owner_removes_a_member(owner, org, make_member):
    make_member(org, username="m@example.com")
    member = membership_of(org, "m@example.com")
    assert owner.post(f"/app/settings/members/{member.pk}/remove/").status_code == 302
    assert not Membership.objects.filter(pk=member.pk).exists()


@pytest.mark.parametrize("change", ["role", "remove"])
def test_the_last_owner_stays(owner, org, change):
    me = membership_of(org, owner.user.email)
    answer = owner.post(f"/app/settings/members/{me.pk}/{change}/", {"role": "admin"})
    assert answer.status_code == 400
    assert LAST_OWNER in answer.content.decode()
    assert membership_of(org, owner.user.email).role == "owner"


def test_a_second_owner_may_step_down(owner, org, make_member):
    make_member(org, Membership.Role.OWNER, username="two@example.com")
    me = membership_of(org, owner.user.email)
    assert owner.post(f"/app/settings/members/{me.pk}/role/", {"role": "member"}).status_code == 302
    assert membership_of(org, owner.user.email).role == "member"


@pytest.mark.parametrize(
    ("path", "form"),
    [("role", {"role": "owner"}), ("role", {"role": "viewer"}), ("remove", {})],
)
def test_an_admin_cannot_make_or_change_an_owner(make_member, org, owner, path, form):
    admin = make_member(org, Membership.Role.ADMIN)
    target = membership_of(org, owner.user.email) if form.get("role") != "owner" else None
    if target is None:
        make_member(org, username="m@example.com")
        target = membership_of(org, "m@example.com")
    answer = admin.post(f"/app/settings/members/{target.pk}/{path}/", form)
    assert answer.status_code == 400
    assert OWNERS_ONLY.replace("'", "&#x27;") in answer.content.decode()


@pytest.mark.parametrize("role", [Membership.Role.VIEWER, Membership.Role.MEMBER])
@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("invite/", {"email": "x@example.com", "role": "member"}),
        ("{member}/role/", {"role": "owner"}),
        ("{member}/remove/", {}),
    ],
)
def test_only_owners_and_admins_change_members(make_member, org, owner, role, path, form):
    someone = make_member(org, role)
    member = membership_of(org, owner.user.email)
    answer = someone.post("/app/settings/members/" + path.format(member=member.pk), form)
    assert answer.status_code == 403
    assert membership_of(org, owner.user.email).role == "owner"
    assert not Invitation.objects.exists()


def test_a_viewer_sees_the_members_but_no_form(viewer, org):
    page = viewer.get("/app/settings/members/").content.decode()
    assert "viewer" in page.lower()
    assert "Send invitation" not in page
    assert "Set role" not in page


@pytest.mark.parametrize("path", ["{member}/role/", "{member}/remove/"])
def test_another_organization_s_member_is_404(owner, other_org, make_member, path):
    make_member(other_org, username="else@example.com")
    member = membership_of(other_org, "else@example.com")
    answer = owner.post("/app/settings/members/" + path.format(member=member.pk), {"role": "viewer"})
    assert answer.status_code == 404


def test_another_organization_s_invitation_is_404(owner, other_org, make_member):
    invite(make_member(other_org), "x@example.com")
    invitation = Invitation.objects.get()
    assert owner.post(f"/app/settings/invitations/{invitation.public_id}/revoke/").status_code == 404
    assert Invitation.objects.get().revoked_at is None


def test_an_unknown_invitee_password_mismatch_is_a_field_error(owner):
    link = invite(owner)
    token = link.split("/")[-2]
    answer = Client().post(
        f"/app/signup/?invitation={token}",
        {"email": "new@example.com", "password1": PASSWORD, "password2": "x"},
    )
    assert answer.status_code == 400
    assert "The two passwords differ." in answer.content.decode()
    assert not get_user_model().objects.filter(username="new@example.com").exists()


def test_an_invitation_whose_mail_fails_shows_the_link_to_pass_on(owner, org, monkeypatch):
    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("no mail server")

    monkeypatch.setattr("web.views.send_mail", refuse)
    answer = owner.post(
        "/app/settings/members/invite/", {"email": "new@example.com", "role": "member"}, follow=True
    )
    page = answer.content.decode()
    assert "the email could not be sent (ConnectionRefusedError)" in page
    link = re.search(r"http://testserver(/app/invitations/[^ <]+/)", page).group(1)
    assert Client().get(link).status_code == 200
