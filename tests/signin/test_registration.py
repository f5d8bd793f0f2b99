"""Client registration (RFC 7591): what is accepted, what is refused with which error, and the rate limit."""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import check_password, get_hasher, identify_hasher
from django.test import Client
from oauth2_provider.models import get_application_model

from signin.registration import RegistrationRefused, client_request

GOOD = {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "client_name": "Claude"}


def refusal(body: object) -> tuple[str, str]:
    with pytest.raises(RegistrationRefused) as refused:
        client_request(body)
    return refused.value.error, refused.value.description


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "https://chatgpt.com/connector_platform_oauth_redirect",
        "http://127.0.0.1:33418/callback",
        "http://127.0.0.1/callback",
        "http://[::1]:8080/callback",
        "http://localhost:6274/oauth/callback",
        "http://127.1.2.3:9/cb",
        "https://example.com/cb?tenant=a",
        "cursor://anysphere.cursor-mcp/oauth/callback",  # an app's own scheme (RFC 8252 §7.1)
        "com.example.app:/oauth2redirect/example-provider",  # RFC 8252's reverse-domain form
    ],
)
def test_a_redirect_uri_is_https_http_to_loopback_or_an_apps_own_scheme(uri):
    assert client_request({"redirect_uris": [uri]}).redirect_uris == (uri,)


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("http://example.com/callback", "not loopback; use https"),
        ("http://192.168.1.10/callback", "not loopback; use https"),
        ("http://localhost.evil.example/cb", "not loopback; use https"),
        ("javascript:alert(1)", "absolute https URL"),
        ("file:///etc/passwd", "absolute https URL"),
        ("data:text/html,<script>alert(1)</script>", "absolute https URL"),
        ("vbscript:msgbox", "absolute https URL"),
        ("ws://127.0.0.1/cb", "absolute https URL"),
        ("myapp:", "absolute https URL"),  # a scheme with nothing after it
        ("myapp://user:pass@callback", "user name or password"),
        ("myapp://callback#fragment", "must not have a fragment"),
        ("/relative/callback", "absolute https URL"),
        ("https:///no-host", "absolute https URL"),
        ("https://example.com/cb#fragment", "must not have a fragment"),
        ("https://user:pass@example.com/cb", "user name or password"),
        ("https://example.com:notaport/cb", "is not a URL"),
        ("https://example.com/" + "a" * 2000, "longer than 2000"),
    ],
)
def test_a_bad_redirect_uri_is_invalid_redirect_uri_naming_it(uri, says):
    error, description = refusal({"redirect_uris": ["https://fine.example/cb", uri]})

    assert error == "invalid_redirect_uri"
    assert description.startswith("redirect_uris[1] ")
    assert says in description


@pytest.mark.parametrize(
    ("body", "error", "says"),
    [
        ([], "invalid_client_metadata", "JSON object"),
        ({}, "invalid_redirect_uri", "redirect_uris is required"),
        ({"redirect_uris": []}, "invalid_redirect_uri", "non-empty array"),
        ({"redirect_uris": "https://a.example/cb"}, "invalid_redirect_uri", "non-empty array"),
        ({"redirect_uris": [7]}, "invalid_redirect_uri", "redirect_uris[0] must be a string"),
        ({"redirect_uris": ["https://a.example/cb"] * 11}, "invalid_redirect_uri", "at most 10"),
        (
            {**GOOD, "grant_types": ["client_credentials"]},
            "invalid_client_metadata",
            "client_credentials not supported",
        ),
        (
            {**GOOD, "grant_types": ["implicit", "authorization_code"]},
            "invalid_client_metadata",
            "implicit not supported",
        ),
        (
            {**GOOD, "grant_types": ["refresh_token"]},
            "invalid_client_metadata",
            "must include authorization_code",
        ),
        ({**GOOD, "grant_types": "authorization_code"}, "invalid_client_metadata", "array of strings"),
        ({**GOOD, "response_types": ["token"]}, "invalid_client_metadata", 'response_types must be ["code"]'),
        (
            {**GOOD, "token_endpoint_auth_method": "private_key_jwt"},
            "invalid_client_metadata",
            "token_endpoint_auth_method",
        ),
        ({**GOOD, "scope": "admin read"}, "invalid_client_metadata", "scope: admin unknown"),
        ({**GOOD, "scope": ["read"]}, "invalid_client_metadata", "space-separated"),
        ({**GOOD, "client_name": 5}, "invalid_client_metadata", "client_name must be a string"),
        ({**GOOD, "client_name": "x" * 201}, "invalid_client_metadata", "at most 200"),
        ({**GOOD, "client_name": "Claude\u202eevil"}, "invalid_client_metadata", "printable"),
    ],
)
def test_bad_metadata_is_refused_with_its_rfc_7591_error(body, error, says):
    got_error, description = refusal(body)

    assert got_error == error
    assert says in description


@pytest.mark.parametrize(
    ("body", "auth_method", "public"),
    [
        (GOOD, "client_secret_basic", False),  # RFC 7591 §2: the default
        ({**GOOD, "token_endpoint_auth_method": "none"}, "none", True),
        ({**GOOD, "token_endpoint_auth_method": "client_secret_post"}, "client_secret_post", False),
    ],
)
def test_the_auth_method_decides_public_or_confidential(body, auth_method, public):
    client = client_request(body)

    assert (client.auth_method, client.is_public) == (auth_method, public)


def test_unknown_fields_are_ignored():
    client = client_request({**GOOD, "logo_uri": "https://evil.example/logo.png", "contacts": ["a@b.c"]})

    assert client.client_name == "Claude"


def register(body: object, **extra) -> object:
    return Client().post("/oauth/register/", body, content_type="application/json", **extra)


def test_a_public_client_is_registered_without_a_secret(db):
    response = register({**GOOD, "token_endpoint_auth_method": "none"})

    assert response.status_code == 201
    answer = response.json()
    assert set(answer) == {
        "client_id",
        "client_id_issued_at",
        "client_name",
        "redirect_uris",
        "grant_types",
        "response_types",
        "token_endpoint_auth_method",
    }
    assert answer["token_endpoint_auth_method"] == "none"
    assert answer["redirect_uris"] == GOOD["redirect_uris"]
    application = get_application_model().objects.get(client_id=answer["client_id"])
    assert (application.client_type, application.name, application.skip_authorization) == (
        "public",
        "Claude",
        False,
    )
    assert response["Cache-Control"] == "no-store"


def test_a_confidential_clients_secret_is_answered_once_and_stored_hashed(db):
    answer = register(GOOD).json()

    assert answer["client_secret"]
    assert answer["client_secret_expires_at"] == 0
    stored = get_application_model().objects.get(client_id=answer["client_id"]).client_secret
    assert answer["client_secret"] not in stored
    assert identify_hasher(stored).algorithm == get_hasher().algorithm
    assert check_password(answer["client_secret"], stored)


@pytest.mark.parametrize(
    ("body", "content_type", "error"),
    [
        ("{not json", "application/json", "not valid JSON"),
        ("redirect_uris=https://a.example/cb", "application/x-www-form-urlencoded", "application/json"),
        ({"redirect_uris": ["http://example.com/cb"]}, "application/json", "redirect_uris[0] uses http"),
    ],
)
def test_a_bad_registration_answers_400_with_the_error(db, body, content_type, error):
    response = Client().post("/oauth/register/", body, content_type=content_type)

    assert response.status_code == 400
    assert error in response.json()["error_description"]
    assert not get_application_model().objects.exists()


def test_a_large_body_is_refused(db):
    response = register({**GOOD, "padding": "x" * 20_000})

    assert response.status_code == 400
    assert "at most 16384 bytes" in response.json()["error_description"]


def test_registration_is_post_only(db):
    assert Client().get("/oauth/register/").status_code == 405


def test_registrations_are_limited_per_address(db, settings):
    settings.UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR = 3
    for _ in range(3):
        assert register(GOOD, REMOTE_ADDR="203.0.113.9").status_code == 201

    refused = register(GOOD, REMOTE_ADDR="203.0.113.9")

    assert refused.status_code == 429
    assert refused.json()["error"] == "temporarily_unavailable"
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert register(GOOD, REMOTE_ADDR="203.0.113.10").status_code == 201
    assert get_application_model().objects.count() == 4


def test_a_limit_of_zero_closes_registration(db, settings):
    settings.UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR = 0

    refused = register(GOOD)

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) == 3600
    assert not get_application_model().objects.exists()
