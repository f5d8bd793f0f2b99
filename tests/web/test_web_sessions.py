"""A person's signed-in sessions: listed on the account page, ended one by one or all, ended by a new password."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core import mail
from django.test import Client

from monitors.models import Membership, SignInSession
from monitors.services import membership_add
from tests.web.conftest import PASSWORD

pytestmark = pytest.mark.django_db
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1"
)


@pytest.fixture
def person(org):
    user = get_user_model().objects.create_user(
        username="p@example.com", email="p@example.com", password=PASSWORD
    )
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    return user


def signed_in(user_agent: str, address: str, username: str = "p@example.com") -> Client:
    """Return a browser signed in through the sign-in form, as a person signs in."""
    browser = Client(HTTP_USER_AGENT=user_agent, REMOTE_ADDR=address)
    answer = browser.post("/app/login/", {"username": username, "password": PASSWORD})
    assert answer.status_code == 302, answer.content.decode()[:500]
    return browser


def rows(page: str) -> list[str]:
    return re.findall(r"<tr(?: aria-current=\"true\")?>\s*<td>(.*?)</td>\s*<td>(.*?)</td>", page, re.S)


def test_signing_in_records_the_session_with_its_device_and_address(person):
    browser = signed_in(FIREFOX, "203.0.113.7")

    record = SignInSession.objects.get(user=person)
    assert record.session_key == browser.session.session_key
    assert (record.address, record.user_agent) == ("203.0.113.7", FIREFOX)
    page = browser.get("/app/account/").content.decode()
    assert rows(page) == [("Firefox on Linux <strong>(this session)</strong>", "203.0.113.7")]
    assert record.session_key not in page  # a session is named by its public id, never its key


def test_the_account_page_lists_every_session_this_one_first_and_marked(person):
    signed_in(SAFARI, "198.51.100.2")
    browser = signed_in(FIREFOX, "203.0.113.7")

    page = browser.get("/app/account/").content.decode()

    assert rows(page) == [
        ("Firefox on Linux <strong>(this session)</strong>", "203.0.113.7"),
        ("Safari on iPhone", "198.51.100.2"),
    ]


def test_ending_another_session_signs_that_browser_out(person):
    phone = signed_in(SAFARI, "198.51.100.2")
    laptop = signed_in(FIREFOX, "203.0.113.7")
    phone_key = phone.session.session_key
    record = SignInSession.objects.get(session_key=phone_key)

    answer = laptop.post(f"/app/account/sessions/{record.public_id}/end/")

    assert answer["Location"] == "/app/account/"
    assert not Session.objects.filter(session_key=phone_key).exists()
    assert not SignInSession.objects.filter(pk=record.pk).exists()
    assert phone.get("/app/").url == "/app/login/?next=/app/"
    assert laptop.get("/app/").status_code == 200


def test_this_session_is_not_ended_from_the_list(person):
    browser = signed_in(FIREFOX, "203.0.113.7")
    record = SignInSession.objects.get(session_key=browser.session.session_key)

    assert browser.post(f"/app/account/sessions/{record.public_id}/end/").status_code == 404
    assert browser.get("/app/").status_code == 200


def test_another_person_s_session_is_404_and_stays(person, make_member, org):
    theirs = signed_in(FIREFOX, "203.0.113.7")
    record = SignInSession.objects.get(session_key=theirs.session.session_key)
    someone_else = make_member(org)

    assert someone_else.post(f"/app/account/sessions/{record.public_id}/end/").status_code == 404
    assert theirs.get("/app/").status_code == 200


def test_ending_all_other_sessions_keeps_this_one(person):
    others = [signed_in(SAFARI, "198.51.100.2"), signed_in(SAFARI, "198.51.100.3")]
    laptop = signed_in(FIREFOX, "203.0.113.7")

    laptop.post("/app/account/sessions/end-others/")

    assert [b.get("/app/").status_code for b in others] == [302, 302]
    assert laptop.get("/app/").status_code == 200
    assert list(SignInSession.objects.filter(user=person).values_list("session_key", flat=True)) == [
        laptop.session.session_key
    ]


def test_changing_the_password_ends_every_other_session_and_keeps_this_one(person):
    phone = signed_in(SAFARI, "198.51.100.2")
    laptop = signed_in(FIREFOX, "203.0.113.7")
    new = "a-new-long-password-88"

    answer = laptop.post(
        "/app/account/password/", {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    )

    assert answer["Location"] == "/app/account/"
    assert laptop.get("/app/").status_code == 200
    assert phone.get("/app/").status_code == 302
    # Django gave this session a new key with the new password; its record followed it.
    assert list(SignInSession.objects.filter(user=person).values_list("session_key", flat=True)) == [
        laptop.session.session_key
    ]
    assert Session.objects.count() == 1


def test_a_wrong_old_password_changes_nothing(person):
    phone = signed_in(SAFARI, "198.51.100.2")
    laptop = signed_in(FIREFOX, "203.0.113.7")

    answer = laptop.post(
        "/app/account/password/",
        {"old_password": "wrong", "new_password1": "x-y-z-123456", "new_password2": "x-y-z-123456"},
    )

    assert answer.status_code == 400
    assert "old password was entered incorrectly" in answer.content.decode()
    assert phone.get("/app/").status_code == 200


def test_resetting_the_password_by_email_ends_every_session(person):
    phone = signed_in(SAFARI, "198.51.100.2")
    browser = Client()
    browser.post("/app/password-reset/", {"email": "p@example.com"})
    link = re.search(r"http://testserver(/app/password-reset/\S+/)", mail.outbox[0].body).group(1)
    form_page = browser.get(link, follow=True)
    new = "another-long-password-77"

    browser.post(form_page.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})

    assert not SignInSession.objects.filter(user=person).exists()
    assert not Session.objects.filter(session_key=phone.session.session_key).exists()
    assert phone.get("/app/").status_code == 302


def test_last_seen_is_written_at_most_every_five_minutes(person, now):
    browser = signed_in(FIREFOX, "203.0.113.7")
    record = SignInSession.objects.get(user=person)
    assert record.last_seen_at == now

    with time_machine.travel(now + timedelta(minutes=4), tick=False):
        browser.get("/app/")
    record.refresh_from_db()
    assert record.last_seen_at == now

    with time_machine.travel(now + timedelta(minutes=6), tick=False):
        browser.get("/app/", REMOTE_ADDR="203.0.113.8")
    record.refresh_from_db()
    assert (record.last_seen_at, record.address) == (now + timedelta(minutes=6), "203.0.113.8")
    assert record.created_at == now


def test_a_session_signed_in_without_a_record_is_recorded_at_its_first_request(person):
    browser = Client(HTTP_USER_AGENT=SAFARI, REMOTE_ADDR="198.51.100.2")
    browser.force_login(person)  # as a session signed in before sessions were recorded

    browser.get("/app/")

    assert SignInSession.objects.get(user=person).session_key == browser.session.session_key


def test_signing_out_leaves_the_session_out_of_the_list(person):
    gone = signed_in(SAFARI, "198.51.100.2")
    gone.post("/app/logout/")
    browser = signed_in(FIREFOX, "203.0.113.7")

    assert rows(browser.get("/app/account/").content.decode()) == [
        ("Firefox on Linux <strong>(this session)</strong>", "203.0.113.7")
    ]
    # Pruned at this sign-in: the table keeps no session Django no longer has.
    assert SignInSession.objects.filter(user=person).count() == 1


def test_a_hostile_user_agent_is_stored_clean_and_capped(person):
    signed_in("Evil\x00Agent\r\nX-Injected: 1" + "a" * 1000, "203.0.113.7")

    stored = SignInSession.objects.get(user=person).user_agent
    assert stored.startswith("Evil Agent X-Injected: 1")
    assert len(stored) == 300


def test_the_account_page_needs_a_signed_in_person():
    assert Client().get("/app/account/")["Location"] == "/app/login/?next=/app/account/"
