"""The rules of a Client ID Metadata Document, as tables: its URL, its fields, how long it stays fresh."""

from __future__ import annotations

import json
from typing import Any

import pytest

from signin.client_metadata import (
    MAX_DOCUMENT_BYTES,
    MAX_FRESH_SECONDS,
    MIN_FRESH_SECONDS,
    ClientMetadataRefused,
    client_document,
    client_id_url_problem,
    freshness_seconds,
    is_metadata_url,
)

URL = "https://assistant.example.com/oauth/client.json"


def document(**fields: Any) -> bytes:
    body: dict[str, Any] = {
        "client_id": URL,
        "client_name": "Example Assistant",
        "redirect_uris": ["https://assistant.example.com/callback"],
    }
    body.update(fields)
    return json.dumps({k: v for k, v in body.items() if v is not None}).encode()


@pytest.mark.parametrize(
    ("client_id", "is_url"),
    [
        (URL, True),
        ("HTTPS://assistant.example.com/c", True),
        ("http://assistant.example.com/c", False),
        ("Kx8dYqE2c9Lr0", False),
        ("", False),
    ],
)
def test_an_https_client_id_names_a_metadata_document(client_id, is_url):
    assert is_metadata_url(client_id) is is_url


@pytest.mark.parametrize(
    ("client_id", "problem"),
    [
        (URL, None),
        ("https://assistant.example.com:8443/client", None),
        ("https://assistant.example.com/", "must have a path (https://host/ alone is not a client)"),
        ("https://assistant.example.com", "must have a path (https://host/ alone is not a client)"),
        ("https://assistant.example.com/a/../client", "must not have . or .. path segments"),
        ("https://assistant.example.com/./client", "must not have . or .. path segments"),
        ("https://assistant.example.com/client#x", "must not have a fragment"),
        ("https://assistant.example.com/client?v=1", "must not have a query string"),
        ("https://me:pw@assistant.example.com/client", "must not carry a user name or password"),
        ("https:///client", "must be an https URL with a host"),
        ("https://assistant.example.com:99999/client", "is not a URL"),
        ("https://assistant.example.com/a b", "contains spaces or control characters"),
        ("https://assistant.example.com/\x00", "contains spaces or control characters"),
        ("https://assistant.example.com/" + "a" * 226, "is longer than 255 characters"),
        ("https://assistant.example.com/" + "a" * 225, None),
    ],
)
def test_client_id_url_rules(client_id, problem):
    assert client_id_url_problem(client_id) == problem


def test_a_valid_document_gives_the_name_and_redirect_uris():
    checked = client_document(URL, document(scope="read"))

    assert checked.client_name == "Example Assistant"
    assert checked.redirect_uris == ("https://assistant.example.com/callback",)
    assert checked.scope == "read"
    assert checked.host == "assistant.example.com"


@pytest.mark.parametrize(
    ("body", "reason", "words"),
    [
        (document(client_id=URL + "x"), "client_id_mismatch", "exactly the URL it is published at"),
        (
            document(client_id="https://Assistant.example.com/oauth/client.json"),
            "client_id_mismatch",
            "exactly",
        ),
        (document(client_id=None), "client_id_mismatch", "exactly"),
        (document(client_secret="s3cret"), "secret_in_document", "must not hold client_secret"),
        (document(client_secret_expires_at=0), "secret_in_document", "client_secret_expires_at"),
        (document(token_endpoint_auth_method="private_key_jwt"), "auth_method", "does not read client keys"),
        (document(token_endpoint_auth_method="client_secret_basic"), "auth_method", "needs a shared secret"),
        (document(token_endpoint_auth_method="client_secret_post"), "auth_method", "needs a shared secret"),
        (document(token_endpoint_auth_method="tls_client_auth"), "auth_method", "must be none"),
        (document(client_name=None), "invalid_document", "must give a client_name"),
        (document(client_name="   "), "invalid_document", "must give a client_name"),
        (document(client_name="x" * 201), "invalid_document", "client_name may be at most 200"),
        (document(redirect_uris=None), "invalid_document", "redirect_uris is required"),
        (document(redirect_uris=[]), "invalid_document", "non-empty array"),
        (document(redirect_uris=["http://evil.example/cb"]), "invalid_document", "not loopback"),
        (document(redirect_uris=["javascript://x/alert(1)"]), "invalid_document", "redirect_uris[0]"),
        (document(redirect_uris=["https://a.example/cb#f"]), "invalid_document", "fragment"),
        (document(grant_types=["client_credentials"]), "invalid_document", "not supported"),
        (document(response_types=["token"]), "invalid_document", "response_types"),
        (document(scope="admin"), "invalid_document", "admin unknown"),
        (b"[1, 2]", "invalid_document", "must be a JSON object"),
        (b"{not json", "not_json", "not valid JSON"),
        (b"\xff\xfe\x00", "not_json", "not valid JSON"),
        (b"[" * 100 + b"]" * 100, "too_deep", "too deep"),
        (b" " * (MAX_DOCUMENT_BYTES + 1), "too_large", f"larger than {MAX_DOCUMENT_BYTES} bytes"),
    ],
)
def test_document_rules(body, reason, words):
    with pytest.raises(ClientMetadataRefused) as refused:
        client_document(URL, body)

    assert refused.value.reason == reason
    assert words in refused.value.description


def test_a_document_of_exactly_the_size_cap_is_read():
    body = document()
    padded = body[:-1] + b" " * (MAX_DOCUMENT_BYTES - len(body)) + b"}"

    assert len(padded) == MAX_DOCUMENT_BYTES
    assert client_document(URL, padded).client_name == "Example Assistant"


def test_an_app_scheme_redirect_uri_is_allowed_as_at_registration():
    checked = client_document(URL, document(redirect_uris=["cursor://anysphere.cursor-mcp/oauth/callback"]))

    assert checked.redirect_uris == ("cursor://anysphere.cursor-mcp/oauth/callback",)


@pytest.mark.parametrize(
    ("cache_control", "seconds"),
    [
        (None, MIN_FRESH_SECONDS),
        ("", MIN_FRESH_SECONDS),
        ("max-age=3600", 3600),
        ("public, max-age=600", 600),
        ('max-age="900"', 900),
        ("max-age=299", MIN_FRESH_SECONDS),
        ("max-age=300", 300),
        ("max-age=86400", 86400),
        ("max-age=86401", MAX_FRESH_SECONDS),
        ("max-age=99999999999999999999", MAX_FRESH_SECONDS),
        ("max-age=3600, no-store", MIN_FRESH_SECONDS),
        ("no-cache", MIN_FRESH_SECONDS),
        ("max-age=-5", MIN_FRESH_SECONDS),
        ("max-age=１２３４", MIN_FRESH_SECONDS),
    ],
)
def test_freshness_follows_cache_control_within_bounds(cache_control, seconds):
    assert freshness_seconds(cache_control) == seconds
