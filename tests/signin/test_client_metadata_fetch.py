"""Fetching a client's metadata document over real TLS: guarded, no redirects, bounded, anonymous, named failures."""

from __future__ import annotations

import json
import ssl

import pytest

from signin.client_fetch import USER_AGENT, fetch_document
from signin.client_metadata import MAX_DOCUMENT_BYTES, ClientMetadataRefused, client_document
from tests.signin.metadata_server import Answer, MetadataServer


@pytest.fixture
def metadata_server(tmp_path):
    server = MetadataServer(tmp_path)
    yield server
    server.close()


def fetch(server: MetadataServer, url: str, *, allow_private: bool = True, timeout: float = 5.0):
    return fetch_document(
        url, allow_private=allow_private, ssl_context=server.client_context(), timeout=timeout
    )


def refusal(server: MetadataServer, url: str, **options) -> ClientMetadataRefused:
    def fetch_and_read() -> None:
        client_document(url, fetch(server, url, **options).body)

    with pytest.raises(ClientMetadataRefused) as refused:
        fetch_and_read()
    return refused.value


def test_a_document_is_fetched_with_its_cache_control(metadata_server):
    url = metadata_server.serve_document("/client.json", cache_control="max-age=3600")

    fetched = fetch(metadata_server, url)

    assert json.loads(fetched.body)["client_id"] == url
    assert fetched.cache_control == "max-age=3600"


def test_the_fetch_names_uptimy_and_carries_no_cookie_or_credential(metadata_server):
    url = metadata_server.serve_document("/client.json")

    fetch(metadata_server, url)

    [seen] = metadata_server.seen
    assert seen.headers["user-agent"] == USER_AGENT
    assert "application/json" in seen.headers["accept"]
    assert not {"cookie", "authorization", "proxy-authorization"} & seen.headers.keys()


def test_a_loopback_host_is_refused_by_the_address_guard_without_a_request(metadata_server):
    url = metadata_server.serve_document("/client.json")

    refused = refusal(metadata_server, url, allow_private=False)

    assert refused.reason == "blocked_address"
    assert "127.0.0.1 is a loopback address" in refused.description
    assert metadata_server.seen == []


def test_a_certificate_from_an_untrusted_authority_is_refused(metadata_server):
    url = metadata_server.serve_document("/client.json")

    with pytest.raises(ClientMetadataRefused) as refused:
        fetch_document(url, allow_private=True, ssl_context=ssl.create_default_context(), timeout=5)

    assert refused.value.reason == "unreachable"
    assert "TLS handshake failed" in refused.value.description


def test_a_redirect_is_refused_and_not_followed(metadata_server):
    metadata_server.serve_document("/elsewhere.json")
    url = metadata_server.serve("/client.json", Answer(status=302, headers={"Location": "/elsewhere.json"}))

    refused = refusal(metadata_server, url)

    assert refused.reason == "redirect"
    assert "HTTP 302, a redirect" in refused.description
    assert metadata_server.fetches_of("/elsewhere.json") == 0


@pytest.mark.parametrize("status", [404, 500, 204])
def test_an_answer_other_than_200_is_refused(metadata_server, status):
    url = metadata_server.serve("/client.json", Answer(status=status, body=b"{}"))

    refused = refusal(metadata_server, url)

    assert refused.reason == "http_status"
    assert f"HTTP {status}" in refused.description


@pytest.mark.parametrize("media_type", ["text/html", "text/plain", "application/octet-stream", ""])
def test_a_document_not_served_as_json_is_refused(metadata_server, media_type):
    headers = {"Content-Type": media_type} if media_type else {}
    url = metadata_server.serve("/client.json", Answer(body=b"{}", headers=headers))

    refused = refusal(metadata_server, url)

    assert refused.reason == "not_json"
    assert "not application/json" in refused.description


def test_a_structured_json_media_type_is_read(metadata_server):
    url = metadata_server.url("/client.json")
    body = json.dumps({"client_id": url, "client_name": "A", "redirect_uris": ["https://a.example/cb"]})
    metadata_server.serve(
        "/client.json", Answer(body=body.encode(), headers={"Content-Type": "application/oauth-client+json"})
    )

    assert client_document(url, fetch(metadata_server, url).body).client_name == "A"


def test_a_body_that_is_not_json_is_refused(metadata_server):
    url = metadata_server.serve("/client.json", Answer(body=b"<html>hello</html>"))

    assert refusal(metadata_server, url).reason == "not_json"


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_an_oversize_document_is_refused(metadata_server, declared):
    body = json.dumps({"client_id": "x", "padding": "a" * MAX_DOCUMENT_BYTES}).encode()
    url = metadata_server.serve("/client.json", Answer(body=body, chunked=not declared))

    refused = refusal(metadata_server, url)

    assert refused.reason == "too_large"
    assert f"larger than {MAX_DOCUMENT_BYTES} bytes" in refused.description


def test_a_host_that_never_answers_is_refused_at_the_timeout(metadata_server):
    url = metadata_server.serve("/client.json", Answer(hang=True))

    refused = refusal(metadata_server, url, timeout=0.5)

    assert refused.reason == "timeout"
    assert "did not answer within 0.5 s" in refused.description


def test_a_document_naming_another_client_id_is_refused(metadata_server):
    url = metadata_server.serve_document("/client.json", client_id="https://claude.ai/oauth/client.json")

    refused = refusal(metadata_server, url)

    assert refused.reason == "client_id_mismatch"


@pytest.mark.parametrize("url", ["https://xn--zz.example/client", "https://\u2603\u2603-.example/client"])
def test_a_host_name_that_cannot_be_encoded_is_a_bad_url(metadata_server, url):
    with pytest.raises(ClientMetadataRefused) as refused:
        fetch(metadata_server, url)

    assert refused.value.reason == "bad_url"
