"""An assistant allowed, a token its client revokes, and the tokens a replayed code issued: each is in the organization's audit log."""

from __future__ import annotations

from django.test import Client

from monitors.models import AuditEvent
from tests.signin.conftest import redirect_params


def _signed_in(register, consent, browser, org):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    return assistant, code


def test_allowing_an_assistant_records_the_grant_by_the_person_with_its_scopes(
    register, consent, browser, org, owner_user
):
    assistant, code = _signed_in(register, consent, browser, org)

    event = AuditEvent.objects.get(action="oauth_grant.created")
    assert (event.organization_id, event.actor_kind, event.actor_user_id, event.target_id) == (
        org.pk,
        "person",
        owner_user.pk,
        assistant.client_id,
    )
    assert event.after["scopes"] == ["read", "write"]
    assert code not in str(event.after)


def test_denying_an_assistant_records_nothing(register, consent, browser, org):
    assistant = register(browser)

    consent(assistant, assistant.authorize_url(), organization=org, allow=False)

    assert not AuditEvent.objects.filter(action__startswith="oauth_grant.").exists()


def test_a_replayed_code_records_the_revocation_by_the_system_with_the_reason(
    register, consent, browser, org, owner_user
):
    assistant, code = _signed_in(register, consent, browser, org)
    tokens = assistant.exchange(code).json()

    assistant.exchange(code)

    event = AuditEvent.objects.get(action="oauth_grant.revoked")
    assert (event.organization_id, event.actor_kind, event.after) == (
        org.pk,
        "system",
        {"active": False, "reason": "authorization_code_replayed"},
    )
    assert event.address == "127.0.0.1"  # the replaying request's
    assert event.target_name == f"Test Assistant for {owner_user.email}"
    assert tokens["access_token"] not in str((event.before, event.after))


def test_a_token_its_client_revokes_is_recorded_as_the_clients_doing(
    register, consent, browser, org, owner_user
):
    assistant, code = _signed_in(register, consent, browser, org)
    tokens = assistant.exchange(code).json()

    answer = Client().post(
        "/oauth/revoke/", {"token": tokens["access_token"], "client_id": assistant.client_id}
    )

    assert answer.status_code == 200
    event = AuditEvent.objects.get(action="oauth_grant.revoked")
    assert (event.actor_kind, event.actor_oauth_client_id, event.actor_user_id, event.after) == (
        "oauth_client",
        assistant.client_id,
        owner_user.pk,
        {"active": False, "reason": "revoked_by_client"},
    )


def test_revoking_an_unknown_token_records_nothing(register, consent, browser, org):
    assistant, _ = _signed_in(register, consent, browser, org)

    Client().post("/oauth/revoke/", {"token": "never-issued", "client_id": assistant.client_id})

    assert not AuditEvent.objects.filter(action="oauth_grant.revoked").exists()
