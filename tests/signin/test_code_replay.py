"""A code exchanged twice revokes what it issued (RFC 6749 §4.1.2), and two racing exchanges never both keep a token."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from signin.models import CodeRedemption
from signin.services import code_redemption_claim, code_redemption_link, code_redemption_replayed
from signin.tokens import oauth_grant
from tests.signin.conftest import RESOURCE, Assistant, redirect_params


def code_for(register, consent, browser, org) -> tuple[Assistant, str]:
    assistant = register(browser)
    return assistant, redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]


def test_a_replayed_code_is_invalid_grant(register, consent, browser, org):
    assistant, code = code_for(register, consent, browser, org)
    assert assistant.exchange(code).status_code == 200

    replay = assistant.exchange(code)

    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"


def test_a_replayed_code_revokes_the_access_token_it_issued(register, consent, browser, org):
    assistant, code = code_for(register, consent, browser, org)
    tokens = assistant.exchange(code).json()
    assert oauth_grant(tokens["access_token"], resource=RESOURCE) is not None

    assistant.exchange(code)

    assert oauth_grant(tokens["access_token"], resource=RESOURCE) is None


def test_a_replayed_code_revokes_its_refresh_token_and_those_it_rotated_into(register, consent, browser, org):
    assistant, code = code_for(register, consent, browser, org)
    first = assistant.exchange(code).json()
    rotated = assistant.refresh(first["refresh_token"]).json()

    assistant.exchange(code)

    assert assistant.refresh(rotated["refresh_token"]).json()["error"] == "invalid_grant"
    assert oauth_grant(rotated["access_token"], resource=RESOURCE) is None


def test_a_refused_verifier_does_not_use_the_code_up(register, consent, browser, org):
    assistant, code = code_for(register, consent, browser, org)

    assert assistant.exchange(code, code_verifier="x" * 50).status_code == 400
    assert assistant.exchange(code).status_code == 200


def test_a_code_is_remembered_by_its_checksum_only(register, consent, browser, org):
    assistant, code = code_for(register, consent, browser, org)
    assistant.exchange(code)

    (kept,) = CodeRedemption.objects.values_list("code_checksum", flat=True)
    assert code not in kept


def test_a_replay_marked_before_the_exchange_links_its_tokens_makes_the_exchange_revoke_them(
    register, consent, browser, org
):
    # The interleaving of a race: the second exchange marks the code replayed while the first is
    # still issuing; the first exchange's link then finds it marked.
    assistant, code = code_for(register, consent, browser, org)
    application = assistant_application(assistant)
    redemption_id = code_redemption_claim(code=code, application=application)
    assert redemption_id is not None

    assert code_redemption_replayed(code=code, application=application, now=timezone.now())
    assert not code_redemption_link(redemption_id=redemption_id, access_token_id=None, token_family=None)


def assistant_application(assistant: Assistant):
    from oauth2_provider.models import get_application_model

    return get_application_model().objects.get(client_id=assistant.client_id)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_concurrent_exchanges_of_one_code_leave_at_most_one_working_token(
    postgres, register, consent, browser, org
):
    # On PostgreSQL only (the postgres fixture): SQLite serializes every write, so no race is lost there.
    assistant, code = code_for(register, consent, browser, org)
    start = threading.Barrier(2)
    answers: list[dict] = []

    def exchange() -> None:
        http = Client()
        racer = Assistant(http=http, client_id=assistant.client_id, verifier=assistant.verifier)
        start.wait()
        try:
            answers.append(racer.exchange(code).json())
        finally:
            connection.close()

    threads = [threading.Thread(target=exchange) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    working = [
        a for a in answers if "access_token" in a and oauth_grant(a["access_token"], resource=RESOURCE)
    ]
    assert len(answers) == 2
    assert len(working) <= 1
    assert sum("error" in a for a in answers) >= 1


def test_the_hourly_task_forgets_codes_once_whatever_they_issued_has_expired(
    register, consent, browser, org, settings
):
    from datetime import timedelta

    from oauth2_provider.settings import oauth2_settings

    from signin.tasks import clear_expired_tokens

    assistant, code = code_for(register, consent, browser, org)
    assistant.exchange(code)
    second, second_code = code_for(register, consent, browser, org)
    lifetime = timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS)
    CodeRedemption.objects.update(redeemed_at=timezone.now() - lifetime - timedelta(minutes=1))
    second.exchange(second_code)

    clear_expired_tokens()

    assert CodeRedemption.objects.count() == 1
