"""Who may call the API: keys, scopes, tenants and the rate limit."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from monitors.api.throttling import ApiKeyRateThrottle
from monitors.models import ApiKey
from monitors.services import api_key_revoke

URL = "/api/v1/healthchecks/"
CHECK = {"name": "Homepage", "type": 1, "config": {"uri": "https://example.com/"}}

ROUTES = [
    ("get", URL),
    ("post", URL),
    ("get", "/api/v1/regions/"),
    ("get", "/api/v1/organization/"),
]


@pytest.fixture
def check_url(client) -> str:
    return f"{URL}{client.post(URL, CHECK, format='json').json()['id']}/"


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_no_key_is_a_401(db, method, url):
    response = getattr(APIClient(), method)(url, {}, format="json")

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_unknown_key_is_a_401(db, method, url):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer upt_not-a-key")

    assert getattr(client, method)(url, {}, format="json").status_code == 401


@pytest.mark.parametrize("header", ["Basic dXNlcjpwdw==", "Bearer", "Token abc", "Bearer  "])
def test_malformed_authorization_is_a_401(db, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)

    assert client.get(URL).status_code == 401


def test_revoked_key_is_a_401(client):
    api_key = ApiKey.objects.get()
    api_key_revoke(api_key=api_key, now=timezone.now())

    assert client.get(URL).status_code == 401


def test_using_a_key_records_when(client):
    client.get(URL)

    assert ApiKey.objects.get().last_used_at is not None


def test_read_only_key_reads(read_client):
    assert read_client.get(URL).status_code == 200
    assert read_client.get("/api/v1/organization/").status_code == 200


@pytest.mark.parametrize(
    ("method", "suffix", "payload"),
    [
        ("post", "", CHECK),
        ("put", "{id}/", CHECK),
        ("patch", "{id}/", {"name": "x"}),
        ("delete", "{id}/", None),
        ("post", "{id}/pause/", None),
        ("post", "{id}/resume/", None),
    ],
)
def test_read_only_key_that_writes_is_a_403(client, make_client, org, method, suffix, payload):
    check_id = client.post(URL, CHECK, format="json").json()["id"]
    read_client = make_client(org, scope=ApiKey.Scope.READ)

    response = getattr(read_client, method)(URL + suffix.format(id=check_id), payload, format="json")

    assert response.status_code == 403


@pytest.mark.parametrize(
    ("method", "suffix", "payload"),
    [
        ("get", "", None),
        ("put", "", CHECK),
        ("patch", "", {"name": "stolen"}),
        ("delete", "", None),
        ("post", "pause/", None),
        ("post", "resume/", None),
    ],
)
def test_another_organizations_check_is_a_404_on_every_route(
    check_url, other_client, method, suffix, payload
):
    response = getattr(other_client, method)(check_url + suffix, payload, format="json")

    assert response.status_code == 404


def test_another_organizations_checks_are_not_listed(check_url, other_client):
    assert other_client.get(URL).json()["count"] == 0


def test_organization_shows_the_keys_own_organization(client, other_client):
    assert client.get("/api/v1/organization/").json()["slug"] == "acme"
    assert other_client.get("/api/v1/organization/").json()["slug"] == "globex"


def test_organization_shows_its_plan(client):
    plan = client.get("/api/v1/organization/").json()["plan"]

    assert plan["slug"] == "paid"
    assert plan["allowed_regions"] == ["ap-southeast", "eu-west", "us-east"]


def test_regions_say_which_the_plan_allows(make_org, make_client):
    client = make_client(make_org(plan="free"))

    regions = {region["slug"]: region["allowed"] for region in client.get("/api/v1/regions/").json()}

    assert regions == {"ap-southeast": False, "eu-west": True, "us-east": True}


def test_calls_beyond_the_rate_are_throttled_per_key(client, other_client, monkeypatch):
    cache.clear()
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": "3/min"})

    statuses = [client.get(URL).status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    assert other_client.get(URL).status_code == 200
