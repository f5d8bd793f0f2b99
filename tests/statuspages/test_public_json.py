"""The page's Statuspage-compatible /api/v2 JSON over HTTP: shapes as the fixture's, ETag and 304, caching, CORS, access."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from monitors.services import maintenance_window_create
from statuspages import services

pytestmark = pytest.mark.django_db

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "summary.json").read_text())
ENDPOINTS = ["summary", "status", "components", "incidents", "incidents/unresolved"]


@pytest.fixture
def web() -> Client:
    return Client()


@pytest.fixture
def page(org, make_page, make_check, add_component):
    page = make_page(org, title="Acme", time_zone="America/Los_Angeles")
    group = services.group_create(page=page, name="Core", position=1)
    api = add_component(page, make_check(org, name="API", status="down"), group=group.public_id, position=1)
    add_component(page, make_check(org, name="Docs", status="up"), position=2)
    incident = services.incident_create(
        page=page,
        changes={"title": "API errors", "impact": "major", "components": [api.public_id]},
        body="Investigating.",
        now=timezone.now(),
    )
    services.incident_update_add(incident=incident, status="identified", body="Found it.", now=timezone.now())
    resolved = services.incident_create(page=page, changes={"title": "Old"}, body="b", now=timezone.now())
    services.incident_update_add(incident=resolved, status="resolved", body="Fixed.", now=timezone.now())
    return page


def get(web: Client, page, endpoint: str, **headers):
    return web.get(f"/s/{page.slug}/api/v2/{endpoint}.json", **headers)


def keys_of(value):
    """Return the nested key structure of a JSON value: dict keys in order, the first item of a list."""
    if isinstance(value, dict):
        return {key: keys_of(item) for key, item in value.items()}
    if isinstance(value, list):
        return [keys_of(value[0])] if value else []
    return None


def test_summary_json_has_the_fixtures_shape(web, page):
    summary = get(web, page, "summary").json()
    assert list(summary) == list(FIXTURE)
    assert keys_of(summary["page"]) == keys_of(FIXTURE["page"])
    leaf = next(c for c in summary["components"] if not c["group"])
    group = next(c for c in summary["components"] if c["group"])
    fixture_leaf = next(c for c in FIXTURE["components"] if not c["group"])
    fixture_group = next(c for c in FIXTURE["components"] if c["group"])
    assert list(leaf) == list(fixture_leaf)
    assert list(group) == list(fixture_group)
    (incident,) = summary["incidents"]
    fixture_incident = FIXTURE["incidents"][0]
    assert list(incident) == list(fixture_incident)
    assert list(incident["incident_updates"][0]) == list(fixture_incident["incident_updates"][0])
    assert summary["scheduled_maintenances"] == []


def test_summary_json_says_what_the_page_says(web, page):
    summary = get(web, page, "summary").json()
    assert summary["status"] == {"indicator": "major", "description": "Partial System Outage"}
    statuses = {c["name"]: c["status"] for c in summary["components"]}
    assert statuses == {"API": "major_outage", "Core": "major_outage", "Docs": "operational"}
    (incident,) = summary["incidents"]
    assert incident["name"] == "API errors"
    assert [u["body"] for u in incident["incident_updates"]] == ["Found it.", "Investigating."]
    assert [c["name"] for c in incident["components"]] == ["API"]
    assert summary["page"]["updated_at"].endswith(("-08:00", "-07:00"))
    assert summary["page"]["url"] == f"http://testserver/s/{page.slug}/"


def test_incidents_json_lists_resolved_ones_too_and_unresolved_only_the_open(web, page):
    assert [i["name"] for i in get(web, page, "incidents").json()["incidents"]] == ["Old", "API errors"]
    assert [i["name"] for i in get(web, page, "incidents/unresolved").json()["incidents"]] == ["API errors"]


def test_status_and_components_json_have_their_own_shapes(web, page):
    assert list(get(web, page, "status").json()) == ["page", "status"]
    assert list(get(web, page, "components").json()) == ["page", "components"]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_every_endpoint_has_a_strong_etag_caching_and_cors(web, page, endpoint):
    answer = get(web, page, endpoint)
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/json"
    assert answer["ETag"].startswith('"')
    assert not answer["ETag"].startswith("W/")
    assert answer["Cache-Control"] == "public, max-age=30"
    assert answer["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_matching_if_none_match_gets_a_304_without_a_body(web, page, endpoint):
    etag = get(web, page, endpoint)["ETag"]
    answer = get(web, page, endpoint, HTTP_IF_NONE_MATCH=etag)
    assert (answer.status_code, answer.content, answer["ETag"]) == (304, b"", etag)
    assert answer["Access-Control-Allow-Origin"] == "*"


def test_the_etag_changes_when_the_page_changes(web, page):
    etag = get(web, page, "summary")["ETag"]
    assert get(web, page, "summary")["ETag"] == etag
    services.incident_create(page=page, changes={"title": "New"}, body="b", now=timezone.now())
    answer = get(web, page, "summary", HTTP_IF_NONE_MATCH=etag)
    assert answer.status_code == 200
    assert answer["ETag"] != etag


def test_hostile_names_are_json_strings_unchanged(web, org, make_page, make_check, add_component):
    page = make_page(org)
    name = '</script><b>"x" \u2028 \U0001f600'
    add_component(page, make_check(org), display_name=name)
    answer = get(web, page, "components")
    assert answer.status_code == 200
    assert json.loads(answer.content)["components"][0]["name"] == name


def test_a_private_page_refuses_its_json_without_the_cookie(web, org, make_page):
    page = make_page(org, access="password", password="correct horse")
    answer = get(web, page, "summary")
    assert answer.status_code == 403
    assert "password" in answer.json()["error"]
    web.post(f"/s/{page.slug}/login/", {"password": "correct horse"})
    opened = get(web, page, "summary")
    assert opened.status_code == 200
    assert opened["Cache-Control"] == "private, max-age=30"


def test_an_unknown_page_is_a_json_404(web, db):
    answer = web.get("/s/nothing-here/api/v2/summary.json")
    assert answer.status_code == 404
    assert answer["Access-Control-Allow-Origin"] == "*"
    assert answer.json() == {"error": "No status page here."}


def test_writing_to_the_json_is_refused(web, page):
    answer = web.post(f"/s/{page.slug}/api/v2/summary.json")
    assert (answer.status_code, answer["Allow"]) == (405, "GET, HEAD")


def test_head_answers_the_headers_of_a_get_without_the_body(web, page):
    got = get(web, page, "summary")
    head = web.head(f"/s/{page.slug}/api/v2/summary.json")
    assert (head.status_code, head.content) == (200, b"")
    assert head["ETag"] == got["ETag"]
    assert head["Content-Length"] == str(len(got.content))


def test_a_component_in_maintenance_reads_under_maintenance(web, org, make_page, make_check, add_component):
    page = make_page(org)
    check = make_check(org, name="API")
    add_component(page, check)
    maintenance_window_create(
        organization=org,
        name="Upgrade",
        starts_at=timezone.now() - timedelta(minutes=5),
        duration=timedelta(hours=1),
        healthchecks=[check.public_id],
    )
    summary = get(web, page, "summary").json()
    assert summary["components"][0]["status"] == "under_maintenance"
    assert summary["status"] == {"indicator": "maintenance", "description": "Service Under Maintenance"}


# --- scheduled maintenances (monitors' maintenance windows) --------------------------------------

MAINTENANCE_ENDPOINTS = [
    "scheduled-maintenances",
    "scheduled-maintenances/upcoming",
    "scheduled-maintenances/active",
]


@pytest.fixture
def maintained(org, make_page, make_check, add_component):
    """Return a page whose API is in a window now, and has a nightly window and a window over another check."""
    page = make_page(org, time_zone="Europe/Berlin")
    api = make_check(org, name="API")
    docs = make_check(org, name="Docs")
    elsewhere = make_check(org, name="Not on the page")
    add_component(page, api)
    add_component(page, docs)
    now = timezone.now()
    maintenance_window_create(
        organization=org,
        name="Failover drill",
        starts_at=now - timedelta(minutes=5),
        duration=timedelta(hours=1),
        healthchecks=[api.public_id],
    )
    maintenance_window_create(
        organization=org,
        name="Nightly backup",
        description="Writes pause for a minute.",
        starts_at=now + timedelta(hours=2),
        duration=timedelta(minutes=30),
        rrule="FREQ=DAILY",
        timezone="Europe/Berlin",
        healthchecks=[docs.public_id],
    )
    maintenance_window_create(
        organization=org,
        name="Private work",
        starts_at=now + timedelta(hours=1),
        duration=timedelta(hours=1),
        healthchecks=[elsewhere.public_id],
    )
    return page


def names_and_statuses(answer) -> list[tuple[str, str]]:
    return [(m["name"], m["status"]) for m in answer["scheduled_maintenances"]]


def test_active_json_lists_the_maintenance_in_progress(web, maintained):
    answer = get(web, maintained, "scheduled-maintenances/active").json()
    assert names_and_statuses(answer) == [("Failover drill", "in_progress")]
    (active,) = answer["scheduled_maintenances"]
    assert [c["name"] for c in active["components"]] == ["API"]
    assert active["components"][0]["status"] == "under_maintenance"
    assert active["impact"] == "maintenance"
    # Made while it ran: never announced as scheduled.
    assert [u["status"] for u in active["incident_updates"]] == ["in_progress"]


def test_upcoming_json_lists_a_recurring_windows_next_occurrences_soonest_first(web, maintained):
    answer = get(web, maintained, "scheduled-maintenances/upcoming").json()
    assert names_and_statuses(answer) == [("Nightly backup", "scheduled")] * 3
    starts = [m["scheduled_for"] for m in answer["scheduled_maintenances"]]
    assert starts == sorted(starts)
    assert len(set(starts)) == 3
    first = answer["scheduled_maintenances"][0]
    assert first["incident_updates"][0]["body"] == "Writes pause for a minute."
    assert first["scheduled_for"].endswith(("+01:00", "+02:00"))  # the page's zone, Berlin


def test_a_window_over_no_component_of_the_page_is_not_shown(web, maintained):
    answer = get(web, maintained, "scheduled-maintenances").json()
    assert "Private work" not in {m["name"] for m in answer["scheduled_maintenances"]}
    assert len(answer["scheduled_maintenances"]) == 4


def test_summary_lists_the_active_then_the_upcoming_maintenances(web, maintained):
    summary = get(web, maintained, "summary").json()
    assert [m["status"] for m in summary["scheduled_maintenances"]] == ["in_progress"] + ["scheduled"] * 3


def test_the_page_shows_the_same_maintenances_as_the_json(web, maintained):
    html = web.get(f"/s/{maintained.slug}/").content.decode()
    for maintenance in get(web, maintained, "summary").json()["scheduled_maintenances"]:
        assert f'id="maintenance-{maintenance["id"]}"' in html
    assert "Private work" not in html


@pytest.mark.parametrize("endpoint", MAINTENANCE_ENDPOINTS)
def test_maintenance_endpoints_have_an_etag_caching_cors_and_answer_304(web, maintained, endpoint):
    got = get(web, maintained, endpoint)
    assert got.status_code == 200
    assert got["Cache-Control"] == "public, max-age=30"
    assert got["Access-Control-Allow-Origin"] == "*"
    assert set(got.json()) == {"page", "scheduled_maintenances"}
    again = get(web, maintained, endpoint, HTTP_IF_NONE_MATCH=got["ETag"])
    assert (again.status_code, again.content) == (304, b"")


@pytest.mark.parametrize("endpoint", MAINTENANCE_ENDPOINTS)
def test_maintenance_endpoints_of_a_page_without_windows_are_empty_lists(web, page, endpoint):
    assert get(web, page, endpoint).json()["scheduled_maintenances"] == []
