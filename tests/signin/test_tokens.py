"""``oauth_grant``: the MCP endpoint's one call, and every way a token stops granting."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from monitors.models import Membership
from signin.tokens import OAuthGrant, oauth_grant
from tests.signin.conftest import RESOURCE, redirect_params


def hashed(token: str) -> object:
    import hashlib

    return get_access_token_model().objects.get(token_checksum=hashlib.sha256(token.encode()).hexdigest())


def test_a_good_token_grants_its_user_organization_and_scopes(sign_in, org, owner_user):
    answer = sign_in(org)

    assert oauth_grant(answer["access_token"], resource=RESOURCE) == OAuthGrant(
        organization_id=org.pk, user_id=owner_user.pk, scopes=frozenset({"read", "write"})
    )


def _expire(token: str) -> None:
    row = hashed(token)
    row.expires = timezone.now() - timedelta(seconds=1)
    row.save()


def _revoke(token: str) -> None:
    row = hashed(token)
    response = Client().post("/oauth/revoke/", {"token": token, "client_id": row.application.client_id})
    assert response.status_code == 200


def _leave(token: str) -> None:
    Membership.objects.filter(user=hashed(token).user).delete()


def _deactivate(token: str) -> None:
    user = hashed(token).user
    user.is_active = False
    user.save()


def _delete_organization(token: str) -> None:
    from monitors.models import Organization

    Organization.objects.filter(pk=hashed(token).uptimy_organization.organization_id).delete()


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda token: "not-a-token", id="unknown"),
        pytest.param(lambda token: "", id="empty"),
        pytest.param(lambda token: token + "x", id="one character more"),
        pytest.param(_expire, id="expired"),
        pytest.param(_revoke, id="revoked"),
        pytest.param(_leave, id="membership removed"),
        pytest.param(_deactivate, id="user deactivated"),
        pytest.param(_delete_organization, id="organization deleted"),
    ],
)
def test_a_spoiled_token_grants_nothing(sign_in, org, spoil):
    token = sign_in(org)["access_token"]

    spoiled = spoil(token)  # a new string to present, or None: the token itself, spoiled in place
    presented = token if spoiled is None else spoiled

    assert oauth_grant(presented, resource=RESOURCE) is None


def test_a_member_demoted_to_viewer_keeps_read_only(sign_in, org, owner_user):
    token = sign_in(org)["access_token"]

    Membership.objects.filter(user=owner_user, organization=org).update(role=Membership.Role.VIEWER)

    grant = oauth_grant(token, resource=RESOURCE)
    assert grant is not None
    assert grant.scopes == {"read"}
    assert not grant.can_write


def test_a_token_issued_outside_the_consent_screen_grants_nothing(db, owner_user):
    # A token the toolkit stored without an organization (an admin's, another grant's): not Uptimy's to honour.
    application = get_application_model().objects.create(
        name="manual", client_type="public", authorization_grant_type="authorization-code", redirect_uris=""
    )
    token = get_access_token_model().objects.create(
        user=owner_user,
        application=application,
        token="a-manual-token",
        expires=timezone.now() + timedelta(hours=1),
        scope="read write",
        resource=[RESOURCE],
    )

    assert oauth_grant("a-manual-token", resource=RESOURCE) is None
    assert token.pk


def test_tokens_are_stored_hashed(sign_in, org):
    token = sign_in(org)["access_token"]

    assert hashed(token).token == ""


def test_a_removed_member_cannot_refresh(browser, register, consent, org, owner_user):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    tokens = assistant.exchange(code).json()
    Membership.objects.filter(user=owner_user).delete()

    response = assistant.refresh(tokens["refresh_token"])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_a_refresh_token_used_twice_revokes_the_family(browser, register, consent, org):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    first = assistant.exchange(code).json()
    second = assistant.refresh(first["refresh_token"]).json()

    replay = assistant.refresh(first["refresh_token"])

    assert replay.status_code == 400
    assert assistant.refresh(second["refresh_token"]).status_code == 400


def test_no_code_token_or_secret_reaches_a_log(caplog, register, consent, browser, org):
    caplog.set_level(logging.DEBUG)
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    tokens = assistant.exchange(code).json()
    assistant.refresh(tokens["refresh_token"])
    assistant.exchange(code)  # a refused replay logs its 400

    for secret in (code, tokens["access_token"], tokens["refresh_token"], assistant.verifier):
        assert secret not in caplog.text


def test_the_hourly_task_clears_expired_tokens_and_their_organizations(sign_in, org, settings):
    from signin.models import AccessTokenOrganization
    from signin.tasks import clear_expired_tokens

    kept = sign_in(org)["access_token"]
    dormant = hashed(sign_in(org)["access_token"])
    # Expired longer ago than a refresh token lasts unused: the pair is spent.
    dormant.expires = timezone.now() - timedelta(seconds=settings.UPTIMY_OAUTH_REFRESH_TOKEN_SECONDS + 60)
    dormant.save()

    clear_expired_tokens()

    assert oauth_grant(kept, resource=RESOURCE) is not None
    assert not get_access_token_model().objects.filter(pk=dormant.pk).exists()
    assert AccessTokenOrganization.objects.count() == 1
    assert settings.CELERY_BEAT_SCHEDULE["clear-expired-tokens"]["task"] == "signin.clear_expired_tokens"


def test_a_lookup_reads_two_queries(sign_in, org, django_assert_num_queries):
    # The MCP endpoint calls this on every request: the token with its user and organization, then the role.
    token = sign_in(org)["access_token"]

    with django_assert_num_queries(2):
        assert oauth_grant(token, resource=RESOURCE) is not None
