"""Check /api/v1/maintenance-windows/ and the maintenance state shown on healthchecks."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from monitors.models import ApiKey, MaintenanceWindow

URL = "/api/v1/maintenance-windows/"
CHECKS = "/api/v1/healthchecks/"
CHECK = {"name": "Docs", "type": "mcp", "config": {"uri": "https://mcp.example.com/mcp"}, "tags": ["db"]}


def iso(moment: datetime) -> str:
    return moment.isoformat()


@pytest.fixture
def check_id(client) -> str:
    return client.post(CHECKS, CHECK, format="json").json()["id"]


@pytest.fixture
def one_off(check_id) -> dict:
    starts = timezone.now() + timedelta(days=1)
    return {
        "name": "Database upgrade",
        "starts_at": iso(starts),
        "ends_at": iso(starts + timedelta(hours=2)),
        "healthchecks": [check_id],
    }


@pytest.fixture
def window_url(client, one_off) -> str:
    return f"{URL}{client.post(URL, one_off, format='json').json()['id']}/"


def test_a_one_off_window_is_created_and_read_back(client, one_off, check_id):
    response = client.post(URL, one_off, format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["name"] == "Database upgrade"
    assert body["duration"] == 7200
    assert body["healthchecks"] == [check_id]
    assert body["rrule"] == ""
    assert body["timezone"] == "UTC"
    assert body["active"] is False
    assert body["next"]["start"] == body["starts_at"]
    assert client.get(f"{URL}{body['id']}/").json() == body


def test_a_recurring_window_answers_its_next_occurrence_in_its_time_zone(client, check_id):
    response = client.post(
        URL,
        {
            "name": "Sunday backups",
            "starts_at": "2026-01-04T02:00:00+01:00",
            "duration": 3600,
            "rrule": "RRULE:FREQ=WEEKLY;BYDAY=SU",
            "timezone": "Europe/Berlin",
            "tags": ["db"],
        },
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["rrule"] == "FREQ=WEEKLY;BYDAY=SU"
    assert body["ends_at"] is None
    start = datetime.fromisoformat(body["next"]["start"]).astimezone(ZoneInfo("Europe/Berlin"))
    assert (start.weekday(), start.hour, start.minute) == (6, 2, 0)


def test_an_unknown_tag_is_accepted(client):
    starts = timezone.now() + timedelta(days=1)
    response = client.post(
        URL,
        {"name": "x", "starts_at": iso(starts), "duration": 60, "tags": ["not-on-any-check-yet"]},
        format="json",
    )

    assert response.status_code == 201
    assert response.json()["tags"] == ["not-on-any-check-yet"]


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            {"ends_at": "2026-01-01T00:00:00Z", "starts_at": "2026-01-02T00:00:00Z"},
            "ends_at",
            "after starts_at",
        ),
        ({"ends_at": None, "duration": None}, "duration", "Give the window's length"),
        ({"duration": 60}, "ends_at", "disagree"),
        ({"rrule": "FREQ=MINUTELY", "ends_at": None, "duration": 60}, "rrule", "too frequent"),
        ({"rrule": "FREQ=DAILY;BYHOUR=99", "ends_at": None, "duration": 60}, "rrule", "BYHOUR"),
        (
            {"rrule": "FREQ=DAILY;WKST=ZZ", "ends_at": None, "duration": 60},
            "rrule",
            "Not a valid RRULE: invalid",
        ),
        ({"timezone": "Europe/Atlantis"}, "timezone", "Unknown time zone"),
        ({"starts_at": "tomorrow"}, "starts_at", "wrong format"),
        ({"starts_at": "0001-01-01T00:00:00+05:00"}, "starts_at", "out of range"),
        ({"starts_at": "9999-12-31T23:00:00Z"}, "starts_at", "between the years"),
        ({"healthchecks": [], "tags": []}, "healthchecks", "at least one"),
        ({"healthchecks": [str(uuid.uuid4())]}, "healthchecks", "not found"),
        ({"name": ""}, "name", ""),
    ],
)
def test_bad_input_is_a_400_naming_the_field(client, one_off, change, field, words):
    response = client.post(URL, {**one_off, **change}, format="json")

    assert response.status_code == 400
    body = response.json()
    assert field in body, body
    assert words in " ".join(map(str, body[field]))


def test_another_organizations_healthcheck_is_not_found_as_a_missing_one_is(client, other_client, one_off):
    theirs = other_client.post(CHECKS, CHECK, format="json").json()["id"]
    missing = str(uuid.uuid4())

    answers = [client.post(URL, {**one_off, "healthchecks": [hc]}, format="json") for hc in (theirs, missing)]

    assert [answer.status_code for answer in answers] == [400, 400]
    assert [answer.json()["healthchecks"] for answer in answers] == [
        [f"Healthcheck {theirs} not found."],
        [f"Healthcheck {missing} not found."],
    ]


def test_patch_moves_a_window_and_keeps_its_length(client, window_url):
    later = timezone.now() + timedelta(days=3)

    response = client.patch(window_url, {"starts_at": iso(later)}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["duration"] == 7200
    assert response.json()["ends_at"] == iso((later + timedelta(hours=2)).astimezone(UTC)).replace(
        "+00:00", "Z"
    )


def test_patch_to_a_bad_rule_is_a_400_and_changes_nothing(client, window_url):
    response = client.patch(window_url, {"rrule": "FREQ=SECONDLY", "ends_at": None}, format="json")

    assert response.status_code == 400
    assert "rrule" in response.json()
    assert MaintenanceWindow.objects.get().rrule == ""


def test_put_replaces_the_window(client, window_url, check_id):
    starts = timezone.now() - timedelta(minutes=5)

    response = client.put(
        window_url,
        {"name": "Now", "starts_at": iso(starts), "duration": 600, "tags": ["db"], "healthchecks": []},
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert response.json()["active"] is True
    assert response.json()["healthchecks"] == []
    assert response.json()["tags"] == ["db"]


@pytest.mark.parametrize(
    "extra",
    [{}, {"rrule": "FREQ=DAILY;COUNT=3", "ends_at": None, "duration": 600, "timezone": "Europe/Berlin"}],
)
def test_a_window_read_back_and_put_again_is_unchanged(client, window_url, extra):
    if extra:
        client.patch(window_url, extra, format="json")
    shown = client.get(window_url).json()

    response = client.put(window_url, shown, format="json")

    assert response.status_code == 200, response.json()
    assert {key: value for key, value in response.json().items() if key != "updated_at"} == {
        key: value for key, value in shown.items() if key != "updated_at"
    }


def test_delete_removes_the_window(client, window_url):
    assert client.delete(window_url).status_code == 204
    assert client.get(window_url).status_code == 404


@pytest.mark.parametrize(
    ("method", "payload"), [("get", None), ("put", {"name": "x"}), ("patch", {"name": "x"}), ("delete", None)]
)
def test_another_organizations_window_is_a_404_on_every_route(window_url, other_client, method, payload):
    assert getattr(other_client, method)(window_url, payload, format="json").status_code == 404


def test_another_organizations_windows_are_not_listed(window_url, other_client):
    assert other_client.get(URL).json()["count"] == 0


@pytest.mark.parametrize(
    ("method", "suffix", "payload"),
    [("post", "", {}), ("patch", "x/", {}), ("put", "x/", {}), ("delete", "x/", None)],
)
def test_a_read_only_key_cannot_write(client, make_client, org, window_url, one_off, method, suffix, payload):
    reader = make_client(org, scope=ApiKey.Scope.READ)
    url = window_url if suffix else URL

    response = getattr(reader, method)(url, payload or one_off, format="json")

    assert response.status_code == 403
    assert reader.get(window_url).status_code == 200


def test_the_list_is_paginated(client, one_off):
    for index in range(3):
        client.post(URL, {**one_off, "name": f"w{index}"}, format="json")

    page = client.get(URL, {"page_size": 2}).json()

    assert page["count"] == 3
    assert len(page["results"]) == 2
    assert page["next"]


@pytest.fixture
def three_windows(client, check_id):
    now = timezone.now()
    made = {}
    for name, starts, tags, healthchecks in [
        ("active", now - timedelta(minutes=5), [], [check_id]),
        ("upcoming", now + timedelta(hours=1), ["other"], []),
        ("past", now - timedelta(days=2), ["db"], []),
    ]:
        body = {
            "name": name,
            "starts_at": iso(starts),
            "duration": 3600,
            "tags": tags,
            "healthchecks": healthchecks,
        }
        made[name] = client.post(URL, body, format="json").json()["id"]
    return made


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ({"active": "true"}, {"active"}),
        ({"active": "false"}, {"upcoming", "past"}),
        ({"upcoming": "true"}, {"upcoming"}),
        ({"upcoming": "false"}, {"active", "past"}),
    ],
)
def test_filters_by_what_a_window_does_now(client, three_windows, query, names):
    assert {item["name"] for item in client.get(URL, query).json()["results"]} == names


def test_filter_by_healthcheck_finds_its_windows_by_id_and_by_tag(client, three_windows, check_id):
    assert {item["name"] for item in client.get(URL, {"healthcheck": check_id}).json()["results"]} == {
        "active",
        "past",
    }


def test_filter_by_another_organizations_healthcheck_finds_nothing(client, other_client, three_windows):
    theirs = other_client.post(CHECKS, CHECK, format="json").json()["id"]

    assert client.get(URL, {"healthcheck": theirs}).json()["count"] == 0


def test_a_healthcheck_in_maintenance_says_so_and_until_when(client, three_windows, check_id):
    shown = client.get(f"{CHECKS}{check_id}/").json()
    listed = client.get(CHECKS).json()["results"][0]

    active = client.get(f"{URL}{three_windows['active']}/").json()
    assert shown["in_maintenance"] is True
    assert shown["maintenance_until"] == active["current"]["end"]
    assert listed["in_maintenance"] is True


def test_a_healthcheck_out_of_maintenance_says_so(client, check_id):
    shown = client.get(f"{CHECKS}{check_id}/").json()

    assert (shown["in_maintenance"], shown["maintenance_until"]) == (False, None)


def test_listing_healthchecks_reads_the_windows_once_per_page(
    client, check_id, three_windows, django_assert_max_num_queries
):
    for index in range(5):
        client.post(CHECKS, {**CHECK, "name": f"more {index}"}, format="json")

    with django_assert_max_num_queries(12):
        page = client.get(CHECKS).json()

    # "active" holds the first check by its id; the tagged ones' window ("past") is over.
    assert [item["id"] for item in page["results"] if item["in_maintenance"]] == [check_id]


def test_the_schema_documents_the_maintenance_window_routes():
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    assert set(paths[URL]) >= {"get", "post"}
    assert set(paths[URL + "{id}/"]) >= {"get", "put", "patch", "delete"}
    assert {p["name"] for p in paths[URL]["get"]["parameters"]} >= {
        "active",
        "upcoming",
        "healthcheck",
        "page",
    }
