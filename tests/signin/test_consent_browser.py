"""The consent screen in a real browser (Debian's Chromium through Playwright, as tests/web does).

It draws under the web app's Content-Security-Policy without a refusal, a user signs in from it and
clicks Allow, and the browser is sent to the assistant's redirect URI with a code.
"""

from __future__ import annotations

from importlib import import_module
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from monitors.models import Membership
from monitors.services import membership_add
from tests.signin.conftest import PASSWORD, REDIRECT_URI, Assistant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.fixture(autouse=True)
def _seeded_plans_and_regions(transactional_db) -> None:
    from django.apps import apps

    import_module("monitors.migrations.0002_seed_regions_and_plans").seed(apps, None)


def test_a_user_signs_in_and_allows_an_assistant_in_chromium(
    chromium, live_server, settings, make_org, tmp_path
):
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    first, second = make_org(slug="acme"), make_org(slug="beta")
    user = get_user_model().objects.create_user(
        username="ada@example.com", email="ada@example.com", password=PASSWORD
    )
    membership_add(organization=first, user=user, role=Membership.Role.VIEWER)
    membership_add(organization=second, user=user, role=Membership.Role.OWNER)
    registered = Client().post(
        "/oauth/register/",
        {"redirect_uris": [REDIRECT_URI], "client_name": "Claude", "token_endpoint_auth_method": "none"},
        content_type="application/json",
    )
    assistant = Assistant(http=Client(), client_id=registered.json()["client_id"])
    context = chromium.new_context()
    context.set_default_timeout(20_000)
    tab = context.new_page()
    refusals: list[str] = []
    tab.on("console", lambda m: refusals.append(m.text) if "Content Security Policy" in m.text else None)
    sent_back: list[str] = []
    tab.route(
        REDIRECT_URI + "**", lambda route: (sent_back.append(route.request.url), route.fulfill(body="ok"))
    )

    tab.goto(live_server.url + assistant.authorize_url(resource=live_server.url + "/mcp"))
    tab.get_by_label("Email or user name").fill("ada@example.com")
    tab.get_by_label("Password").fill(PASSWORD)
    tab.get_by_role("button", name="Sign in").click()
    tab.get_by_role("heading", name="Allow “Claude” to use Uptimy?").wait_for()
    tab.screenshot(path=str(tmp_path / "consent.png"), full_page=True)
    tab.get_by_label("Organization").select_option(label="beta (owner)")
    tab.get_by_role("button", name="Allow").click()
    tab.wait_for_url(REDIRECT_URI + "**")
    context.close()

    answer = parse_qs(urlsplit(sent_back[0]).query)
    assert answer["state"] == [assistant.state]
    assert answer["iss"] == [live_server.url]
    token = assistant.exchange(answer["code"][0], resource=live_server.url + "/mcp")
    assert token.status_code == 200, token.content
    assert token.json()["scope"] == "read write"
    assert refusals == []
