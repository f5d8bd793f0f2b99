"""The healthchecks API: create, read, update, delete, pause, resume, filters and plan limits."""

from __future__ import annotations

import pytest

from monitors.models import Healthcheck
from monitors.secrets import MASK, decrypt_headers

URL = "/api/v1/healthchecks/"

SEED_MCP = {
    "name": "Docs MCP",
    "type": 13,
    "config": {
        "uri": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer your-key"},
        "requiredTools": ["search_docs", "read_page"],
        "minTools": 2,
    },
}

HTTP_CHECK = {"name": "Homepage", "type": "http", "config": {"uri": "https://example.com/"}}


def detail(body: dict) -> str:
    return f"{URL}{body['id']}/"


def stored(body: dict) -> Healthcheck:
    return Healthcheck.objects.get(public_id=body["id"])


@pytest.fixture
def mcp_check(client) -> dict:
    response = client.post(URL, SEED_MCP, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_create_mcp_check_answers_201_with_the_header_value_masked(client):
    response = client.post(URL, SEED_MCP, format="json")

    assert response.status_code == 201
    body = response.json()
    assert body["type"] == 13
    assert body["type_name"] == "mcp"
    assert body["config"] == {
        "uri": "https://mcp.example.com/mcp",
        "headers": {"Authorization": MASK},
        "requiredTools": ["search_docs", "read_page"],
        "minTools": 2,
        "timeout": 10.0,
    }


def test_reading_the_mcp_check_back_shows_the_config_with_the_header_masked(client, mcp_check):
    body = client.get(detail(mcp_check)).json()

    assert body["config"]["headers"] == {"Authorization": MASK}
    assert body["config"]["requiredTools"] == ["search_docs", "read_page"]


def test_header_values_are_stored_encrypted(mcp_check):
    healthcheck = stored(mcp_check)

    assert "your-key" not in healthcheck.secret_headers
    assert "your-key" not in str(healthcheck.config)
    assert decrypt_headers(healthcheck.secret_headers) == {"Authorization": "Bearer your-key"}


@pytest.mark.parametrize(
    ("given", "number"), [(13, 13), ("13", 13), ("mcp", 13), ("MCP", 13), (1, 1), ("http", 1)]
)
def test_type_is_accepted_as_number_or_name(client, given, number):
    payload = {**SEED_MCP} if number == 13 else {**HTTP_CHECK}
    response = client.post(URL, {**payload, "type": given}, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["type"] == number


def test_new_check_defaults_to_every_region_the_plan_allows_and_is_pending(client):
    body = client.post(URL, HTTP_CHECK, format="json").json()

    assert body["regions"] == ["ap-southeast", "eu-west", "us-east"]
    assert body["status"] == "pending"
    assert body["interval"] == 60
    assert body["next_check_at"] is not None


def test_http_config_is_answered_with_its_defaults(client):
    body = client.post(URL, HTTP_CHECK, format="json").json()

    assert body["config"] == {
        "uri": "https://example.com/",
        "method": "GET",
        "headers": {},
        "body": "",
        "expectedStatus": ["2xx"],
        "keyword": None,
        "keywordAbsent": False,
        "followRedirects": True,
        "timeout": 10.0,
    }


def test_create_with_regions_tags_and_interval(client):
    payload = {**HTTP_CHECK, "regions": ["eu-west"], "tags": ["prod", "api"], "interval": 120}
    body = client.post(URL, payload, format="json").json()

    assert body["regions"] == ["eu-west"]
    assert body["tags"] == ["api", "prod"]
    assert body["interval"] == 120


def test_create_paused_check_is_paused_and_not_scheduled(client):
    body = client.post(URL, {**HTTP_CHECK, "paused": True}, format="json").json()

    assert body["status"] == "paused"
    assert body["next_check_at"] is None


def test_list_is_paginated(client):
    for index in range(3):
        client.post(URL, {**HTTP_CHECK, "name": f"check {index}"}, format="json")

    body = client.get(URL, {"page_size": 2}).json()

    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"] is not None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"type": "mcp"}, ["Docs MCP"]),
        ({"type": "13"}, ["Docs MCP"]),
        ({"type": "http"}, ["Homepage"]),
        ({"tag": "prod"}, ["Homepage"]),
        ({"search": "docs"}, ["Docs MCP"]),
        ({"search": "mcp.example.com"}, ["Docs MCP"]),
        ({"status": "paused"}, ["Homepage"]),
        ({"status": "pending"}, ["Docs MCP"]),
    ],
)
def test_list_filters(client, query, expected):
    client.post(URL, SEED_MCP, format="json")
    client.post(URL, {**HTTP_CHECK, "tags": ["prod"], "paused": True}, format="json")

    body = client.get(URL, query).json()

    assert [item["name"] for item in body["results"]] == expected


def test_list_filter_with_an_unknown_type_is_a_400(client):
    response = client.get(URL, {"type": "ftp"})

    assert response.status_code == 400
    assert "type" in response.json()


def test_put_replaces_the_check(client, mcp_check):
    payload = {**SEED_MCP, "name": "Renamed", "config": {**SEED_MCP["config"], "minTools": 5}}
    response = client.put(detail(mcp_check), payload, format="json")

    assert response.status_code == 200
    assert response.json()["name"] == "Renamed"
    assert response.json()["config"]["minTools"] == 5


def test_patch_merges_config_keys(client, mcp_check):
    response = client.patch(detail(mcp_check), {"config": {"minTools": 1}}, format="json")

    assert response.status_code == 200
    assert response.json()["config"]["minTools"] == 1
    assert response.json()["config"]["requiredTools"] == ["search_docs", "read_page"]


def test_patch_that_omits_headers_keeps_them(client, mcp_check):
    client.patch(detail(mcp_check), {"name": "Other", "config": {"minTools": 0}}, format="json")

    assert decrypt_headers(stored(mcp_check).secret_headers) == {"Authorization": "Bearer your-key"}


def test_header_sent_back_masked_keeps_its_stored_value(client, mcp_check):
    headers = {"Authorization": MASK, "X-Team": "blue"}
    response = client.patch(detail(mcp_check), {"config": {"headers": headers}}, format="json")

    assert response.status_code == 200
    assert decrypt_headers(stored(mcp_check).secret_headers) == {
        "Authorization": "Bearer your-key",
        "X-Team": "blue",
    }


def test_header_sent_with_a_new_value_replaces_it(client, mcp_check):
    client.patch(detail(mcp_check), {"config": {"headers": {"Authorization": "Bearer new"}}}, format="json")

    assert decrypt_headers(stored(mcp_check).secret_headers) == {"Authorization": "Bearer new"}


def test_empty_headers_remove_them(client, mcp_check):
    body = client.patch(detail(mcp_check), {"config": {"headers": {}}}, format="json").json()

    assert body["config"]["headers"] == {}
    assert stored(mcp_check).secret_headers == ""


def test_masked_value_for_a_header_never_stored_is_a_400(client, mcp_check):
    response = client.patch(detail(mcp_check), {"config": {"headers": {"X-New": MASK}}}, format="json")

    assert response.status_code == 400
    assert "config.headers.X-New" in response.json()


def test_changing_the_type_needs_the_whole_new_config(client, mcp_check):
    response = client.patch(detail(mcp_check), {"type": "http"}, format="json")

    assert response.status_code == 400
    assert "config" in response.json()


def test_delete_removes_the_check(client, mcp_check):
    assert client.delete(detail(mcp_check)).status_code == 204
    assert client.get(detail(mcp_check)).status_code == 404


def test_pause_then_resume(client, mcp_check):
    paused = client.post(detail(mcp_check) + "pause/").json()
    resumed = client.post(detail(mcp_check) + "resume/").json()

    assert (paused["paused"], paused["status"], paused["next_check_at"]) == (True, "paused", None)
    assert (resumed["paused"], resumed["status"]) == (False, "pending")
    assert resumed["next_check_at"] is not None


def test_patch_paused_pauses(client, mcp_check):
    body = client.patch(detail(mcp_check), {"paused": True}, format="json").json()

    assert body["status"] == "paused"


def test_a_malformed_id_is_a_404(client):
    assert client.get(f"{URL}not-a-uuid/").status_code == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"type": "ftp"}, "type"),
        ({"type": 12}, "type"),
        ({"type": True}, "type"),
        ({"config": "https://x"}, "config"),
        ({"config": {"uri": "ftp://mcp.example.com/"}}, "config.uri"),
        ({"config": {"uri": "/mcp"}}, "config.uri"),
        ({"config": {"uri": "mcp.example.com/mcp"}}, "config.uri"),
        ({"config": {"uri": "https://user:pw@mcp.example.com/mcp"}}, "config.uri"),
        ({"config": {"uri": "https://mcp.example.com/a b"}}, "config.uri"),
        ({"config": {}}, "config.uri"),
        (
            {"config": {"uri": "https://mcp.example.com/mcp", "headers": {"Bad Name": "x"}}},
            "config.headers.Bad Name",
        ),
        ({"config": {"uri": "https://mcp.example.com/mcp", "headers": {"X:Y": "x"}}}, "config.headers.X:Y"),
        (
            {"config": {"uri": "https://mcp.example.com/mcp", "headers": {"X-A": "a\r\nInjected: 1"}}},
            "config.headers.X-A",
        ),
        (
            {"config": {"uri": "https://mcp.example.com/mcp", "headers": {"X-A": "a\nb"}}},
            "config.headers.X-A",
        ),
        ({"config": {"uri": "https://mcp.example.com/mcp", "headers": {"X-A": 5}}}, "config.headers.X-A"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "headers": ["X-A"]}}, "config.headers"),
        (
            {"config": {"uri": "https://mcp.example.com/mcp", "headers": {f"X-{i}": "v" for i in range(51)}}},
            "config.headers",
        ),
        (
            {"config": {"uri": "https://mcp.example.com/mcp", "headers": {"X-Big": "v" * 9000}}},
            "config.headers",
        ),
        (
            {"config": {"uri": "https://mcp.example.com/mcp", "requiredTools": "search"}},
            "config.requiredTools",
        ),
        (
            {"config": {"uri": "https://mcp.example.com/mcp", "requiredTools": ["a", "a"]}},
            "config.requiredTools",
        ),
        ({"config": {"uri": "https://mcp.example.com/mcp", "requiredTools": [""]}}, "config.requiredTools"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "requiredTools": [" "]}}, "config.requiredTools"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "requiredTools": [1]}}, "config.requiredTools"),
        (
            {
                "config": {
                    "uri": "https://mcp.example.com/mcp",
                    "requiredTools": [f"t{i}" for i in range(201)],
                }
            },
            "config.requiredTools",
        ),
        ({"config": {"uri": "https://mcp.example.com/mcp", "minTools": -1}}, "config.minTools"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "minTools": 1.5}}, "config.minTools"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "minTools": "2"}}, "config.minTools"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "minTools": True}}, "config.minTools"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "timeout": 0}}, "config.timeout"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "timeout": 61}}, "config.timeout"),
        ({"config": {"uri": "https://mcp.example.com/mcp", "colour": "red"}}, "config.colour"),
        ({"interval": 0}, "interval"),
        ({"interval": 10}, "interval"),
        ({"interval": "often"}, "interval"),
        ({"regions": ["mars"]}, "regions"),
        ({"regions": []}, "regions"),
        ({"regions": "eu-west"}, "regions"),
        ({"tags": ["a", "a"]}, "tags"),
        ({"tags": ["x" * 65]}, "tags"),
        ({"tags": [f"t{i}" for i in range(21)]}, "tags"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(client, change, field):
    response = client.post(URL, {**SEED_MCP, **change}, format="json")

    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert Healthcheck.objects.count() == 0


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"uri": "https://example.com/", "method": "TRACE"}, "config.method"),
        ({"uri": "https://example.com/", "expectedStatus": ["9xx"]}, "config.expectedStatus"),
        ({"uri": "https://example.com/", "expectedStatus": []}, "config.expectedStatus"),
        ({"uri": "https://example.com/", "expectedStatus": [700]}, "config.expectedStatus"),
        ({"uri": "https://example.com/", "keyword": ""}, "config.keyword"),
        ({"uri": "https://example.com/", "keywordAbsent": True}, "config.keywordAbsent"),
        ({"uri": "https://example.com/", "followRedirects": "yes"}, "config.followRedirects"),
        ({"uri": "https://example.com/", "body": "x"}, "config.body"),
    ],
)
def test_bad_http_config_is_a_400_naming_the_field(client, config, field):
    response = client.post(URL, {**HTTP_CHECK, "config": config}, format="json")

    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_interval_below_the_plan_minimum_is_refused(make_org, make_client):
    client = make_client(make_org(plan="free"))

    response = client.post(URL, {**HTTP_CHECK, "interval": 60}, format="json")

    assert response.status_code == 400
    assert "300 seconds" in response.json()["interval"][0]


def test_region_the_plan_does_not_allow_is_refused(make_org, make_client):
    client = make_client(make_org(plan="free"))

    response = client.post(URL, {**HTTP_CHECK, "interval": 300, "regions": ["ap-southeast"]}, format="json")

    assert response.status_code == 400
    assert "ap-southeast" in response.json()["regions"][0]


def test_more_checks_than_the_plan_allows_are_refused(make_org, make_client):
    organization = make_org(plan="free")
    client = make_client(organization)
    for index in range(organization.plan.max_healthchecks):
        assert (
            client.post(URL, {**HTTP_CHECK, "name": f"c{index}", "interval": 300}, format="json").status_code
            == 201
        )

    response = client.post(URL, {**HTTP_CHECK, "interval": 300}, format="json")

    assert response.status_code == 400
    assert "allows 10 healthchecks" in response.json()["non_field_errors"][0]


def test_update_to_an_interval_below_the_plan_minimum_is_refused_and_keeps_the_check(make_org, make_client):
    client = make_client(make_org(plan="free"))
    body = client.post(URL, {**HTTP_CHECK, "interval": 300}, format="json").json()

    response = client.patch(detail(body), {"interval": 30}, format="json")

    assert response.status_code == 400
    assert stored(body).interval_seconds == 300


def test_pause_and_resume_are_recorded_as_status_changes(client, mcp_check):
    client.post(detail(mcp_check) + "pause/")
    client.post(detail(mcp_check) + "resume/")

    changes = client.get(detail(mcp_check) + "status-changes/").json()["results"]

    assert [(c["from_status"], c["to_status"], c["reason"]) for c in changes] == [
        ("paused", "pending", "Resumed"),
        ("pending", "paused", "Paused"),
    ]


def test_pausing_a_paused_check_records_nothing_more(client, mcp_check):
    client.post(detail(mcp_check) + "pause/")
    client.post(detail(mcp_check) + "pause/")

    assert len(client.get(detail(mcp_check) + "status-changes/").json()["results"]) == 1
