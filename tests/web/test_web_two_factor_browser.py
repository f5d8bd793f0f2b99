"""Two-factor sign-in from outside: Debian's Chromium through Playwright against the live server.

The person's authenticator is tests/totp_reference.py, an RFC 6238 implementation written from
the RFC and checked against its vectors, independent of the pyotp the server uses. Codes come
from the real clock (the live server's and the browser's): a code is computed for the step
after the last one used, which the server's one step of drift accepts without any waiting.
Every wait is Playwright's auto-waiting on what the page shows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from monitors.models import Membership, Organization
from monitors.services import membership_add
from tests.totp_reference import totp
from tests.web.conftest import PASSWORD
from tests.web.test_web_browser import sign_up

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.fixture
def app(live_server, settings) -> str:
    """Return the live server's app URL over plain HTTP, as a local try has it."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    return live_server.url


@pytest.fixture
def page(chromium) -> Iterator[Any]:
    """Return a fresh browser tab; fail the test on any Content-Security-Policy refusal (the QR code's too)."""
    context = chromium.new_context()
    context.set_default_timeout(20_000)
    tab = context.new_page()
    refusals: list[str] = []
    tab.on(
        "console",
        lambda message: refusals.append(message.text) if "Content Security Policy" in message.text else None,
    )
    yield tab
    context.close()
    assert not refusals, refusals


def sign_out(page: Any) -> None:
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()


def password_step(page: Any, app: str, username: str) -> None:
    page.goto(f"{app}/app/login/")
    page.get_by_label("Email or user name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def second_step(page: Any, code: str) -> None:
    page.get_by_role("heading", name="Two-factor sign-in").wait_for()
    page.get_by_label("Authentication code").fill(code)
    page.get_by_role("button", name="Verify").click()


def enrol(page: Any) -> tuple[str, list[str]]:
    """Set up two-factor sign-in on the open Security page as a person does; return the secret and recovery codes."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="Set up two-factor sign-in").click()
    qr = page.get_by_role("img", name="QR code of your two-factor secret for an authenticator app")
    expect(qr).to_be_visible()
    # Drawn, not refused: the data: SVG decodes under the page's Content-Security-Policy.
    assert page.evaluate("img => img.complete && img.naturalWidth > 0", qr.element_handle())
    secret = page.locator("#two-factor-secret").inner_text().replace(" ", "")
    page.get_by_label("Code from your authenticator").fill(totp(secret, time.time()))
    page.get_by_role("button", name="Turn on").click()
    page.get_by_role("heading", name="Your recovery codes").wait_for()
    codes = [c.strip() for c in page.locator("#recovery-codes code").all_inner_texts()]
    assert len(codes) == 10
    return secret, codes


def test_enrol_sign_in_with_a_code_and_with_a_recovery_code_once(page, app):
    from playwright.sync_api import expect

    sign_up(page, app, "tf@example.com")
    page.get_by_role("link", name="Security").click()
    expect(page.locator("#two-factor-state")).to_contain_text("Off")
    secret, codes = enrol(page)
    page.get_by_role("link", name="I have kept them").click()
    expect(page.locator("#two-factor-state")).to_contain_text("On")
    assert secret not in page.content()
    sign_out(page)

    # Password alone: the second step, not the app.
    password_step(page, app, "tf@example.com")
    page.get_by_role("heading", name="Two-factor sign-in").wait_for()
    assert page.goto(f"{app}/app/").url.startswith(f"{app}/app/login/")
    password_step(page, app, "tf@example.com")
    second_step(page, totp(secret, time.time() + 30))
    page.get_by_role("heading", name="Healthchecks").wait_for()
    sign_out(page)

    password_step(page, app, "tf@example.com")
    second_step(page, codes[0])
    page.get_by_role("heading", name="Healthchecks").wait_for()
    expect(page.get_by_text("You signed in with a recovery code; 9 left.")).to_be_visible()
    sign_out(page)

    password_step(page, app, "tf@example.com")
    second_step(page, codes[0])
    expect(page.get_by_text("That code is wrong or was used already.")).to_be_visible()
    expect(page.get_by_role("heading", name="Two-factor sign-in")).to_be_visible()


def test_an_owner_requires_two_factor_and_a_member_without_it_is_sent_to_enrol(page, app, chromium):
    from playwright.sync_api import expect

    sign_up(page, app, "own@example.com")
    page.get_by_role("link", name="Security").click()
    enrol(page)
    page.get_by_role("link", name="Organization").click()
    page.get_by_label("Require two-factor sign-in of every member").check()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Docs Team now requires two-factor sign-in.")).to_be_visible()

    member = get_user_model().objects.create_user(
        username="mem@example.com", email="mem@example.com", password=PASSWORD
    )
    membership_add(
        organization=Organization.objects.get(name="Docs Team"), user=member, role=Membership.Role.MEMBER
    )
    context = chromium.new_context()
    context.set_default_timeout(20_000)
    tab = context.new_page()
    try:
        password_step(tab, app, "mem@example.com")
        tab.get_by_role("heading", name="Security").wait_for()
        expect(tab.get_by_text("Docs Team requires two-factor sign-in").first).to_be_visible()
        tab.goto(f"{app}/app/incidents/")
        tab.get_by_role("heading", name="Security").wait_for()
        assert tab.url == f"{app}/app/account/security/"
        enrol(tab)
        tab.goto(f"{app}/app/")
        tab.get_by_role("heading", name="Healthchecks").wait_for()
    finally:
        context.close()
