"""What the page selectors read from monitors: current status, 90 days of history, response times, bounded queries."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitors.models import ProbeResult, Region, RegionState, Rollup
from monitors.services import maintenance_window_create
from statuspages import selectors, services
from statuspages.render.bars import BarLevel
from statuspages.render.vocabulary import ComponentStatus, Indicator

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
URL = "https://status.example.com/"

pytestmark = pytest.mark.django_db


def view_of(page, **kwargs):
    return selectors.page_view(page=page, now=NOW, url=URL, **kwargs)


def only_component(page):
    (component,) = view_of(page).components
    return component


def test_a_check_created_ten_days_ago_has_eighty_days_without_data(org, make_check, make_page, add_component):
    page = make_page(org)
    add_component(page, make_check(org, age=timedelta(days=10), now=NOW))
    bars = only_component(page).bars
    levels = [bar.level for bar in bars]
    assert len(bars) == 90
    # 79 whole days before the creation day, then the creation day (measured from noon) and ten more.
    assert levels == [BarLevel.NO_DATA] * 79 + [BarLevel.UP] * 11
    assert bars[79].counted_seconds == 12 * 3600


def test_downtime_comes_from_down_periods_and_degraded_is_not_downtime(
    org, make_check, make_page, add_component, change
):
    page = make_page(org)
    check = make_check(org, now=NOW)
    day = datetime(2026, 11, 20, tzinfo=UTC)
    change(check, day + timedelta(hours=1), "up", "down")
    change(check, day + timedelta(hours=1, minutes=45), "down", "degraded")
    change(check, day + timedelta(hours=5), "degraded", "up")
    add_component(page, check)
    bars = {bar.day.isoformat(): bar for bar in only_component(page).bars}
    assert bars["2026-11-20"].downtime_seconds == 45 * 60
    assert bars["2026-11-20"].level is BarLevel.MAJOR
    assert bars["2026-11-19"].downtime_seconds == 0
    assert bars["2026-11-21"].level is BarLevel.UP


def test_the_status_at_the_window_start_is_the_first_later_changes_from_status(
    org, make_check, make_page, add_component, change
):
    page = make_page(org)
    check = make_check(org, now=NOW)
    # Down since before the 90 days began, up again ten days ago: every day before is down.
    change(check, NOW - timedelta(days=10), "down", "up")
    add_component(page, check)
    bars = only_component(page).bars
    assert bars[0].level is BarLevel.CRITICAL
    assert bars[0].uptime == "0.00"
    assert bars[-1].uptime == "100.00"


def test_paused_and_pending_time_is_no_data_not_uptime(org, make_check, make_page, add_component, change):
    page = make_page(org)
    check = make_check(org, now=NOW)
    change(check, NOW - timedelta(days=30), "up", "paused")
    change(check, NOW - timedelta(days=20), "paused", "pending")
    change(check, NOW - timedelta(days=19, hours=23), "pending", "up")
    add_component(page, check)
    bars = only_component(page).bars
    assert [bar.level for bar in bars[-29:-21]] == [BarLevel.NO_DATA] * 8
    assert bars[-40].level is BarLevel.UP


def test_a_page_in_another_zone_cuts_days_at_its_own_midnight(
    org, make_check, make_page, add_component, change
):
    page = make_page(org, time_zone="Asia/Tokyo")
    check = make_check(org, now=NOW)
    # 20 Nov 23:30 UTC is 21 Nov 08:30 in Tokyo.
    change(check, datetime(2026, 11, 20, 23, 30, tzinfo=UTC), "up", "down")
    change(check, datetime(2026, 11, 20, 23, 40, tzinfo=UTC), "down", "up")
    add_component(page, check)
    bars = {bar.day.isoformat(): bar for bar in only_component(page).bars}
    assert bars["2026-11-21"].downtime_seconds == 600
    assert bars["2026-11-20"].downtime_seconds == 0


@pytest.mark.parametrize(
    ("status", "regions_down", "expected"),
    [
        ("up", 0, ComponentStatus.OPERATIONAL),
        ("up", 1, ComponentStatus.PARTIAL_OUTAGE),
        ("degraded", 0, ComponentStatus.DEGRADED_PERFORMANCE),
        ("down", 2, ComponentStatus.MAJOR_OUTAGE),
        ("pending", 0, ComponentStatus.OPERATIONAL),
    ],
)
def test_a_components_status_comes_from_its_check_and_its_regions(
    org, make_check, make_page, add_component, status, regions_down, expected
):
    page = make_page(org)
    check = make_check(org, status=status, now=NOW)
    for region in Region.objects.order_by("slug")[:regions_down]:
        RegionState.objects.create(healthcheck=check, region=region, status="down")
    add_component(page, check)
    component = only_component(page)
    assert (component.status, component.regions_down) == (expected, regions_down)


def test_the_page_status_blends_components_and_open_incidents(org, make_check, make_page, add_component):
    page = make_page(org)
    add_component(page, make_check(org, status="up", now=NOW))
    assert view_of(page).status.indicator is Indicator.NONE
    services.incident_create(
        page=page, changes={"title": "Slow logins", "impact": "major"}, body="Looking", now=NOW
    )
    assert view_of(page).status.indicator is Indicator.MAJOR


def test_response_times_are_hourly_medians_weighted_by_runs_across_regions(
    org, make_check, make_page, add_component
):
    page = make_page(org)
    check = make_check(org, now=NOW)
    first, second = Region.objects.order_by("slug")[:2]
    hour = NOW - timedelta(hours=2)
    Rollup.objects.create(healthcheck=check, region=first, period="hour", start=hour, runs=3, p50_ms=100)
    Rollup.objects.create(healthcheck=check, region=second, period="hour", start=hour, runs=1, p50_ms=200)
    Rollup.objects.create(
        healthcheck=check, region=first, period="hour", start=NOW - timedelta(days=3), runs=1, p50_ms=9
    )
    add_component(page, check)
    assert only_component(page).points == ((hour, 125.0),)


def test_mcp_details_are_the_latest_results_and_only_where_asked(org, make_check, make_page, add_component):
    page = make_page(org)
    shown, hidden = make_check(org, name="shown", now=NOW), make_check(org, name="hidden", now=NOW)
    region = Region.objects.order_by("slug").first()
    for check in (shown, hidden):
        for minutes, version in ((20, "1.0.0"), (10, "1.1.0")):
            ProbeResult.objects.create(
                healthcheck=check,
                region=region,
                slot=NOW - timedelta(minutes=minutes),
                checked_at=NOW,
                recorded_at=NOW,
                status="up",
                protocol="2025-06-18",
                server_version=version,
                tool_count=4,
            )
    add_component(page, shown, show_mcp_details=True)
    add_component(page, hidden)
    details = {view.name: view.mcp for view in view_of(page).components}
    assert details["shown"] == selectors.McpDetails("2025-06-18", "1.1.0", 4)
    assert details["hidden"] is None


def test_only_show_when_not_operational_hides_an_operational_component(
    org, make_check, make_page, add_component
):
    page = make_page(org)
    add_component(
        page, make_check(org, name="quiet", status="up", now=NOW), only_show_when_not_operational=True
    )
    add_component(
        page, make_check(org, name="loud", status="down", now=NOW), only_show_when_not_operational=True
    )
    shown = [view.name for section in view_of(page).sections for view in section.components]
    assert shown == ["loud"]


def _page_with(org, make_check, make_page, add_component, change, count):
    page = make_page(org)
    group = services.group_create(page=page, name="Core")
    region = Region.objects.order_by("slug").first()
    for index in range(count):
        check = make_check(org, name=f"check {index}", now=NOW)
        change(check, NOW - timedelta(days=5), "up", "down")
        change(check, NOW - timedelta(days=5, minutes=-30), "down", "up")
        RegionState.objects.create(healthcheck=check, region=region, status="up")
        Rollup.objects.create(
            healthcheck=check, region=region, period="hour", start=NOW - timedelta(hours=1), runs=1, p50_ms=50
        )
        component = add_component(
            page, check, show_mcp_details=True, group=group.public_id if index % 2 else None
        )
        services.incident_create(
            page=page,
            changes={"title": f"incident {index}", "components": [component.public_id]},
            body="b",
            now=NOW,
        )
    return page


def _queries(page, **kwargs) -> int:
    with CaptureQueriesContext(connection) as captured:
        view_of(page, **kwargs)
    return len(captured.captured_queries)


@pytest.mark.parametrize("history", [True, False], ids=["html", "json"])
def test_the_query_count_does_not_grow_with_the_components(
    org, make_check, make_page, add_component, change, history
):
    small = _page_with(org, make_check, make_page, add_component, change, 2)
    large = _page_with(org, make_check, make_page, add_component, change, 12)
    assert _queries(small, history=history) == _queries(large, history=history)


@pytest.mark.parametrize("history", [True, False], ids=["html", "json"])
def test_the_query_count_stays_with_maintenance_windows_over_every_component(
    org, make_check, make_page, add_component, change, history
):
    small = _page_with(org, make_check, make_page, add_component, change, 2)
    large = _page_with(org, make_check, make_page, add_component, change, 12)
    maintenance_window_create(
        organization=org,
        name="Nightly",
        starts_at=NOW - timedelta(hours=1),
        duration=timedelta(hours=2),
        rrule="FREQ=DAILY",
        tags=["db"],
        healthchecks=[c.healthcheck.public_id for p in (small, large) for c in p.components.all()],
    )
    # The first occurrence running, and the next three.
    assert len(view_of(large, history=history).content.maintenances) == 4
    assert _queries(small, history=history) == _queries(large, history=history)


def test_a_fifty_component_page_reads_in_a_bounded_number_of_queries(
    org, make_check, make_page, add_component, change
):
    """Measure a 50-component page: the figures go to docs/benchmarks.md, the bound is the assertion."""
    page = _page_with(org, make_check, make_page, add_component, change, 50)
    started = time.perf_counter()
    html_queries = _queries(page)
    elapsed = time.perf_counter() - started
    json_queries = _queries(page, history=False, incidents="unresolved")
    print(
        f"\n50 components on {connection.vendor}: html {html_queries} queries in {elapsed * 1000:.0f} ms, json {json_queries} queries"
    )
    assert html_queries <= 15
    # One more than before for the updates' affected components (a fixed query, not per component).
    assert json_queries <= 9


def test_the_history_reads_the_same_on_postgresql(
    postgres, org, make_check, make_page, add_component, change
):
    page = make_page(org, time_zone="America/New_York")
    check = make_check(org, now=NOW)
    change(check, datetime(2026, 11, 2, 4, 30, tzinfo=UTC), "up", "down")  # 23:30 on 1 Nov in New York
    change(check, datetime(2026, 11, 2, 5, 30, tzinfo=UTC), "down", "up")
    add_component(page, check, show_mcp_details=True)
    bars = {bar.day.isoformat(): bar for bar in only_component(page).bars}
    assert bars["2026-11-01"].downtime_seconds == 30 * 60
    assert bars["2026-11-02"].downtime_seconds == 30 * 60
    assert only_component(page).mcp is None


# --- maintenance windows (monitors.MaintenanceWindow) ---------------------------------------------


def test_a_component_in_a_maintenance_window_is_under_maintenance(org, make_check, make_page, add_component):
    page = make_page(org)
    held, free = make_check(org, name="held", status="down", now=NOW), make_check(org, name="free", now=NOW)
    maintenance_window_create(
        organization=org,
        name="Upgrade",
        starts_at=NOW - timedelta(minutes=10),
        duration=timedelta(hours=1),
        healthchecks=[held.public_id],
    )
    add_component(page, held)
    add_component(page, free)
    for history in (True, False):
        view = view_of(page, history=history)
        assert {c.name: c.status for c in view.components} == {
            "held": ComponentStatus.UNDER_MAINTENANCE,
            "free": ComponentStatus.OPERATIONAL,
        }
        assert view.status.indicator is Indicator.MAINTENANCE


def test_downtime_inside_maintenance_is_left_out_of_the_day(
    org, make_check, make_page, add_component, change
):
    page = make_page(org)
    check = make_check(org, now=NOW)
    day = datetime(2026, 11, 20, tzinfo=UTC)
    maintenance_window_create(
        organization=org,
        name="Upgrade",
        starts_at=day + timedelta(hours=1),
        duration=timedelta(hours=1),
        healthchecks=[check.public_id],
    )
    change(check, day + timedelta(hours=1, minutes=10), "up", "down")
    change(check, day + timedelta(hours=2, minutes=5), "down", "up")
    add_component(page, check)
    bars = {bar.day.isoformat(): bar for bar in only_component(page).bars}
    assert bars["2026-11-20"].maintenance_seconds == 3600
    assert bars["2026-11-20"].downtime_seconds == 5 * 60
    assert bars["2026-11-21"].maintenance_seconds == 0
