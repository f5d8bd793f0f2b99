"""Assistants running in a browser reach sign-in's machine endpoints from their own origin; the consent screen stays same-origin."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.signin.conftest import REDIRECT_URI

AS_METADATA = "/.well-known/oauth-authorization-server"
PR_METADATA = "/.well-known/oauth-protected-resource/mcp"
ASSISTANT_ORIGIN = "https://inspector.example"

OPEN_ENDPOINTS = [
    (AS_METADATA, "GET"),
    (PR_METADATA, "GET"),
    ("/oauth/register/", "POST"),
    ("/oauth/token/", "POST"),
    ("/oauth/revoke/", "POST"),
]


def preflight(path: str, method: str) -> object:
    return Client().options(
        path,
        HTTP_ORIGIN=ASSISTANT_ORIGIN,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD=method,
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type, mcp-protocol-version",
    )


@pytest.mark.parametrize(("path", "method"), OPEN_ENDPOINTS)
def test_a_preflight_is_answered_with_the_method_and_the_headers_clients_send(db, path, method):
    answer = preflight(path, method)

    assert answer.status_code == 204
    assert answer["Access-Control-Allow-Origin"] == "*"
    assert method in answer["Access-Control-Allow-Methods"].split(", ")
    allowed = {name.strip().lower() for name in answer["Access-Control-Allow-Headers"].split(",")}
    assert {"content-type", "mcp-protocol-version", "authorization"} <= allowed


def test_a_registration_answer_may_be_read_by_any_origin(db):
    answer = Client().post(
        "/oauth/register/",
        {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
        content_type="application/json",
        HTTP_ORIGIN=ASSISTANT_ORIGIN,
    )

    assert answer.status_code == 201
    assert answer["Access-Control-Allow-Origin"] == "*"


def test_a_refused_registration_lets_the_client_read_how_long_to_wait(db, settings):
    settings.UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR = 0

    answer = Client().post(
        "/oauth/register/", {}, content_type="application/json", HTTP_ORIGIN=ASSISTANT_ORIGIN
    )

    assert answer.status_code == 429
    assert answer["Access-Control-Allow-Origin"] == "*"
    assert "Retry-After" in answer["Access-Control-Expose-Headers"]


def test_a_token_error_may_be_read_by_any_origin(db):
    answer = Client().post(
        "/oauth/token/",
        {"grant_type": "authorization_code", "code": "not-a-code", "client_id": "nobody"},
        HTTP_ORIGIN=ASSISTANT_ORIGIN,
    )

    assert answer.status_code in (400, 401)
    assert answer["Access-Control-Allow-Origin"] == "*"
    assert json.loads(answer.content)["error"]


def test_the_consent_screen_is_not_open_to_other_origins(db):
    assert "Access-Control-Allow-Origin" not in preflight("/oauth/authorize/", "POST")
    assert "Access-Control-Allow-Origin" not in Client().get(
        "/oauth/authorize/", HTTP_ORIGIN=ASSISTANT_ORIGIN
    )
