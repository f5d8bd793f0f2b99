"""The response-time chart: a bounded line over an area, labelled axes, an accessible summary, inert names."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from statuspages.render.chart import HEIGHT, MAX_POINTS, WIDTH, downsample, response_time_svg
from tests.statuspages.svg_support import HOSTILE_NAMES, SVG, assert_inert, parse

START = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def minutes(values: list[float]) -> list[tuple[datetime, float]]:
    return [(START + timedelta(minutes=n), value) for n, value in enumerate(values)]


def polyline_points(svg: str) -> list[tuple[float, float]]:
    line = parse(svg).find(f"{SVG}polyline")
    return [tuple(map(float, pair.split(","))) for pair in line.get("points").split()]


def test_a_day_of_minutes_is_drawn_with_at_most_500_points():
    day = minutes([100 + (n % 60) for n in range(1_440)])

    points = polyline_points(response_time_svg("API", day, time_zone="UTC"))

    assert len(points) == MAX_POINTS
    assert all(0 <= x <= WIDTH and 0 <= y <= HEIGHT for x, y in points)
    assert [x for x, _ in points] == sorted(x for x, _ in points)


def test_downsampling_keeps_the_ends_and_a_lone_spike():
    values = [100.0] * 1_440
    values[777] = 9_000.0
    series = minutes(values)

    kept = downsample(series, 50)

    assert len(kept) == 50
    assert kept[0] == series[0]
    assert kept[-1] == series[-1]
    assert series[777] in kept


@pytest.mark.parametrize("count", [0, 1, 2, 499, 500])
def test_short_series_are_kept_whole(count):
    series = minutes([float(n) for n in range(count)])

    assert downsample(series) == series


def test_downsampling_needs_room_for_three_points():
    with pytest.raises(ValueError, match="at least 3"):
        downsample(minutes([1.0] * 10), 2)


def test_the_axes_are_labelled_in_milliseconds_and_in_the_page_zone():
    svg = response_time_svg("API", minutes([120.0, 480.0, 260.0]), time_zone="Asia/Kolkata")

    labels = [text.text for text in parse(svg).iter(f"{SVG}text")]

    # The top of the axis is a round number above the highest point; times are local (UTC+5:30).
    assert labels == ["500 ms", "250 ms", "0 ms", "17:30", "17:32"]


def test_the_highest_point_reaches_no_higher_than_the_plot_top():
    svg = response_time_svg("API", minutes([100.0, 1_000.0]), time_zone="UTC")

    points = polyline_points(svg)

    assert min(y for _, y in points) == pytest.approx(8)  # TOP: 1,000 ms is the axis top
    assert parse(svg).find(f"{SVG}polygon") is not None


def test_the_chart_is_summarised_for_screen_readers():
    svg = response_time_svg("API", minutes([100.0, 300.0]), time_zone="UTC")
    root = parse(svg)

    assert root.get("role") == "img"
    assert root.get("aria-label") == "API: response time from 12:00 to 12:01, average 200 ms, highest 300 ms"
    assert root.find(f"{SVG}title").text == root.get("aria-label")


def test_a_span_of_days_is_labelled_by_date():
    series = [(START, 100.0), (START + timedelta(days=7), 200.0)]

    labels = [
        text.text for text in parse(response_time_svg("API", series, time_zone="UTC")).iter(f"{SVG}text")
    ]

    assert labels[-2:] == ["28 Nov", "5 Dec"]


@pytest.mark.parametrize(
    "series",
    [
        [],
        [(START, math.nan), (START + timedelta(minutes=1), -5.0)],
    ],
)
def test_no_drawable_point_says_no_data(series):
    root = parse(response_time_svg("API", series, time_zone="UTC"))

    assert root.get("aria-label") == "API: response time, no data"
    assert root.find(f"{SVG}polyline") is None


def test_a_single_point_is_drawn_in_the_middle():
    points = polyline_points(response_time_svg("API", [(START, 50.0)], time_zone="UTC"))

    assert len(points) == 1


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_stays_text(name):
    svg = response_time_svg(name, minutes([100.0, 200.0]), time_zone="UTC")
    root = parse(svg)

    assert_inert(root)
    assert "<script" not in svg
    assert len(root.get("aria-label")) < 400
