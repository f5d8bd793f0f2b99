"""Say where Uptimy's sign-in is: the base address, the MCP resource, and the two metadata documents.

The documents are plain dicts built from the base address, so the rules are tested without a
request. ``public_base`` is the one place the base is decided; the MCP endpoint's 401 challenge
must name the same base, or a client's resource check (RFC 9728 §3.3) fails.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port

MCP_PATH = "/mcp"
SCOPES = ("read", "write")
AUTHORIZE_PATH = "/oauth/authorize/"
TOKEN_PATH = "/oauth/token/"
REGISTER_PATH = "/oauth/register/"
REVOKE_PATH = "/oauth/revoke/"
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource" + MCP_PATH


def public_base(request: HttpRequest) -> str:
    """Return Uptimy's address as this request reached it (see :func:`public_base_for`)."""
    return public_base_for(request.scheme or "http", request.get_host())


def public_base_for(scheme: str, host: str) -> str:
    """Return Uptimy's address for a request to ``host``: UPTIMY_PUBLIC_URL when it names this host, else the request's own.

    A server behind a proxy that drops X-Forwarded-Proto still publishes its https address; a
    test server on a free port, or `make run` reached by another name, publishes the one it was
    reached by, so the documents' URLs work for the client that read them. The sign-in documents
    and the MCP endpoint both take their base here: a token's resource must match on both sides.
    """
    configured_url = str(settings.UPTIMY_PUBLIC_URL).rstrip("/")
    configured = urlsplit(configured_url)
    domain, port = split_domain_port(host)
    default_port = {"http": 80, "https": 443}.get(configured.scheme)
    same_port = not port or (port.isdigit() and int(port) == (configured.port or default_port))
    if configured.hostname and domain == configured.hostname.lower() and same_port:
        return configured_url
    return f"{scheme}://{host}"


def mcp_resource(base: str) -> str:
    """Return the MCP server's resource identifier (RFC 8707, RFC 9728): the endpoint's URL."""
    return base + MCP_PATH


def canonical_resource(requested: str, base: str) -> str | None:
    """Return the resource a client named, as Uptimy records it, or None when it is not Uptimy's MCP server.

    A trailing slash is forgiven (clients differ on it); scheme and host compare case-blind, as URLs do.
    """
    parts = urlsplit(requested.strip())
    if parts.query or parts.fragment:
        return None
    expected = urlsplit(mcp_resource(base))
    same_origin = (parts.scheme.lower(), parts.netloc.lower()) == (expected.scheme, expected.netloc.lower())
    if same_origin and parts.path.rstrip("/") == expected.path:
        return mcp_resource(base)
    return None


def authorization_server_metadata(base: str) -> dict[str, Any]:
    """Return the RFC 8414 document: what an assistant needs to register and sign in."""
    return {
        "issuer": base,
        "authorization_endpoint": base + AUTHORIZE_PATH,
        "token_endpoint": base + TOKEN_PATH,
        "registration_endpoint": base + REGISTER_PATH,
        "revocation_endpoint": base + REVOKE_PATH,
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        # RFC 9207: every answer to the client's redirect URI carries iss, against mix-up attacks.
        "authorization_response_iss_parameter_supported": True,
        # draft-ietf-oauth-client-id-metadata-document: an https client_id is fetched (signin/services.py).
        "client_id_metadata_document_supported": True,
    }


def protected_resource_metadata(base: str) -> dict[str, Any]:
    """Return the RFC 9728 document of the MCP server: which server signs in for it, and how tokens come."""
    return {
        "resource": mcp_resource(base),
        "authorization_servers": [base],
        "scopes_supported": list(SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": "Uptimy MCP server",
    }
