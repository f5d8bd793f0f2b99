"""The directory's public JSON: the ranked list, one server, the API's pages and errors, a limit per address."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from directory.models import Listing
from directory.services import scorecards_recompute
from monitors.api.throttling import AnonymousRateThrottle
from monitors.scorecard import RULES
from tests.conftest import NOW
from tests.directory.factories import make_card, make_listing

pytestmark = pytest.mark.django_db


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()


def names(response) -> list[str]:
    return [item["name"] for item in response.json()["results"]]


def test_the_list_is_ranked_as_the_page_is(anonymous):
    make_card(make_listing("c.third/server"), passed=10, core_passed=4)
    make_card(make_listing("a.first/server"), passed=12)
    make_card(make_listing("b.second/server"), passed=10, core_passed=4, success_ratio=0.9)

    response = anonymous.get("/api/v1/directory/servers/")

    assert response.status_code == 200
    assert names(response) == ["a.first/server", "b.second/server", "c.third/server"]


def test_a_list_item_carries_the_scorecards_figures_and_links(anonymous):
    make_card(
        make_listing("com.example/weather", title="Weather"),
        passed=19,
        core_passed=4,
        success_ratio=0.995,
        p50_ms=420.0,
        p95_ms=1800.0,
        observed_at=NOW,
    )

    [item] = anonymous.get("/api/v1/directory/servers/").json()["results"]

    assert item == {
        "name": "com.example/weather",
        "title": "Weather",
        "description": "",
        "version": "1.0.0",
        "status": "active",
        "status_message": "",
        "remote": True,
        "passed": 19,
        "total": 22,
        "core_passed": 4,
        "success_ratio": 0.995,
        "p50_ms": 420.0,
        "p95_ms": 1800.0,
        "observed_at": "2026-11-29T12:00:00Z",
        "computed_at": "2026-11-29T12:00:00Z",
        "page_url": "http://testserver/directory/com.example/weather/",
        "badge_url": "http://testserver/directory/com.example/weather/badge.svg",
    }


def test_the_list_searches_and_separates_local_only_packages(anonymous):
    make_listing("com.example/weather", description="Forecasts")
    make_listing("com.example/notes")
    make_listing("com.example/forecast-cli", remote=False)
    scorecards_recompute(now=NOW)

    assert names(anonymous.get("/api/v1/directory/servers/", {"q": "forecast"})) == ["com.example/weather"]
    local = anonymous.get("/api/v1/directory/servers/", {"kind": "local"}).json()["results"]
    assert [(item["name"], item["remote"]) for item in local] == [("com.example/forecast-cli", False)]


def test_the_list_hides_deleted_servers(anonymous):
    make_listing("com.gone/server", status=Listing.Status.DELETED)
    scorecards_recompute(now=NOW)

    assert anonymous.get("/api/v1/directory/servers/").json()["count"] == 0


def test_the_list_is_paged_as_the_api_pages(anonymous):
    for n in range(5):
        make_card(make_listing(f"com.n{n}/server"), passed=10 - n)

    body = anonymous.get("/api/v1/directory/servers/", {"page_size": 2, "page": 2}).json()

    assert body["count"] == 5
    assert [item["name"] for item in body["results"]] == ["com.n2/server", "com.n3/server"]
    assert body["next"].endswith("page=3&page_size=2")
    assert "page_size=2" in body["previous"]


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"page": "x"}, "page", "page must be a whole number from 1 to 1000000, not 'x'."),
        ({"page_size": "0"}, "page_size", "page_size must be a whole number from 1 to 200, not 0."),
        ({"kind": "all"}, "kind", "kind must be remote or local, not 'all'."),
        ({"q": "y" * 300}, "q", "q may be at most 200 characters, not 300."),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(anonymous, params, field, message):
    response = anonymous.get("/api/v1/directory/servers/", params)

    assert response.status_code == 400
    assert response.json() == {field: [message]}


def test_a_page_past_the_last_is_a_404(anonymous):
    response = anonymous.get("/api/v1/directory/servers/", {"page": 3})

    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid page."}


@pytest.fixture
def weather():
    listing = make_listing("com.example/weather", title="Weather")
    scorecards_recompute(now=NOW - timedelta(hours=25))
    return listing


def test_a_server_answers_with_each_check_as_the_healthcheck_scorecard_does(anonymous, weather):
    response = anonymous.get("/api/v1/directory/servers/com.example/weather/")

    body = response.json()
    assert response.status_code == 200
    assert (body["passed"], body["total"], body["remote"]) == (
        sum(check["verdict"] == "passed" for check in body["checks"]),
        22,
        True,
    )
    assert body["remotes"] == [
        {
            "url": "https://com.example.weather/mcp",
            "transport": "streamable-http",
            "templated": False,
            "headers_required": False,
        }
    ]
    first = body["checks"][0]
    assert set(first) == {
        "number",
        "name",
        "rule",
        "verdict",
        "observed_at",
        "outdated",
        "outdated_label",
        "reason",
        "evidence",
    }
    assert [check["rule"] for check in body["checks"]] == [RULES[n] for n in range(1, 23)]
    # Observed 25 hours ago (the sync): outdated now.
    recently = body["checks"][20]
    assert (recently["name"], recently["outdated"], recently["outdated_label"]) == (
        "Recently updated",
        True,
        "Outdated check",
    )


@pytest.mark.parametrize("name", ["com.unknown/server", "com.gone/server", "com.old/server"])
def test_an_unknown_or_deleted_server_is_a_404_naming_it(anonymous, name):
    make_listing("com.gone/server", status=Listing.Status.DELETED)
    make_listing("com.old/server", latest=False)

    response = anonymous.get(f"/api/v1/directory/servers/{name}/")

    assert response.status_code == 404
    assert response.json() == {"detail": f"No server named “{name}” is listed in the directory."}


def test_the_api_needs_no_key_and_ignores_a_bad_one(anonymous, weather):
    anonymous.credentials(HTTP_AUTHORIZATION="Bearer not-a-key")

    assert anonymous.get("/api/v1/directory/servers/").status_code == 200


def test_the_api_is_read_only(anonymous, weather):
    assert anonymous.post("/api/v1/directory/servers/", {}).status_code == 405
    assert anonymous.delete("/api/v1/directory/servers/com.example/weather/").status_code == 405


def test_the_server_answer_is_a_fixed_few_queries(anonymous, weather, django_assert_num_queries):
    with django_assert_num_queries(2):
        anonymous.get("/api/v1/directory/servers/com.example/weather/")


def test_the_list_is_two_queries_whatever_its_length(anonymous, django_assert_num_queries):
    for n in range(30):
        make_card(make_listing(f"com.n{n}/server"), passed=n % 22)

    with django_assert_num_queries(2):
        anonymous.get("/api/v1/directory/servers/")


def test_calls_from_one_address_are_limited(anonymous, weather, monkeypatch):
    monkeypatch.setattr(AnonymousRateThrottle, "THROTTLE_RATES", {"anonymous": "3/min"})

    answers = [anonymous.get("/api/v1/directory/servers/").status_code for _ in range(4)]
    other = APIClient(REMOTE_ADDR="192.0.2.9").get("/api/v1/directory/servers/").status_code

    assert answers == [200, 200, 200, 429]
    assert other == 200


def test_the_anonymous_rate_is_a_setting():
    from django.conf import settings

    assert settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["anonymous"] == "120/min"
