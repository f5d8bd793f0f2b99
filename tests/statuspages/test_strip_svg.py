"""The 90-day strip SVG: one rect per day with its tooltip, accessible, and inert whatever the component is called."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from statuspages.render.bars import BarLevel, DayBar, IncidentSpan, Interval, day_bars
from statuspages.render.strip import FILLS, NAME_LIMIT, day_tooltip, uptime_strip_svg
from tests.statuspages.svg_support import HOSTILE_NAMES, SVG, assert_inert, parse, texts

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def bars_with_an_outage() -> list[DayBar]:
    return day_bars(
        now=NOW,
        time_zone="UTC",
        downtime=[Interval(datetime(2026, 11, 28, 9, tzinfo=UTC), datetime(2026, 11, 28, 9, 45, tzinfo=UTC))],
        maintenance=[Interval(datetime(2026, 11, 27, 2, tzinfo=UTC), datetime(2026, 11, 27, 3, tzinfo=UTC))],
        data=[Interval(datetime(2026, 10, 1, tzinfo=UTC), NOW)],
        incidents=[
            IncidentSpan(
                "Search <down> & out",
                datetime(2026, 11, 28, 9, tzinfo=UTC),
                datetime(2026, 11, 28, 10, tzinfo=UTC),
            )
        ],
    )


def test_the_strip_has_one_rect_per_day_with_its_colour_and_date():
    bars = bars_with_an_outage()

    root = parse(uptime_strip_svg("Search API", bars))
    rects = root.findall(f"{SVG}rect")

    assert len(rects) == 90
    assert [r.get("data-date") for r in rects] == [bar.day.isoformat() for bar in bars]
    by_date = {r.get("data-date"): r for r in rects}
    assert by_date["2026-11-28"].get("class") == "bar bar-major"
    assert by_date["2026-11-28"].get("fill") == FILLS[BarLevel.MAJOR]
    assert by_date["2026-11-27"].get("class") == "bar bar-maintenance"
    assert by_date["2026-11-26"].get("class") == "bar bar-up"
    assert by_date["2026-09-01"].get("class") == "bar bar-no-data"
    xs = [float(r.get("x")) for r in rects]
    assert xs == sorted(xs)
    assert len(set(xs)) == 90


def test_each_day_s_tooltip_lists_its_downtime_maintenance_and_incidents():
    bars = bars_with_an_outage()

    root = parse(uptime_strip_svg("Search API", bars))
    tooltips = {r.get("data-date"): r.find(f"{SVG}title").text for r in root.findall(f"{SVG}rect")}

    assert (
        tooltips["2026-11-28"]
        == "28 Nov 2026\nUptime 96.87 %\nDown 45 minutes\nIncident: Search <down> & out"
    )
    assert tooltips["2026-11-27"] == "27 Nov 2026\nUptime 100.00 %\nNo downtime\nMaintenance 60 minutes"
    assert tooltips["2026-09-01"] == "1 Sep 2026\nNo data"


def test_the_strip_is_labelled_with_the_component_and_its_period_uptime():
    root = parse(uptime_strip_svg("Search API", bars_with_an_outage()))

    assert root.get("role") == "img"
    # Measured since 1 Oct: 59.5 days less an hour of maintenance, 45 minutes down: 99.9474 %.
    assert root.get("aria-label") == "Search API: 90 days, 99.94 % uptime"
    assert root.find(f"{SVG}title").text == root.get("aria-label")


def test_a_strip_with_no_data_says_so():
    bars = day_bars(now=NOW, time_zone="UTC", downtime=[])

    assert parse(uptime_strip_svg("New", bars)).get("aria-label") == "New: 90 days, no data"


def test_a_day_with_more_incidents_than_shown_says_how_many_more():
    bar = DayBar(
        day=date(2026, 11, 29),
        start=NOW - timedelta(hours=12),
        end=NOW,
        counted_seconds=43_200,
        downtime_seconds=0,
        maintenance_seconds=0,
        incidents=("a", "b"),
        more_incidents=7,
    )

    assert day_tooltip(bar).splitlines()[-1] == "and 7 more incidents"


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_stays_text(name):
    incidents = [IncidentSpan(name, datetime(2026, 11, 29, 1, tzinfo=UTC), None)]
    bars = day_bars(now=NOW, time_zone="UTC", downtime=[], incidents=incidents)

    svg = uptime_strip_svg(name, bars)
    root = parse(svg)

    assert_inert(root)
    label = root.get("aria-label")
    assert len(label) <= NAME_LIMIT + len(": 90 days, no data")
    assert "\x00" not in svg
    assert "<script" not in svg
    if "script" in name:
        assert any("<script>" in text for text in texts(root))  # shown, as text
    assert len(svg) < 40_000
