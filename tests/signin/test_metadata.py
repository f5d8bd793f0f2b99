"""The two metadata documents: what they say, read back by the MCP SDK's own models (mcp.shared.auth)."""

from __future__ import annotations

import pytest
from django.test import Client
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata

from signin.discovery import canonical_resource

AS_METADATA = "/.well-known/oauth-authorization-server"
PR_METADATA = "/.well-known/oauth-protected-resource/mcp"
BASE = "http://testserver"


@pytest.fixture
def as_document(db) -> dict:
    response = Client().get(AS_METADATA)
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def pr_document(db) -> dict:
    response = Client().get(PR_METADATA)
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("issuer", BASE),
        ("authorization_endpoint", BASE + "/oauth/authorize/"),
        ("token_endpoint", BASE + "/oauth/token/"),
        ("registration_endpoint", BASE + "/oauth/register/"),
        ("revocation_endpoint", BASE + "/oauth/revoke/"),
        ("code_challenge_methods_supported", ["S256"]),
        ("scopes_supported", ["read", "write"]),
        ("response_types_supported", ["code"]),
        ("grant_types_supported", ["authorization_code", "refresh_token"]),
        ("token_endpoint_auth_methods_supported", ["none", "client_secret_post", "client_secret_basic"]),
        ("authorization_response_iss_parameter_supported", True),
        ("client_id_metadata_document_supported", True),
    ],
)
def test_the_authorization_server_metadata_says(as_document, field, value):
    assert as_document[field] == value


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("resource", BASE + "/mcp"),
        ("authorization_servers", [BASE]),
        ("scopes_supported", ["read", "write"]),
        ("bearer_methods_supported", ["header"]),
    ],
)
def test_the_protected_resource_metadata_says(pr_document, field, value):
    assert pr_document[field] == value


def test_the_sdk_reads_the_authorization_server_metadata(db):
    metadata = OAuthMetadata.model_validate_json(Client().get(AS_METADATA).content)

    assert str(metadata.issuer) == BASE
    assert str(metadata.registration_endpoint) == BASE + "/oauth/register/"
    assert metadata.code_challenge_methods_supported == ["S256"]


def test_the_sdk_reads_the_protected_resource_metadata(db):
    metadata = ProtectedResourceMetadata.model_validate_json(Client().get(PR_METADATA).content)

    assert str(metadata.resource) == BASE + "/mcp"
    assert [str(server) for server in metadata.authorization_servers] == [BASE]


def test_the_protected_resource_names_the_issuer_exactly_as_the_authorization_server_does(
    as_document, pr_document
):
    # RFC 8414 §3.3: clients compare these as strings; a trailing slash on one would fail them.
    assert pr_document["authorization_servers"] == [as_document["issuer"]]


@pytest.mark.parametrize(
    ("public_url", "host", "secure", "base"),
    [
        # UPTIMY_PUBLIC_URL names the host asked: its scheme holds even behind a proxy that says nothing.
        ("https://uptimy.example.com", "uptimy.example.com", False, "https://uptimy.example.com"),
        ("https://uptimy.example.com/", "uptimy.example.com", False, "https://uptimy.example.com"),
        # Another host (a test server on its own port, `make run` reached by another name): the request's own.
        ("https://uptimy.example.com", "127.0.0.1:8123", False, "http://127.0.0.1:8123"),
        ("http://127.0.0.1:8000", "localhost:8000", False, "http://localhost:8000"),
        ("http://127.0.0.1:8000", "uptimy.internal", True, "https://uptimy.internal"),
    ],
)
def test_the_documents_name_the_base_uptimy_was_reached_by(db, settings, public_url, host, secure, base):
    settings.UPTIMY_PUBLIC_URL = public_url
    settings.ALLOWED_HOSTS = ["*"]

    document = Client().get(AS_METADATA, HTTP_HOST=host, secure=secure).json()

    assert document["issuer"] == base
    assert Client().get(PR_METADATA, HTTP_HOST=host, secure=secure).json()["resource"] == base + "/mcp"


@pytest.mark.parametrize("path", [AS_METADATA, PR_METADATA])
def test_browser_based_clients_may_read_the_documents(db, path):
    assert Client().get(path)["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", [AS_METADATA, PR_METADATA])
def test_the_documents_answer_get_only(db, path):
    assert Client().post(path).status_code == 405


@pytest.mark.parametrize(
    ("requested", "recorded"),
    [
        (BASE + "/mcp", BASE + "/mcp"),
        (BASE + "/mcp/", BASE + "/mcp"),
        ("HTTP://TESTSERVER/mcp", BASE + "/mcp"),
        (BASE, None),
        (BASE + "/mcp/other", None),
        (BASE + "/api/v1/", None),
        ("https://testserver/mcp", None),
        ("http://testserver:8080/mcp", None),
        ("https://evil.example/mcp", None),
        (BASE + "/mcp?x=1", None),
        (BASE + "/mcp#top", None),
    ],
)
def test_a_resource_is_uptimys_mcp_server_or_none(requested, recorded):
    assert canonical_resource(requested, BASE) == recorded
