"""Resource indicators (RFC 8707): a token is bound to Uptimy's MCP resource and accepted for it alone."""

from __future__ import annotations

import pytest

from signin.tokens import oauth_grant
from tests.signin.conftest import BASE, RESOURCE, redirect_params

OTHER = "https://other-server.example/mcp"


@pytest.mark.parametrize(
    ("asked", "recorded"),
    [
        (RESOURCE, RESOURCE),
        (RESOURCE + "/", RESOURCE),
        # A client that sends no resource (a 2025-03-26 client) gets a token for the one resource there is.
        (None, RESOURCE),
    ],
)
def test_the_token_records_the_mcp_resource(sign_in, org, asked, recorded):
    answer = sign_in(org, resource=asked)

    assert oauth_grant(answer["access_token"], resource=recorded) is not None


@pytest.mark.parametrize("resource", [OTHER, BASE, BASE + "/api/v1/", RESOURCE + "?x=1"])
def test_a_token_for_the_mcp_resource_is_refused_elsewhere(sign_in, org, resource):
    answer = sign_in(org)

    assert oauth_grant(answer["access_token"], resource=resource) is None


@pytest.mark.parametrize("resource", [OTHER, BASE, BASE + "/mcp/tools", "not a url"])
def test_an_authorization_for_another_resource_is_invalid_target(browser, register, resource):
    assistant = register(browser)

    response = assistant.http.get(assistant.authorize_url(resource=resource))

    answer = redirect_params(response)
    assert answer["error"] == "invalid_target"
    assert answer["state"] == assistant.state
    assert answer["iss"] == BASE


def test_a_consent_post_naming_another_resource_grants_nothing(browser, register, org):
    from tests.signin.conftest import consent_form_fields

    assistant = register(browser)
    url = assistant.authorize_url()
    fields = consent_form_fields(assistant.http.get(url).content.decode())
    fields.update(resource=OTHER, allow="Authorize", organization=str(org.public_id))

    response = assistant.http.post(url, fields)

    assert response.status_code == 400
    assert b"signs in for its MCP server only" in response.content


def test_the_token_request_cannot_move_the_code_to_another_resource(browser, register, consent, org):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]

    response = assistant.exchange(code, resource=OTHER)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_target"


def test_a_refreshed_token_keeps_the_resource_and_the_organization(browser, register, consent, org):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    first = assistant.exchange(code).json()

    refreshed = assistant.refresh(first["refresh_token"])

    assert refreshed.status_code == 200, refreshed.content
    grant = oauth_grant(refreshed.json()["access_token"], resource=RESOURCE)
    assert grant is not None
    assert grant.organization_id == org.pk
    assert oauth_grant(first["access_token"], resource=RESOURCE) is None  # rotated away


def test_a_refresh_cannot_widen_the_resource(browser, register, consent, org):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    first = assistant.exchange(code).json()

    refreshed = assistant.refresh(first["refresh_token"], resource=OTHER)

    assert refreshed.status_code == 400
    assert refreshed.json()["error"] == "invalid_target"
