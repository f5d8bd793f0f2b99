"""The consent screen: who may allow what, for which organization; Deny, sign-in and CSRF."""

from __future__ import annotations

import pytest
from django.test import Client

from monitors.models import Membership
from signin.consent import granted_scopes
from signin.tokens import oauth_grant
from tests.signin.conftest import BASE, RESOURCE, consent_form_fields, redirect_params


@pytest.mark.parametrize(
    ("requested", "role", "granted"),
    [
        (["read", "write"], "owner", ("read", "write")),
        (["read", "write"], "admin", ("read", "write")),
        (["read", "write"], "member", ("read", "write")),
        (["read", "write"], "viewer", ("read",)),
        (["read"], "owner", ("read",)),
        (["write"], "member", ("read", "write")),  # write brings read
        (["write"], "viewer", ()),  # nothing a viewer can give
        (["read"], "viewer", ("read",)),
        (["admin", "read"], "owner", ("read",)),  # unknown scopes never pass
        ([], "owner", ()),
    ],
)
def test_what_a_role_can_grant(requested, role, granted):
    assert granted_scopes(requested, role) == granted


@pytest.mark.parametrize(
    ("role", "scopes"),
    [
        (Membership.Role.OWNER, {"read", "write"}),
        (Membership.Role.MEMBER, {"read", "write"}),
        (Membership.Role.VIEWER, {"read"}),
    ],
)
def test_the_token_holds_what_the_role_could_grant(make_user, make_org, register, consent, role, scopes):
    organization = make_org()
    browser = Client()
    browser.force_login(make_user((organization, role)))
    assistant = register(browser)

    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=organization))["code"]
    answer = assistant.exchange(code).json()

    assert set(answer["scope"].split()) == scopes
    grant = oauth_grant(answer["access_token"], resource=RESOURCE)
    assert grant is not None
    assert grant.scopes == scopes


def test_a_viewer_asked_for_write_alone_is_told_and_nothing_is_granted(
    make_user, make_org, register, consent
):
    organization = make_org()
    browser = Client()
    browser.force_login(make_user((organization, Membership.Role.VIEWER)))
    assistant = register(browser)

    response = consent(assistant, assistant.authorize_url(scope="write"), organization=organization)

    assert response.status_code == 400
    assert b"you can grant read only" in response.content


def test_the_user_chooses_among_their_organizations(make_user, make_org, register, consent):
    first, second = make_org(), make_org()
    browser = Client()
    browser.force_login(make_user((first, Membership.Role.OWNER), (second, Membership.Role.VIEWER)))
    assistant = register(browser)

    page = browser.get(assistant.authorize_url()).content.decode()
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=second))["code"]

    assert f'value="{first.public_id}"' in page
    assert f"{second.name} (viewer: read only)" in page
    grant = oauth_grant(assistant.exchange(code).json()["access_token"], resource=RESOURCE)
    assert grant is not None
    assert (grant.organization_id, grant.scopes) == (second.pk, {"read"})


@pytest.mark.parametrize("organization", ["another organization's id", "not-an-id", ""])
def test_an_organization_the_user_is_not_in_is_refused(browser, register, consent, other_org, organization):
    assistant = register(browser)
    chosen = {"another organization's id": other_org.public_id, "not-an-id": "not-an-id", "": ""}[
        organization
    ]

    response = consent(assistant, assistant.authorize_url(), organization=str(chosen))

    assert response.status_code == 400
    assert b"Choose one of your organizations." in response.content
    assert "Location" not in response


def test_the_screen_names_the_client_the_user_the_organization_and_the_scopes(
    browser, register, org, owner_user
):
    assistant = register(browser, client_name="Claude")

    page = browser.get(assistant.authorize_url()).content.decode()

    assert "Allow “Claude” to use Uptimy?" in page
    assert owner_user.username in page
    assert org.name in page
    assert "Add, pause and resume healthchecks" in page  # write, in plain words
    assert "See your organization&#x27;s healthchecks" in page  # read
    assert "127.0.0.1:33418" in page  # where the answer goes


def test_deny_sends_access_denied_back(browser, register, consent, org):
    assistant = register(browser)

    answer = redirect_params(consent(assistant, assistant.authorize_url(), organization=org, allow=False))

    assert answer == {"error": "access_denied", "state": assistant.state, "iss": BASE}


def test_allow_sends_the_code_with_the_state_and_the_issuer(browser, register, consent, org):
    assistant = register(browser)

    answer = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))

    assert set(answer) == {"code", "state", "iss"}
    assert (answer["state"], answer["iss"]) == (assistant.state, BASE)


def test_a_signed_out_user_is_sent_to_the_web_apps_sign_in_and_back(db, register):
    assistant = register(Client())

    response = assistant.http.get(assistant.authorize_url())

    assert response.status_code == 302
    assert response["Location"].startswith("/app/login/?next=/oauth/authorize/%3F")


def test_the_consent_post_needs_the_csrf_token(owner_user, register, org):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner_user)
    assistant = register(browser)
    url = assistant.authorize_url()
    fields = consent_form_fields(browser.get(url).content.decode())
    fields.pop("csrfmiddlewaretoken")
    fields.update(allow="Authorize", organization=str(org.public_id))

    response = browser.post(url, fields)

    assert response.status_code == 403


def test_a_user_without_an_organization_can_only_deny(make_user, register):
    browser = Client()
    browser.force_login(make_user())
    assistant = register(browser)

    page = browser.get(assistant.authorize_url()).content.decode()

    assert "You belong to no organization" in page
    assert ">Allow</button>" not in page


def test_an_unknown_client_is_shown_an_error_not_redirected(browser):
    response = browser.get(
        "/oauth/authorize/?response_type=code&client_id=nope&redirect_uri=https://evil.example/cb"
        "&code_challenge=abc&code_challenge_method=S256"
    )

    assert response.status_code == 400
    assert b"This sign-in request can" in response.content


def test_an_unregistered_redirect_uri_is_never_followed(browser, register):
    assistant = register(browser)

    response = browser.get(assistant.authorize_url(redirect_uri="https://evil.example/cb"))

    assert response.status_code == 400
    assert "Location" not in response


def test_the_screen_cannot_be_framed(browser, register):
    assistant = register(browser)

    response = browser.get(assistant.authorize_url())

    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_approval_prompt_auto_still_shows_the_screen(sign_in, browser, register, org):
    sign_in(org)  # an earlier token with the same scopes, which the toolkit alone would reuse
    assistant = register(browser)

    response = browser.get(assistant.authorize_url(approval_prompt="auto"))

    assert response.status_code == 200
    assert b"to use Uptimy?" in response.content


def test_a_client_marked_to_skip_the_screen_gets_an_error_not_a_code(browser, register):
    from oauth2_provider.models import get_application_model

    assistant = register(browser)
    get_application_model().objects.filter(client_id=assistant.client_id).update(skip_authorization=True)

    answer = redirect_params(browser.get(assistant.authorize_url()))

    assert answer["error"] == "access_denied"
    assert "code" not in answer


APP_REDIRECT = "cursor://anysphere.cursor-mcp/oauth/callback"


def test_an_app_registered_with_its_own_scheme_is_sent_back_through_it(browser, register, consent, org):
    assistant = register(browser, redirect_uris=[APP_REDIRECT])
    assistant.redirect_uri = APP_REDIRECT

    answer = consent(assistant, assistant.authorize_url(), organization=org)

    assert answer["Location"].startswith(APP_REDIRECT + "?")
    assert set(redirect_params(answer)) == {"code", "state", "iss"}
    token = assistant.exchange(redirect_params(answer)["code"])
    assert token.status_code == 200, token.content


def test_the_screen_says_an_app_on_this_device_gets_the_answer(browser, register):
    assistant = register(browser, redirect_uris=[APP_REDIRECT])
    assistant.redirect_uri = APP_REDIRECT

    page = browser.get(assistant.authorize_url())

    assert "the app on this device that opens <strong>cursor:</strong> links" in page.content.decode()
    assert "form-action 'self' cursor:" in page["Content-Security-Policy"]


def test_an_apps_scheme_is_never_a_way_back_for_another_client(browser, register, consent, org):
    register(browser, redirect_uris=[APP_REDIRECT])  # another client owns this scheme
    web_client = register(browser)

    page = browser.get(web_client.authorize_url(redirect_uri=APP_REDIRECT))

    assert page.status_code == 400
    assert "cursor://" not in page.get("Location", "")
