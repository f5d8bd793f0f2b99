"""PKCE (RFC 7636): S256 is required; plain, a missing method and a missing challenge are refused before consent."""

from __future__ import annotations

import pytest

from tests.signin.conftest import challenge_of, consent_form_fields, redirect_params


@pytest.mark.parametrize(
    ("overrides", "description"),
    [
        ({"code_challenge_method": "plain"}, "plain"),
        # RFC 7636 §4.3 reads a challenge without a method as plain: refused as plain is.
        ({"code_challenge_method": None}, "no method"),
        ({"code_challenge": None, "code_challenge_method": None}, "no challenge"),
        ({"code_challenge_method": "S512"}, "unknown method"),
    ],
)
def test_an_authorization_without_an_s256_challenge_is_sent_back_refused(
    browser, register, overrides, description
):
    assistant = register(browser)

    response = assistant.http.get(assistant.authorize_url(**overrides))

    answer = redirect_params(response)
    assert answer["error"] == "invalid_request", description
    assert answer["state"] == assistant.state
    assert "code" not in answer


def test_a_plain_challenge_slipped_into_the_consent_post_gets_no_code(browser, register, org):
    assistant = register(browser)
    url = assistant.authorize_url()
    fields = consent_form_fields(assistant.http.get(url).content.decode())
    fields.update(
        code_challenge=assistant.verifier,
        code_challenge_method="plain",
        allow="Authorize",
        organization=str(org.public_id),
    )

    response = assistant.http.post(url, fields)

    answer = redirect_params(response)
    assert answer["error"] == "invalid_request"
    assert "code" not in answer


@pytest.mark.parametrize(
    ("verifier", "accepted"),
    [
        ("right", True),
        ("wrong", False),
        ("missing", False),
        ("the challenge itself", False),
    ],
)
def test_the_code_is_exchanged_only_with_the_verifier(browser, register, consent, org, verifier, accepted):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    sent = {
        "right": assistant.verifier,
        "wrong": "x" * 64,
        "missing": None,
        "the challenge itself": challenge_of(assistant.verifier),
    }[verifier]

    response = assistant.exchange(code, code_verifier=sent)

    assert (response.status_code == 200) is accepted, response.content
    if not accepted:
        assert response.json()["error"] in {"invalid_grant", "invalid_request"}


def test_a_code_is_exchanged_once(browser, register, consent, org):
    assistant = register(browser)
    code = redirect_params(consent(assistant, assistant.authorize_url(), organization=org))["code"]
    assert assistant.exchange(code).status_code == 200

    again = assistant.exchange(code)

    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
