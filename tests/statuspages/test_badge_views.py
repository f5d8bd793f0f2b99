"""A component's badges over HTTP: SVG and shields.io JSON, what they say, their keys on public and password pages, 404s."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from monitors.models import Region, RegionState, Rollup
from monitors.services import maintenance_window_create
from statuspages import services
from tests.statuspages.svg_support import parse

pytestmark = pytest.mark.django_db

BADGES = ["status", "uptime-24h", "uptime-7d", "uptime-30d", "response-time"]


@pytest.fixture
def web() -> Client:
    return Client()


@pytest.fixture
def public(org, make_page, make_check, add_component):
    page = make_page(org)
    component = add_component(page, make_check(org, name="API", status="down"), display_name="Public API")
    return page, component


@pytest.fixture
def private(org, make_page, make_check, add_component):
    page = make_page(org, access="password", password="correct horse")
    component = add_component(page, make_check(org, name="Billing"))
    return page, component


def badge(web: Client, page, key, name: str, fmt: str = "svg", **headers):
    return web.get(f"/s/{page.slug}/badges/{key}/{name}.{fmt}", **headers)


def shields(answer) -> tuple[str, str, str]:
    data = answer.json()
    assert data["schemaVersion"] == 1
    return data["label"], data["message"], data["color"]


@pytest.mark.parametrize("name", BADGES)
def test_every_badge_is_a_well_formed_svg_with_caching_headers(web, public, name):
    page, component = public
    answer = badge(web, page, component.public_id, name)
    assert answer.status_code == 200
    assert answer["Content-Type"] == "image/svg+xml; charset=utf-8"
    assert answer["Cache-Control"] == "public, max-age=60"
    assert answer["ETag"].startswith('"')
    assert parse(answer.content.decode()).tag.endswith("svg")


@pytest.mark.parametrize("name", BADGES)
def test_a_matching_etag_gets_a_304(web, public, name):
    page, component = public
    first = badge(web, page, component.public_id, name)
    again = badge(web, page, component.public_id, name, HTTP_IF_NONE_MATCH=first["ETag"])
    assert (again.status_code, again.content) == (304, b"")


def test_the_status_badge_says_the_components_status_under_its_name(web, public):
    page, component = public
    answer = badge(web, page, component.public_id, "status", "json")
    assert shields(answer) == ("Public API", "major outage", "red")
    assert answer["Access-Control-Allow-Origin"] == "*"


def test_a_check_up_with_two_regions_down_has_a_partial_outage_badge(
    web, org, make_page, make_check, add_component
):
    page = make_page(org)
    check = make_check(org, name="API", status="up")
    for region in Region.objects.order_by("slug")[:2]:
        RegionState.objects.create(healthcheck=check, region=region, status="down")
    component = add_component(page, check)
    assert shields(badge(web, page, component.public_id, "status", "json"))[1:] == (
        "partial outage",
        "orange",
    )


def test_a_component_in_maintenance_has_a_maintenance_badge(web, org, public):
    page, component = public
    maintenance_window_create(
        organization=org,
        name="Upgrade",
        starts_at=timezone.now() - timedelta(minutes=1),
        duration=timedelta(hours=1),
        healthchecks=[component.healthcheck.public_id],
    )
    assert shields(badge(web, page, component.public_id, "status", "json"))[1:] == (
        "under maintenance",
        "blue",
    )


def test_uptime_badges_use_the_pages_maths_floored(web, org, make_page, make_check, add_component, change):
    now = timezone.now()
    page = make_page(org)
    check = make_check(org, age=timedelta(days=60), now=now)
    # 15 minutes down two hours ago: 1 % of a day, 1/7 % of a week, 1/30 % of 30 days.
    change(check, now - timedelta(hours=2), "up", "down")
    change(check, now - timedelta(hours=2) + timedelta(minutes=14, seconds=24), "down", "up")
    component = add_component(page, check)
    figures = {
        period: shields(badge(web, page, component.public_id, f"uptime-{period}", "json"))[1]
        for period in ("24h", "7d", "30d")
    }
    assert figures == {"24h": "99.00%", "7d": "99.85%", "30d": "99.96%"}


def test_a_component_without_any_measured_time_has_no_data_never_100(
    web, org, make_page, make_check, add_component
):
    page = make_page(org)
    component = add_component(page, make_check(org, status="pending", age=timedelta(0)))
    assert shields(badge(web, page, component.public_id, "uptime-30d", "json"))[1:] == (
        "no data",
        "lightgrey",
    )


def test_the_response_time_badge_is_the_mean_of_the_charts_hourly_medians(web, org, public):
    page, component = public
    region = Region.objects.first()
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)
    for hours_ago, p50 in ((1, 100.0), (2, 300.0)):
        Rollup.objects.create(
            healthcheck=component.healthcheck,
            region=region,
            period=Rollup.Period.HOUR,
            start=hour - timedelta(hours=hours_ago),
            runs=10,
            p50_ms=p50,
        )
    assert shields(badge(web, page, component.public_id, "response-time", "json"))[1:] == (
        "200 ms",
        "brightgreen",
    )


def test_a_password_pages_component_answers_to_its_token_only(web, private):
    page, component = private
    assert badge(web, page, component.badge_token, "status").status_code == 200
    assert badge(web, page, component.public_id, "status").status_code == 404


def test_a_rotated_token_stops_answering(web, client, private):
    page, component = private
    old = component.badge_token
    url = f"/api/v1/status-pages/{page.public_id}/components/{component.public_id}/rotate-badge-token/"
    rotated = client.post(url)
    assert rotated.status_code == 200
    new = rotated.json()["badge_token"]
    assert new != old
    assert len(new) >= 32
    assert badge(web, page, old, "status").status_code == 404
    assert badge(web, page, new, "status").status_code == 200


def test_the_owners_api_shows_the_badge_urls_with_the_key_that_works(client, private, public):
    for page, component in (private, public):
        url = f"/api/v1/status-pages/{page.public_id}/components/{component.public_id}/"
        shown = client.get(url).json()
        key = component.badge_token if page.is_private else component.public_id
        assert shown["badges"]["status"] == f"http://testserver/s/{page.slug}/badges/{key}/status.svg"
        assert shown["badges"]["uptime-30d-json"].endswith(f"/badges/{key}/uptime-30d.json")


def test_another_organizations_key_cannot_rotate(other_client, private):
    page, component = private
    url = f"/api/v1/status-pages/{page.public_id}/components/{component.public_id}/rotate-badge-token/"
    assert other_client.post(url).status_code == 404


@pytest.mark.parametrize(
    "key",
    [
        "0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a",  # no such component (fixed: xdist workers collect the same ids)
        "not-a-uuid",
        "a" * 65,
        "%00",
        "..",
    ],
)
def test_an_unknown_or_malformed_key_is_a_not_found_badge(web, public, key):
    page, _ = public
    answer = badge(web, page, key, "status")
    assert answer.status_code == 404
    assert "not found" in answer.content.decode()
    assert answer["Cache-Control"] == "no-store"


def test_a_deleted_components_badge_is_a_404_badge(web, public):
    page, component = public
    services.component_delete(component=component)
    answer = badge(web, page, component.public_id, "uptime-7d")
    assert answer.status_code == 404
    assert parse(answer.content.decode()).tag.endswith("svg")


def test_a_component_of_another_page_is_not_found_here(web, org, make_page, public):
    _, component = public
    other = make_page(org)
    assert badge(web, other, component.public_id, "status").status_code == 404


def test_an_unknown_badge_name_or_page_is_a_404_badge(web, public):
    page, component = public
    assert badge(web, page, component.public_id, "uptime-1y").status_code == 404
    unknown = web.get(f"/s/no-such-page/badges/{component.public_id}/status.json")
    assert unknown.status_code == 404
    assert unknown.json()["isError"] is True


def test_writing_to_a_badge_is_refused(web, public):
    page, component = public
    assert web.post(f"/s/{page.slug}/badges/{component.public_id}/status.svg").status_code == 405


@pytest.mark.parametrize("name", BADGES)
def test_a_badge_reads_in_a_few_queries(web, public, name):
    page, component = public
    with CaptureQueriesContext(connection) as captured:
        assert badge(web, page, component.public_id, name).status_code == 200
    assert len(captured.captured_queries) <= 3


def _asked(web: Client, page, key, name: str = "status", fmt: str = "svg") -> int:
    """Ask for a badge and return the SQL queries it took."""
    with CaptureQueriesContext(connection) as captured:
        assert badge(web, page, key, name, fmt).status_code == 200
    return len(captured.captured_queries)


def test_a_badge_asked_again_is_answered_from_what_was_kept(web, public):
    page, component = public
    _asked(web, page, component.public_id)  # learns which page the address names
    _asked(web, page, component.public_id)  # drawn and kept
    assert _asked(web, page, component.public_id) == 0
    assert _asked(web, page, component.public_id, fmt="json") > 0  # each format is kept on its own


def test_a_kept_badge_is_drawn_again_after_its_component_changes(web, public):
    page, component = public
    for _ in range(3):
        badge(web, page, component.public_id, "status", "json")
    services.component_update(component=component, changes={"display_name": "Renamed API"})
    assert shields(badge(web, page, component.public_id, "status", "json"))[0] == "Renamed API"


def test_a_rotated_token_stops_answering_though_its_badge_was_kept(web, private):
    page, component = private
    old = component.badge_token
    for _ in range(3):
        assert badge(web, page, old, "status").status_code == 200
    services.component_rotate_badge_token(component=component)
    assert badge(web, page, old, "status").status_code == 404


def test_a_page_made_private_stops_answering_to_public_ids_though_kept(web, public):
    page, component = public
    for _ in range(3):
        assert badge(web, page, component.public_id, "status").status_code == 200
    services.status_page_update(page=page, changes={"access": "password", "password": "correct horse"})
    assert badge(web, page, component.public_id, "status").status_code == 404
    assert badge(web, page, component.badge_token, "status").status_code == 200
