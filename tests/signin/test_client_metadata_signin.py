"""Signing in with a Client ID Metadata Document: the https client_id is fetched, kept fresh, and shown by its host."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from oauth2_provider.models import get_application_model

from signin.client_metadata import MIN_FRESH_SECONDS
from tests.signin.conftest import Assistant, consent_form_fields, redirect_params
from tests.signin.metadata_server import Answer, MetadataServer

PATH = "/oauth/client.json"


@pytest.fixture
def metadata_server(tmp_path, settings):
    server = MetadataServer(tmp_path)
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_OAUTH_CLIENT_METADATA_CA_FILE = str(server.ca_file)
    yield server
    server.close()


@pytest.fixture
def assistant(browser, metadata_server) -> Assistant:
    return Assistant(
        http=browser, client_id=metadata_server.serve_document(PATH, cache_control="max-age=3600")
    )


def application_of(assistant: Assistant):
    return get_application_model().objects.get(client_id=assistant.client_id)


def test_an_assistant_signs_in_with_its_metadata_url_as_client_id(assistant, consent, org):
    answer = consent(assistant, assistant.authorize_url(), organization=org)
    tokens = assistant.exchange(redirect_params(answer)["code"])

    assert tokens.status_code == 200, tokens.content
    assert tokens.json()["scope"] == "read write"
    application = application_of(assistant)
    assert application.registration_source == "cimd"
    assert application.client_type == "public"
    assert application.name == "Document Assistant"


def test_the_consent_screen_shows_who_publishes_the_client(assistant):
    page = assistant.http.get(assistant.authorize_url())

    text = page.content.decode()
    assert page.status_code == 200
    assert "Document Assistant" in text
    assert "published by <strong>127.0.0.1</strong>" in text


def test_a_registered_clients_consent_screen_says_it_chose_its_own_name(register, browser):
    assistant = register(browser)

    text = browser.get(assistant.authorize_url()).content.decode()

    assert "It chose its own name" in text
    assert "published by" not in text


def test_a_fresh_document_is_not_fetched_again(assistant, metadata_server):
    for _ in range(3):
        assert assistant.http.get(assistant.authorize_url()).status_code == 200

    assert metadata_server.fetches_of(PATH) == 1


def test_the_documents_max_age_sets_when_it_goes_stale(assistant):
    before = timezone.now()
    assistant.http.get(assistant.authorize_url())
    after = timezone.now()

    expires = application_of(assistant).cimd_expires_at
    assert before + timedelta(seconds=3600) <= expires <= after + timedelta(seconds=3600)


def test_a_document_that_says_no_store_stays_fresh_for_the_minimum(browser, metadata_server):
    assistant = Assistant(
        http=browser, client_id=metadata_server.serve_document(PATH, cache_control="no-store")
    )
    before = timezone.now()
    assistant.http.get(assistant.authorize_url())

    expires = application_of(assistant).cimd_expires_at
    assert expires - before >= timedelta(seconds=MIN_FRESH_SECONDS)
    assert expires - before < timedelta(seconds=MIN_FRESH_SECONDS + 60)


def test_a_stale_document_is_fetched_again_and_its_changes_kept(assistant, metadata_server):
    assistant.http.get(assistant.authorize_url())
    get_application_model().objects.filter(client_id=assistant.client_id).update(
        cimd_expires_at=timezone.now() - timedelta(seconds=1)
    )
    metadata_server.serve_document(PATH, client_name="Renamed Assistant", cache_control="max-age=3600")

    page = assistant.http.get(assistant.authorize_url())

    assert "Renamed Assistant" in page.content.decode()
    assert metadata_server.fetches_of(PATH) == 2
    assert application_of(assistant).cimd_expires_at > timezone.now()


def test_a_document_that_cannot_be_fetched_is_an_invalid_client_page_never_a_redirect(
    browser, metadata_server
):
    assistant = Assistant(http=browser, client_id=metadata_server.url("/missing.json"))

    page = browser.get(assistant.authorize_url())

    assert page.status_code == 400
    assert "Location" not in page
    text = page.content.decode()
    assert "This sign-in request can't be used" in text
    assert "answered HTTP 404" in text
    assert not get_application_model().objects.filter(client_id=assistant.client_id).exists()


def test_a_refused_document_names_its_problem_on_the_error_page(browser, metadata_server):
    url = metadata_server.serve_document(PATH, token_endpoint_auth_method="private_key_jwt")
    assistant = Assistant(http=browser, client_id=url)

    page = browser.get(assistant.authorize_url())

    assert page.status_code == 400
    assert "private_key_jwt is not supported" in page.content.decode()


def test_a_redirect_uri_the_document_does_not_list_is_refused(assistant):
    page = assistant.http.get(assistant.authorize_url(redirect_uri="http://127.0.0.1:9/elsewhere"))

    assert page.status_code == 400
    assert "Location" not in page


def test_a_loopback_document_is_refused_unless_private_targets_are_allowed(
    browser, metadata_server, settings
):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False
    assistant = Assistant(http=browser, client_id=metadata_server.serve_document(PATH))

    page = browser.get(assistant.authorize_url())

    assert page.status_code == 400
    assert "127.0.0.1 is a loopback address" in page.content.decode()
    assert metadata_server.seen == []


def test_a_failed_document_is_not_fetched_again_for_a_minute(browser, metadata_server):
    assistant = Assistant(http=browser, client_id=metadata_server.serve(PATH, Answer(status=500)))
    browser.get(assistant.authorize_url())
    metadata_server.serve_document(PATH)

    page = browser.get(assistant.authorize_url())

    assert page.status_code == 400
    assert "answered HTTP 500" in page.content.decode()
    assert metadata_server.fetches_of(PATH) == 1


def test_the_token_endpoint_never_fetches_a_client_it_has_not_seen(metadata_server, client):
    url = metadata_server.serve_document(PATH)

    response = client.post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": "x",
            "client_id": url,
            "redirect_uri": "http://127.0.0.1:33418/callback",
            "code_verifier": "v" * 50,
        },
    )

    assert response.status_code in (400, 401)
    assert response.json()["error"] == "invalid_client"
    assert metadata_server.seen == []


def test_the_revocation_endpoint_never_fetches_a_client_it_has_not_seen(metadata_server, client):
    url = metadata_server.serve_document(PATH)

    client.post("/oauth/revoke/", {"token": "x", "client_id": url})

    assert metadata_server.seen == []
    assert not get_application_model().objects.filter(client_id=url).exists()


def test_a_refresh_keeps_working_when_a_stale_documents_host_fails(assistant, consent, org, metadata_server):
    answer = consent(assistant, assistant.authorize_url(), organization=org)
    tokens = assistant.exchange(redirect_params(answer)["code"]).json()
    get_application_model().objects.filter(client_id=assistant.client_id).update(
        cimd_expires_at=timezone.now() - timedelta(seconds=1)
    )
    metadata_server.serve(PATH, Answer(status=503))

    refreshed = assistant.refresh(tokens["refresh_token"])

    assert refreshed.status_code == 200, refreshed.content
    assert metadata_server.fetches_of(PATH) == 2


def test_a_client_an_operator_created_with_a_url_id_is_never_replaced_by_a_document(browser, metadata_server):
    application_model = get_application_model()
    url = metadata_server.serve_document(PATH, client_name="Impostor")
    application_model.objects.create(
        client_id=url,
        name="Operator's own",
        redirect_uris="http://127.0.0.1:33418/callback",
        client_type=application_model.CLIENT_PUBLIC,
        authorization_grant_type=application_model.GRANT_AUTHORIZATION_CODE,
        registration_source=application_model.RegistrationSource.MANUAL,
    )

    page = browser.get(Assistant(http=browser, client_id=url).authorize_url())

    assert "Operator&#x27;s own" in page.content.decode()
    assert metadata_server.seen == []


def test_the_consent_form_posts_back_the_metadata_client_id(assistant):
    fields = consent_form_fields(assistant.http.get(assistant.authorize_url()).content.decode())

    assert fields["client_id"] == assistant.client_id


def test_a_client_id_whose_host_cannot_be_encoded_is_an_error_page_not_a_500(browser, metadata_server):
    page = browser.get(Assistant(http=browser, client_id="https://xn--zz.example/client").authorize_url())

    assert page.status_code == 400
    assert "not a valid URL" in page.content.decode()


def test_a_bug_reading_one_clients_document_refuses_that_client_not_the_page(
    browser, metadata_server, monkeypatch
):
    def broken(client_id: str, body: bytes) -> None:
        raise RuntimeError("a parser bug")

    monkeypatch.setattr("signin.services.client_document", broken)
    assistant = Assistant(http=browser, client_id=metadata_server.serve_document(PATH))

    page = browser.get(assistant.authorize_url())

    assert page.status_code == 400
    assert "could not read the client&#x27;s metadata document" in page.content.decode()
