"""Sign-in discovery for keyless checks: WWW-Authenticate, RFC 9728, RFC 8414 / OIDC, the verdict."""

from __future__ import annotations

import httpx
import pytest
from probe_support import URL, mcp, run

from probes.oauth import (
    Challenge,
    as_metadata_urls,
    parse_www_authenticate,
    prm_candidates,
    resource_metadata_url,
    resource_verdict,
)
from probes.runner import outcome_to_json
from probes.types import Access, FailureKind, SigninDiscovery, Status

PRM_PATH = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
PRM_ROOT = "https://mcp.example.com/.well-known/oauth-protected-resource"
AS = "https://login.example.com"
ORIGIN = "https://mcp.example.com"
LEGACY_OAUTH = f"{ORIGIN}/.well-known/oauth-authorization-server"
LEGACY_OIDC = f"{ORIGIN}/.well-known/openid-configuration"


def as_doc(issuer: str, **extra: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "code_challenge_methods_supported": ["S256"],
        "registration_endpoint": f"{issuer}/register",
    }
    doc.update(extra)
    return doc


@pytest.fixture
def protected(mock):
    """Make URL answer 401 to every POST; well-known URLs 404 unless a test routes them first."""
    mock.post(URL).mock(return_value=httpx.Response(401, headers={"www-authenticate": 'Bearer realm="mcp"'}))
    return mock


def fallback_404(mock) -> None:
    mock.get(url__regex=r".*/\.well-known/.*").mock(return_value=httpx.Response(404))


# --- WWW-Authenticate ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            ['Bearer resource_metadata="https://a/x"'],
            [Challenge("Bearer", {"resource_metadata": "https://a/x"})],
        ),
        (
            ['Bearer realm="r", error="invalid_token", error_description="a, b \\"c\\""'],
            [Challenge("Bearer", {"realm": "r", "error": "invalid_token", "error_description": 'a, b "c"'})],
        ),
        (
            ['Basic realm="x", Bearer scope="a b", Resource_Metadata=https://m/p'],
            [
                Challenge("Basic", {"realm": "x"}),
                Challenge("Bearer", {"scope": "a b", "resource_metadata": "https://m/p"}),
            ],
        ),
        (["Negotiate abc123==, Bearer"], [Challenge("Negotiate", {}, "abc123=="), Challenge("Bearer")]),
        (["DPoP algs=ES256", "Bearer"], [Challenge("DPoP", {"algs": "ES256"}), Challenge("Bearer")]),
        (['Bearer realm = "spaced" , scope=x'], [Challenge("Bearer", {"realm": "spaced", "scope": "x"})]),
        ([", ,Bearer"], [Challenge("Bearer")]),
        (['Bearer error="unterminated'], [Challenge("Bearer", {"error": "unterminated"})]),
    ],
)
def test_www_authenticate_parser(values, expected):
    assert parse_www_authenticate(values) == expected


def test_resource_metadata_prefers_a_bearer_challenge():
    challenges = parse_www_authenticate(
        ['DPoP resource_metadata="https://d/x", Bearer resource_metadata="https://b/x"']
    )
    assert resource_metadata_url(challenges) == "https://b/x"


# --- URL construction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mcp_url", "header", "expected"),
    [
        (URL, None, [(PRM_PATH, URL), (PRM_ROOT, "https://mcp.example.com")]),
        (
            URL,
            "https://meta.example.com/prm",
            [("https://meta.example.com/prm", URL), (PRM_PATH, URL), (PRM_ROOT, "https://mcp.example.com")],
        ),
        ("https://mcp.example.com/", None, [(PRM_ROOT, "https://mcp.example.com")]),
        (
            "https://mcp.example.com/mcp/",
            None,
            [(PRM_PATH + "/", URL + "/"), (PRM_PATH, URL), (PRM_ROOT, "https://mcp.example.com")],
        ),
        (
            "https://mcp.example.com:8443/a/b?t=1",
            None,
            [
                (
                    "https://mcp.example.com:8443/.well-known/oauth-protected-resource/a/b?t=1",
                    "https://mcp.example.com:8443/a/b",
                ),
                (
                    "https://mcp.example.com:8443/.well-known/oauth-protected-resource",
                    "https://mcp.example.com:8443",
                ),
            ],
        ),
    ],
)
def test_prm_candidates_in_rfc_9728_order(mcp_url, header, expected):
    got = [(str(url), resource) for url, resource in prm_candidates(httpx.URL(mcp_url), header)]
    assert got == expected


@pytest.mark.parametrize(
    ("issuer", "expected"),
    [
        (AS, [f"{AS}/.well-known/oauth-authorization-server", f"{AS}/.well-known/openid-configuration"]),
        (
            AS + "/",
            [f"{AS}/.well-known/oauth-authorization-server", f"{AS}/.well-known/openid-configuration"],
        ),
        (
            AS + "/tenant1/",
            [
                f"{AS}/.well-known/oauth-authorization-server/tenant1",
                f"{AS}/.well-known/openid-configuration/tenant1",
                f"{AS}/tenant1/.well-known/openid-configuration",
            ],
        ),
    ],
)
def test_authorization_server_metadata_urls_in_order(issuer, expected):
    assert [str(url) for url in as_metadata_urls(httpx.URL(issuer))] == expected


@pytest.mark.parametrize(
    ("resource", "usable", "warned"),
    [
        (URL, True, False),
        ("https://mcp.example.com", True, False),  # the root well-known's own identifier
        (URL + "/", True, True),
        ("https://mcp.example.com/", True, True),
        ("https://mcp.example.com/other", False, False),
        ("https://evil.example.com/mcp", False, False),
        ("http://mcp.example.com/mcp", False, False),
        ("not a url", False, False),
    ],
)
def test_resource_validation_policy(resource, usable, warned):
    ok, warning = resource_verdict(resource, httpx.URL(URL), "https://mcp.example.com")
    assert ok is usable
    assert (warning is not None) is warned


# --- discovery flows -------------------------------------------------------------------------


def test_prm_named_by_the_header_and_root_issuer_is_discoverable(mock):
    mock.post(URL).mock(
        return_value=httpx.Response(
            401, headers={"www-authenticate": 'Bearer resource_metadata="https://meta.example.com/prm"'}
        )
    )
    mock.get("https://meta.example.com/prm").respond(json={"resource": URL, "authorization_servers": [AS]})
    mock.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS))
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == AS
    assert outcome.tool_count is None
    assert outcome.warnings == ()


def test_path_aware_prm_is_found_without_a_header(protected):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS))
    assert run(mcp()).signin_server == AS


def test_root_prm_is_found_after_the_path_aware_one_fails(protected):
    protected.get(PRM_PATH).respond(404)
    protected.get(PRM_ROOT).respond(
        json={"resource": "https://mcp.example.com", "authorization_servers": [AS]}
    )
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS))
    assert run(mcp()).status is Status.UP


def test_an_html_page_at_a_well_known_url_counts_as_not_found(protected):
    protected.get(PRM_PATH).respond(200, html="<html>app shell</html>")
    protected.get(PRM_ROOT).respond(json={"resource": URL, "authorization_servers": [AS]})
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS))
    assert run(mcp()).status is Status.UP


def test_a_broken_header_url_falls_back_to_well_known_with_a_warning(mock):
    mock.post(URL).mock(
        return_value=httpx.Response(
            401, headers={"www-authenticate": 'Bearer resource_metadata="https://mcp.example.com/gone"'}
        )
    )
    mock.get("https://mcp.example.com/gone").respond(404)
    mock.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    mock.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS))
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert any("resource_metadata URL" in warning for warning in outcome.warnings)


@pytest.mark.parametrize(
    "found_at",
    [
        f"{AS}/.well-known/oauth-authorization-server/tenant1",
        f"{AS}/.well-known/openid-configuration/tenant1",
        f"{AS}/tenant1/.well-known/openid-configuration",
    ],
)
def test_issuer_with_a_path_is_found_at_each_rfc_8414_and_oidc_url(protected, found_at):
    issuer = f"{AS}/tenant1"
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [issuer]})
    protected.get(found_at).respond(json=as_doc(issuer))
    fallback_404(protected)
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert outcome.signin_server == issuer


def test_issuer_without_a_path_is_found_by_openid_configuration(protected):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    protected.get(f"{AS}/.well-known/openid-configuration").respond(json=as_doc(AS))
    fallback_404(protected)
    assert run(mcp()).signin_server == AS


def test_issuer_mismatch_is_not_discoverable(protected):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(
        json=as_doc("https://other.example.com")
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert "issuer mismatch" in outcome.reason
    assert outcome.access is Access.OAUTH


def test_issuer_differing_only_by_a_trailing_slash_is_a_warning(protected):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS + "/"))
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert any("not exactly" in warning for warning in outcome.warnings)


def test_resource_mismatch_is_not_discoverable(protected):
    protected.get(PRM_PATH).respond(
        json={"resource": "https://elsewhere.example.com/mcp", "authorization_servers": [AS]}
    )
    outcome = run(mcp())
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert "is for https://elsewhere.example.com/mcp" in outcome.reason


@pytest.mark.parametrize("missing", ["authorization_endpoint", "token_endpoint"])
def test_missing_endpoints_are_not_discoverable_and_named(protected, missing):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    doc = as_doc(AS)
    del doc[missing]
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=doc)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert f"lists no {missing}" in outcome.reason


@pytest.mark.parametrize("servers", [None, [], [""], [42]])
def test_prm_without_an_authorization_server_is_not_discoverable(protected, servers):
    doc = {"resource": URL} if servers is None else {"resource": URL, "authorization_servers": servers}
    protected.get(PRM_PATH).respond(json=doc)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert "names no authorization server" in outcome.reason


def test_no_authorization_server_metadata_names_the_urls_tried(protected):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    fallback_404(protected)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert "no authorization server metadata" in outcome.reason
    assert "openid-configuration: HTTP 404" in outcome.reason


def test_missing_pkce_and_registration_are_warnings(protected):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    doc = as_doc(AS)
    del doc["code_challenge_methods_supported"], doc["registration_endpoint"]
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=doc)
    outcome = run(mcp())
    assert outcome.status is Status.UP
    assert len(outcome.warnings) == 2


def test_a_resource_metadata_url_on_a_private_address_is_blocked(mock):
    header = 'Bearer resource_metadata="http://169.254.169.254/latest/meta-data"'
    mock.post(URL).mock(return_value=httpx.Response(401, headers={"www-authenticate": header}))
    metadata = mock.get(url__startswith="http://169.254.169.254/").respond(200)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert "169.254.169.254 is a link-local address" in outcome.reason
    assert not metadata.called


def test_an_authorization_server_resolving_privately_is_blocked(protected, dns):
    dns["login.example.com"] = ["192.168.0.10"]
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    assert run(mcp()).kind is FailureKind.BLOCKED_ADDRESS


def test_metadata_redirect_is_followed_through_the_guard(protected, dns):
    dns["cdn.example.net"] = ["10.0.0.9"]
    protected.get(PRM_PATH).respond(307, headers={"location": "https://cdn.example.net/prm"})
    assert run(mcp()).kind is FailureKind.BLOCKED_ADDRESS


def test_metadata_redirect_to_plain_http_is_not_followed(protected):
    protected.get(PRM_PATH).respond(307, headers={"location": "http://mcp.example.com/prm"})
    downgraded = protected.get("http://mcp.example.com/prm").respond(json={"resource": URL})
    fallback_404(protected)
    outcome = run(mcp())
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert "Redirect from https to http refused: http://mcp.example.com/prm" in outcome.reason
    assert not downgraded.called


def test_401_without_www_authenticate_still_runs_discovery(mock):
    mock.post(URL).mock(return_value=httpx.Response(401))
    mock.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    mock.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS))
    assert run(mcp()).status is Status.UP


# --- the 2025-03-26 fallback: no RFC 9728 metadata anywhere, metadata at the MCP server's origin ---


def no_resource_metadata(mock) -> None:
    mock.get(url__startswith=f"{ORIGIN}/.well-known/oauth-protected-resource").respond(404)


def fallback_warnings(outcome) -> list[str]:
    return [warning for warning in outcome.warnings if "2025-03-26 fallback" in warning]


@pytest.mark.parametrize(
    ("mcp_url", "origin"),
    [
        (URL, ORIGIN),
        # The authorization base URL discards the path, never the port.
        ("https://mcp.example.com:8443/v1/mcp", "https://mcp.example.com:8443"),
    ],
)
def test_legacy_signin_is_found_through_rfc_8414_metadata_at_the_origin(mock, mcp_url, origin):
    mock.post(mcp_url).respond(401, headers={"www-authenticate": 'Bearer realm="mcp"'})
    mock.get(url__startswith=f"{origin}/.well-known/oauth-protected-resource").respond(404)
    metadata = mock.get(f"{origin}/.well-known/oauth-authorization-server").respond(json=as_doc(origin))
    openid = mock.get(f"{origin}/.well-known/openid-configuration").respond(404)

    outcome = run(mcp(mcp_url))

    assert outcome.status is Status.UP
    assert outcome.kind is None
    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == origin
    assert outcome.signin_discovery is SigninDiscovery.LEGACY_FALLBACK
    assert outcome.http_status == 401
    [sentence] = fallback_warnings(outcome)
    assert sentence.startswith("Sign-in was found only through the 2025-03-26 fallback")
    assert f"{origin}/.well-known/oauth-authorization-server" in sentence
    # https endpoints, PKCE S256 and a registration endpoint: nothing else to say.
    assert outcome.warnings == (sentence,)
    assert metadata.call_count == 1
    assert not openid.called
    data = outcome_to_json(outcome)
    assert (data["status"], data["access"], data["signin_server"]) == ("up", "oauth", origin)
    assert data["signin_discovery"] == "2025-03-26-fallback"


def test_legacy_signin_is_found_through_openid_metadata_at_the_origin(protected):
    no_resource_metadata(protected)
    protected.get(LEGACY_OAUTH).respond(404)
    protected.get(LEGACY_OIDC).respond(json=as_doc(ORIGIN, jwks_uri=f"{ORIGIN}/jwks"))

    outcome = run(mcp())

    assert outcome.status is Status.UP
    assert outcome.signin_server == ORIGIN
    assert outcome.signin_discovery is SigninDiscovery.LEGACY_FALLBACK
    assert LEGACY_OIDC in fallback_warnings(outcome)[0]
    # The Python SDK client reads only the RFC 8414 URL on this path: say so.
    assert any("found only OpenID metadata" in warning for warning in outcome.warnings)


def test_legacy_issuer_may_be_the_origin_with_a_trailing_slash(protected):
    """The TS client takes new URL('/', serverUrl) as the issuer; the Python client accepts both."""
    no_resource_metadata(protected)
    protected.get(LEGACY_OAUTH).respond(json=as_doc(ORIGIN + "/"))

    outcome = run(mcp())

    assert outcome.status is Status.UP
    assert outcome.signin_discovery is SigninDiscovery.LEGACY_FALLBACK
    assert not any("issuer" in warning for warning in outcome.warnings)


@pytest.mark.parametrize(
    "issuer", ["https://login.example.com", "https://mcp.example.com/mcp", "http://mcp.example.com", None]
)
def test_legacy_issuer_mismatch_is_not_discoverable(protected, issuer):
    no_resource_metadata(protected)
    doc = as_doc(ORIGIN)
    if issuer is None:
        del doc["issuer"]
    else:
        doc["issuer"] = issuer
    protected.get(LEGACY_OAUTH).respond(json=doc)

    outcome = run(mcp())

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert outcome.access is Access.OAUTH
    assert outcome.signin_discovery is None
    assert outcome.reason.startswith("Sign-in isn't discoverable: no protected resource metadata")
    assert "2025-03-26 fallback failed: issuer mismatch" in outcome.reason
    assert f"expected the server's origin {ORIGIN}" in outcome.reason


@pytest.mark.parametrize("missing", ["authorization_endpoint", "token_endpoint"])
def test_legacy_metadata_without_endpoints_is_not_discoverable(protected, missing):
    no_resource_metadata(protected)
    doc = as_doc(ORIGIN)
    del doc[missing]
    protected.get(LEGACY_OAUTH).respond(json=doc)

    outcome = run(mcp())

    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert "2025-03-26 fallback failed" in outcome.reason
    assert f"{LEGACY_OAUTH} lists no {missing}" in outcome.reason


def test_401_with_neither_resource_metadata_nor_origin_metadata_is_credentials_required(protected):
    """The 2025-03-26 default endpoints (/authorize, /token) prove nothing: no metadata, no OAuth sign-in."""
    fallback_404(protected)

    outcome = run(mcp())

    assert outcome.status is Status.DOWN
    assert outcome.kind is FailureKind.CREDENTIALS_REQUIRED
    assert outcome.access is None
    assert outcome.http_status == 401
    assert outcome.signin_discovery is None
    assert outcome.reason == (
        "The server asks for credentials (HTTP 401) and publishes no OAuth sign-in: no protected resource "
        "metadata, no authorization server metadata. If it uses a key, add it as a request header "
        "(the monitor's Advanced settings; config.headers in the API)"
    )


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (httpx.Response(404), FailureKind.CREDENTIALS_REQUIRED),
        (httpx.Response(403), FailureKind.CREDENTIALS_REQUIRED),
        (httpx.Response(200, html="<html><title>App</title></html>"), FailureKind.CREDENTIALS_REQUIRED),
        # Something is published there, if broken: a sign-in meant to be found.
        (httpx.Response(200, json={"error": "nope"}), FailureKind.SIGNIN_NOT_DISCOVERABLE),
        (httpx.Response(200, text="{"), FailureKind.SIGNIN_NOT_DISCOVERABLE),
        # Proves nothing either way: no fallback, no verdict on what the server wants.
        (httpx.Response(503), FailureKind.SIGNIN_NOT_DISCOVERABLE),
    ],
)
def test_only_plain_absence_at_every_metadata_location_reads_as_credentials_required(protected, answer, kind):
    protected.get(url__regex=r".*/\.well-known/.*").mock(return_value=answer)

    assert run(mcp()).kind is kind


def test_rfc_9728_metadata_is_preferred_to_the_fallback(protected):
    protected.get(PRM_PATH).respond(json={"resource": URL, "authorization_servers": [AS]})
    protected.get(f"{AS}/.well-known/oauth-authorization-server").respond(json=as_doc(AS))
    legacy = protected.get(LEGACY_OAUTH).respond(json=as_doc(ORIGIN))

    outcome = run(mcp())

    assert outcome.status is Status.UP
    assert outcome.signin_server == AS
    assert outcome.signin_discovery is SigninDiscovery.RESOURCE_METADATA
    assert outcome_to_json(outcome)["signin_discovery"] == "2025-06-18+"
    assert not fallback_warnings(outcome)
    assert outcome.warnings == ()
    assert not legacy.called


def test_unusable_rfc_9728_metadata_does_not_fall_back(protected):
    """Metadata for another resource is refused, as the SDKs refuse it; it is not "no metadata"."""
    protected.get(PRM_PATH).respond(
        json={"resource": "https://elsewhere.example.com/mcp", "authorization_servers": [AS]}
    )
    legacy = protected.get(LEGACY_OAUTH).respond(json=as_doc(ORIGIN))

    outcome = run(mcp())

    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert not legacy.called


@pytest.mark.parametrize("status", [500, 503, 429])
def test_a_server_error_on_resource_metadata_does_not_fall_back(protected, status):
    """The Python SDK client's rule: a 5xx or 429 does not show that the metadata is absent."""
    protected.get(PRM_PATH).respond(status)
    protected.get(PRM_ROOT).respond(404)
    legacy = protected.get(LEGACY_OAUTH).respond(json=as_doc(ORIGIN))

    outcome = run(mcp())

    assert outcome.kind is FailureKind.SIGNIN_NOT_DISCOVERABLE
    assert f"{PRM_PATH} answered HTTP {status}" in outcome.reason
    assert "the 2025-03-26 fallback to the server's origin was not tried" in outcome.reason
    assert not legacy.called


def test_a_broken_header_url_still_allows_the_fallback_with_both_warnings(mock):
    mock.post(URL).respond(401, headers={"www-authenticate": f'Bearer resource_metadata="{ORIGIN}/gone"'})
    mock.get(f"{ORIGIN}/gone").respond(404)
    no_resource_metadata(mock)
    mock.get(LEGACY_OAUTH).respond(json=as_doc(ORIGIN))

    outcome = run(mcp())

    assert outcome.status is Status.UP
    assert outcome.signin_discovery is SigninDiscovery.LEGACY_FALLBACK
    assert fallback_warnings(outcome)
    assert any("resource_metadata URL" in warning for warning in outcome.warnings)


def test_legacy_metadata_on_plain_http_endpoints_keeps_the_endpoint_warnings(protected):
    no_resource_metadata(protected)
    doc = as_doc(ORIGIN, token_endpoint="http://mcp.example.com/token")
    del doc["registration_endpoint"]
    protected.get(LEGACY_OAUTH).respond(json=doc)

    outcome = run(mcp())

    assert outcome.status is Status.UP
    assert "The token_endpoint is not https" in outcome.warnings
    assert any("no client registration" in warning for warning in outcome.warnings)


def test_legacy_metadata_redirects_go_through_the_address_guard(protected, dns):
    dns["cdn.example.net"] = ["10.0.0.9"]
    no_resource_metadata(protected)
    protected.get(LEGACY_OAUTH).respond(307, headers={"location": "https://cdn.example.net/as"})
    internal = protected.get("https://cdn.example.net/as").respond(json=as_doc(ORIGIN))

    outcome = run(mcp())

    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert not internal.called
