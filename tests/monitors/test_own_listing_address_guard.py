"""A listing's links are checked on save by the channels' address guard: a private address is a 400 naming the field."""

from __future__ import annotations

import pytest

from monitors.models import Healthcheck, HealthcheckListing
from monitors.services import healthcheck_create
from probes.checks.mcp import MCP
from tests.alerts.channel_support import dns

__all__ = ["dns"]

pytestmark = pytest.mark.django_db

LISTING = {
    "namespace": "io.github.acme/docs",
    "website_url": "https://acme.example",
    "repository_url": "https://github.com/acme/docs-mcp",
    "pricing_url": "https://acme.example/pricing",
    "quote": "Free tier: 1,000 calls a month",
}
FIELDS = ["website_url", "repository_url", "pricing_url"]


@pytest.fixture(autouse=True)
def _private_refused(settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False


@pytest.fixture
def mcp_check(org, now) -> Healthcheck:
    return healthcheck_create(
        organization=org, name="docs", check_type=MCP, config={"uri": "https://mcp.example.com/mcp"}, now=now
    )


def put(client, healthcheck: Healthcheck, body: dict):
    return client.put(f"/api/v1/healthchecks/{healthcheck.public_id}/listing/", body, format="json")


def webhook_refusal(client, url: str) -> str:
    response = client.post(
        "/api/v1/channels/", {"name": "hook", "kind": "webhook", "config": {"url": url}}, format="json"
    )
    assert response.status_code == 400, response.content
    return response.json()["config.url"][0]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("address", ["10.0.0.5", "127.0.0.1", "169.254.169.254", "fd00::1"])
def test_a_link_resolving_to_a_private_address_is_refused_as_a_webhook_is(
    client, dns, mcp_check, field, address
):
    dns.answers["internal.acme.example"] = address
    url = "https://internal.acme.example/pricing"

    response = put(client, mcp_check, LISTING | {field: url})

    assert response.status_code == 400, response.content
    assert response.json()[field] == [webhook_refusal(client, url)]
    assert not HealthcheckListing.objects.exists()


@pytest.mark.parametrize("field", FIELDS)
def test_a_literal_private_address_is_refused(client, mcp_check, field):
    url = "http://192.168.0.10:8080/pricing"

    response = put(client, mcp_check, LISTING | {field: url})

    assert response.status_code == 400
    assert response.json()[field] == [webhook_refusal(client, url)]


def test_public_addresses_are_saved(client, dns, mcp_check):
    dns.answers.update({"acme.example": "93.184.215.14", "github.com": "140.82.112.3"})

    response = put(client, mcp_check, LISTING)

    assert response.status_code == 200, response.content
    assert HealthcheckListing.objects.get().pricing_url == LISTING["pricing_url"]


def test_a_name_that_does_not_resolve_is_saved_and_left_to_the_fetch(client, dns, mcp_check):
    assert put(client, mcp_check, LISTING).status_code == 200


def test_private_addresses_are_saved_where_they_are_allowed(client, mcp_check, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True

    assert put(client, mcp_check, LISTING | {"pricing_url": "http://127.0.0.1:9/pricing"}).status_code == 200
