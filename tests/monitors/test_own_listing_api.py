"""/api/v1/healthchecks/{id}/listing/: a customer's own listing of their MCP check; its rules, tenancy and roles."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitors.models import Healthcheck, HealthcheckListing
from monitors.services import healthcheck_create
from probes.checks.http import HTTP
from probes.checks.mcp import MCP

pytestmark = pytest.mark.django_db

LISTING = {
    "namespace": "io.github.acme/docs",
    "website_url": "https://acme.example",
    "repository_url": "https://github.com/acme/docs-mcp",
    "pricing_url": "https://acme.example/pricing",
    "quote": "Free tier: 1,000 calls a month",
}


@pytest.fixture
def mcp_check(org, now) -> Healthcheck:
    return healthcheck_create(
        organization=org, name="docs", check_type=MCP, config={"uri": "https://mcp.example.com/mcp"}, now=now
    )


def listing_url(healthcheck: Healthcheck) -> str:
    return f"/api/v1/healthchecks/{healthcheck.public_id}/listing/"


def test_a_listing_is_put_then_read_back_with_its_quote_pending(client, mcp_check):
    put = client.put(listing_url(mcp_check), LISTING, format="json")

    assert put.status_code == 200
    body = client.get(listing_url(mcp_check)).json()
    assert {key: body[key] for key in LISTING} == LISTING
    assert body["quote_status"] == "pending"
    assert (body["quote_checked_at"], body["quote_last_found_at"], body["quote_problem"]) == (None, None, "")
    assert body["quote_next_check_at"] is not None


def test_a_put_replaces_the_listing_whole(client, mcp_check):
    client.put(listing_url(mcp_check), LISTING, format="json")

    body = client.put(listing_url(mcp_check), {"namespace": "com.acme/docs"}, format="json").json()

    assert (body["namespace"], body["website_url"], body["pricing_url"], body["quote"]) == (
        "com.acme/docs",
        "",
        "",
        "",
    )
    assert body["quote_status"] == "none"


def test_a_listing_without_a_pricing_page_is_allowed(client, mcp_check):
    answer = client.put(listing_url(mcp_check), {"namespace": "com.acme/docs"}, format="json")

    assert answer.status_code == 200


def test_delete_removes_the_listing(client, mcp_check):
    client.put(listing_url(mcp_check), LISTING, format="json")

    assert client.delete(listing_url(mcp_check)).status_code == 204
    assert client.get(listing_url(mcp_check)).json() == {"detail": "This healthcheck has no listing."}
    assert client.delete(listing_url(mcp_check)).status_code == 404


def test_a_check_without_a_listing_answers_404_saying_so(client, mcp_check):
    answer = client.get(listing_url(mcp_check))

    assert (answer.status_code, answer.json()) == (404, {"detail": "This healthcheck has no listing."})


NAMESPACE_SHAPE = (
    "Must be a reverse-DNS namespace, a slash and a name (letters, digits, '.', '_', '-'), "
    "e.g. io.github.owner/server or com.example/server."
)


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"namespace": ""},
            "namespace",
            "Enter the server's name as the registry spells it, e.g. io.github.owner/server or com.example/server.",
        ),
        ({"namespace": "docs"}, "namespace", NAMESPACE_SHAPE),
        ({"namespace": "acme/docs"}, "namespace", NAMESPACE_SHAPE),
        ({"namespace": "io.github.acme/docs/extra"}, "namespace", NAMESPACE_SHAPE),
        ({"namespace": "io.github.acme/do cs"}, "namespace", NAMESPACE_SHAPE),
        (
            {"namespace": "io.github." + "a" * 190 + "/docs"},
            "namespace",
            "Ensure this field has no more than 200 characters.",
        ),
        (
            {"website_url": "ftp://acme.example"},
            "website_url",
            "Must be an http(s) URL with a host, e.g. https://example.com/pricing.",
        ),
        (
            {"repository_url": "javascript:alert(1)"},
            "repository_url",
            "Must be an http(s) URL with a host, e.g. https://example.com/pricing.",
        ),
        (
            {"pricing_url": "https:///pricing"},
            "pricing_url",
            "Must be an http(s) URL with a host, e.g. https://example.com/pricing.",
        ),
        ({"pricing_url": "https://acme.example:99999/"}, "pricing_url", "Must be a valid http(s) URL."),
        (
            {"pricing_url": "https://user:pw@acme.example/"},
            "pricing_url",
            "Must not carry a user name or password.",
        ),
        (
            {"website_url": "https://acme.example/" + "a" * 2000},
            "website_url",
            "Ensure this field has no more than 2000 characters.",
        ),
        ({"quote": "Free " + "a" * 500}, "quote", "Ensure this field has no more than 500 characters."),
        (
            {"quote": "Plans from $10 a month"},
            "quote",
            'The quote must state free or freemium access (it should say "free" or "freemium").',
        ),
        (
            {"quote": "Start your free trial"},
            "quote",
            "A free trial is not free access: quote the page where it states a free tier or plan.",
        ),
        ({"quote": "Free tier\tnow"}, "quote", "Must not contain control characters."),
        (
            {"quote": ""},
            "quote",
            "Enter the text the pricing page states, e.g. “Free tier: 1,000 calls a month”.",
        ),
        ({"pricing_url": ""}, "pricing_url", "Enter the page that states the quote."),
        (
            {"color": "red"},
            "color",
            "unknown field; the fields are: namespace, pricing_url, quote, repository_url, website_url",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 20 else None,
)
def test_a_bad_field_is_refused_with_a_message_naming_it(client, mcp_check, changes, field, message):
    answer = client.put(listing_url(mcp_check), {**LISTING, **changes}, format="json")

    assert answer.status_code == 400
    assert answer.json() == {field: [message]}
    assert not HealthcheckListing.objects.exists()


@pytest.mark.parametrize(
    ("escaped", "message"),
    [
        ("Free\\u0000tier", "Must not contain a NUL character (\\u0000)."),
        ("Free \\ud800 tier", "Must not contain an unpaired surrogate (\\ud800)."),
    ],
    ids=["NUL", "lone surrogate"],
)
def test_nul_and_lone_surrogates_are_refused_like_other_api_text(client, mcp_check, escaped, message):
    body = f'{{"namespace": "com.acme/docs", "pricing_url": "https://acme.example/p", "quote": "{escaped}"}}'

    answer = client.generic("PUT", listing_url(mcp_check), body, content_type="application/json")

    assert (answer.status_code, answer.json()) == (400, {"quote": [message]})
    assert not HealthcheckListing.objects.exists()


def test_a_check_of_another_type_has_no_listing(client, org, now):
    http_check = healthcheck_create(
        organization=org, name="site", check_type=HTTP, config={"uri": "https://acme.example/"}, now=now
    )

    answer = client.put(listing_url(http_check), LISTING, format="json")

    assert (answer.status_code, answer.json()) == (
        400,
        {"healthcheck": ["Only an MCP healthcheck has a listing."]},
    )


def test_a_check_changed_to_another_type_loses_its_listing(client, mcp_check):
    client.put(listing_url(mcp_check), LISTING, format="json")

    changed = client.patch(
        f"/api/v1/healthchecks/{mcp_check.public_id}/",
        {"type": "http", "config": {"uri": "https://acme.example/"}},
        format="json",
    )

    assert changed.status_code == 200, changed.json()
    assert not HealthcheckListing.objects.exists()


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_another_organization_s_check_is_not_found(other_client, client, mcp_check, method):
    client.put(listing_url(mcp_check), LISTING, format="json")

    answer = getattr(other_client, method)(listing_url(mcp_check), LISTING, format="json")

    assert answer.status_code == 404
    assert HealthcheckListing.objects.get().namespace == LISTING["namespace"]


@pytest.mark.parametrize("method", ["put", "delete"])
def test_a_read_only_key_may_read_but_not_change_the_listing(read_client, client, mcp_check, method):
    client.put(listing_url(mcp_check), LISTING, format="json")

    assert read_client.get(listing_url(mcp_check)).status_code == 200
    answer = getattr(read_client, method)(
        listing_url(mcp_check), {**LISTING, "namespace": "com.x/y"}, format="json"
    )

    assert answer.status_code == 403
    assert HealthcheckListing.objects.get().namespace == LISTING["namespace"]


def test_the_openapi_schema_documents_the_listing_methods(client):
    schema = client.get("/api/v1/schema/?format=json").json()

    operations = schema["paths"]["/api/v1/healthchecks/{id}/listing/"]
    assert set(operations) >= {"get", "put", "delete"}
    body = operations["put"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/HealthcheckListingRequest")


def test_every_refused_field_is_named_at_once(client, mcp_check):
    body = {
        **LISTING,
        "namespace": "docs",
        "website_url": "ftp://acme.example",
        "quote": "Start your free trial",
    }

    answer = client.put(listing_url(mcp_check), body, format="json")

    assert answer.status_code == 400
    assert set(answer.json()) == {"namespace", "website_url", "quote"}


def healthcheck_url(healthcheck: Healthcheck) -> str:
    return f"/api/v1/healthchecks/{healthcheck.public_id}/"


def test_the_healthcheck_answer_carries_its_listing_s_five_fields(client, mcp_check):
    client.put(listing_url(mcp_check), LISTING, format="json")

    shown = client.get(healthcheck_url(mcp_check)).json()
    [listed] = client.get("/api/v1/healthchecks/").json()["results"]

    assert shown["listing"] == LISTING
    assert listed["listing"] == LISTING


def test_a_healthcheck_without_a_listing_carries_null(client, org, now, mcp_check):
    healthcheck_create(
        organization=org, name="site", check_type=HTTP, config={"uri": "https://acme.example/"}, now=now
    )

    listed = client.get("/api/v1/healthchecks/").json()["results"]

    assert client.get(healthcheck_url(mcp_check)).json()["listing"] is None
    assert [item["listing"] for item in listed] == [None, None]


@pytest.mark.parametrize("method", ["put", "patch"])
def test_a_listing_sent_in_a_healthcheck_write_is_ignored_like_other_read_only_fields(
    client, mcp_check, method
):
    client.put(listing_url(mcp_check), LISTING, format="json")
    shown = client.get(healthcheck_url(mcp_check)).json()
    body = {
        "name": "renamed",
        "type": "mcp",
        "config": {"uri": "https://mcp.example.com/mcp"},
        "status": "down",
        "listing": {"namespace": "com.x/y"},
    }

    answer = getattr(client, method)(healthcheck_url(mcp_check), body, format="json")

    assert answer.status_code == 200, answer.json()
    assert (answer.json()["name"], answer.json()["status"]) == ("renamed", shown["status"])
    assert answer.json()["listing"] == LISTING
    assert HealthcheckListing.objects.get().namespace == LISTING["namespace"]


def test_a_listing_sent_when_creating_a_healthcheck_is_ignored(client):
    body = {
        "name": "new",
        "type": "mcp",
        "config": {"uri": "https://mcp.example.com/mcp"},
        "listing": LISTING,
    }

    answer = client.post("/api/v1/healthchecks/", body, format="json")

    assert answer.status_code == 201, answer.json()
    assert answer.json()["listing"] is None
    assert not HealthcheckListing.objects.exists()


def test_the_list_reads_as_many_queries_however_many_checks_have_a_listing(client, org, now, mcp_check):
    client.put(listing_url(mcp_check), LISTING, format="json")
    with CaptureQueriesContext(connection) as one:
        client.get("/api/v1/healthchecks/")
    for index in range(4):
        more = healthcheck_create(
            organization=org,
            name=f"docs {index}",
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=now,
        )
        client.put(listing_url(more), LISTING, format="json")

    with CaptureQueriesContext(connection) as five:
        page = client.get("/api/v1/healthchecks/").json()

    assert [item["listing"] for item in page["results"]] == [LISTING] * 5
    assert len(five) == len(one)


def test_the_openapi_schema_documents_the_healthcheck_s_listing_as_a_nullable_read_only_object(client):
    schemas = client.get("/api/v1/schema/?format=json").json()["components"]["schemas"]

    listing = schemas["Healthcheck"]["properties"]["listing"]
    assert listing["readOnly"] is True
    assert listing["oneOf"] == [{"$ref": "#/components/schemas/HealthcheckListingSummary"}, {"type": "null"}]
    assert list(schemas["HealthcheckListingSummary"]["properties"]) == list(LISTING)
    assert "listing" not in schemas["HealthcheckRequest"]["properties"]
