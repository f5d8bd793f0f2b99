"""The badges: what each says and in which colour, shields.io's flat geometry, the endpoint JSON, and inert text."""

from __future__ import annotations

import pytest

from monitors.badge_widths import preferred_width, text_width
from monitors.badges import HEX, TEXT_LIMIT, Badge, Color, badge_svg, shields_endpoint
from statuspages.render.badges import response_time_badge, status_badge, uptime_badge
from statuspages.render.vocabulary import ComponentStatus
from tests.statuspages.svg_support import HOSTILE_NAMES, SVG, assert_inert, parse


@pytest.mark.parametrize(
    ("status", "message", "color"),
    [
        (ComponentStatus.OPERATIONAL, "operational", Color.BRIGHTGREEN),
        (ComponentStatus.DEGRADED_PERFORMANCE, "degraded performance", Color.YELLOW),
        (ComponentStatus.PARTIAL_OUTAGE, "partial outage", Color.ORANGE),
        (ComponentStatus.MAJOR_OUTAGE, "major outage", Color.RED),
        (ComponentStatus.UNDER_MAINTENANCE, "under maintenance", Color.BLUE),
    ],
)
def test_the_status_badge_says_the_component_status(status, message, color):
    assert status_badge(status) == Badge("status", message, color)


@pytest.mark.parametrize(
    ("period", "uptime", "message", "color"),
    [
        ("24h", "100.00", "100.00%", Color.BRIGHTGREEN),
        ("7d", "99.90", "99.90%", Color.BRIGHTGREEN),
        ("7d", "99.89", "99.89%", Color.GREEN),
        ("30d", "99.00", "99.00%", Color.GREEN),
        ("30d", "98.99", "98.99%", Color.YELLOWGREEN),
        ("30d", "95.00", "95.00%", Color.YELLOW),
        ("30d", "90.00", "90.00%", Color.ORANGE),
        ("30d", "89.99", "89.99%", Color.RED),
        ("30d", "0.00", "0.00%", Color.RED),
        ("24h", None, "no data", Color.LIGHTGREY),
    ],
)
def test_the_uptime_badge_colours_by_the_floored_figure(period, uptime, message, color):
    assert uptime_badge(period, uptime) == Badge(f"uptime {period}", message, color)


def test_the_uptime_badge_knows_three_periods():
    with pytest.raises(ValueError, match="24h, 7d, 30d"):
        uptime_badge("1y", "99.99")


@pytest.mark.parametrize(
    ("ms", "message", "color"),
    [
        (187.4, "187 ms", Color.BRIGHTGREEN),
        (300, "300 ms", Color.BRIGHTGREEN),
        (301, "301 ms", Color.GREEN),
        (1_500, "1500 ms", Color.YELLOW),
        (2_999.6, "3000 ms", Color.ORANGE),
        (12_000, "12000 ms", Color.RED),
        (None, "no data", Color.LIGHTGREY),
        (float("nan"), "no data", Color.LIGHTGREY),
        (-1, "no data", Color.LIGHTGREY),
    ],
)
def test_the_response_time_badge_colours_by_milliseconds(ms, message, color):
    assert response_time_badge(ms) == Badge("response time", message, color)


def test_the_endpoint_json_is_shields_schema_version_1():
    assert shields_endpoint(uptime_badge("30d", "99.95")) == {
        "schemaVersion": 1,
        "label": "uptime 30d",
        "message": "99.95%",
        "color": "brightgreen",
    }


# Sizes badge-maker 6.0.0 gave the same badges: total width, label and message rect widths,
# and the texts' centres (at ten times the size).
@pytest.mark.parametrize(
    ("label", "message", "width", "left", "right", "label_x", "message_x"),
    [
        ("status", "operational", 116, 43, 73, 225, 785),
        ("status", "major outage", 128, 43, 85, 225, 845),
        ("uptime 24h", "100.00%", 134, 73, 61, 375, 1025),
        ("uptime 7d", "no data", 118, 67, 51, 345, 915),
        ("response time", "187 ms", 140, 89, 51, 455, 1135),
        ("status", "under maintenance", 160, 43, 117, 225, 1005),
        ("WWW@%", "mmm", 108, 65, 43, 335, 855),
    ],
)
def test_the_badge_has_shields_flat_geometry(label, message, width, left, right, label_x, message_x):
    root = parse(badge_svg(Badge(label, message, Color.BLUE)))

    assert root.get("width") == str(width)
    assert root.get("height") == "20"
    label_rect, message_rect, _ = root.find(f"{SVG}g").findall(f"{SVG}rect")
    assert (label_rect.get("width"), message_rect.get("x"), message_rect.get("width")) == (
        str(left),
        str(left),
        str(right),
    )
    shown = [t for t in root.iter(f"{SVG}text") if t.get("aria-hidden") is None]
    assert [(t.text, t.get("x")) for t in shown] == [(label, str(label_x)), (message, str(message_x))]


def test_the_badge_is_accessible_and_coloured():
    root = parse(badge_svg(status_badge(ComponentStatus.MAJOR_OUTAGE)))

    assert root.get("role") == "img"
    assert root.get("aria-label") == "status: major outage"
    assert root.find(f"{SVG}title").text == "status: major outage"
    fills = [rect.get("fill") for rect in root.find(f"{SVG}g").findall(f"{SVG}rect")]
    assert fills == ["#555", HEX[Color.RED], "url(#s)"]


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("", 0.0),
        ("status", 33.69),
        ("a\x00\x1fb", 13.46),  # control characters weigh nothing
        ("名", 10.7),  # unknown: as wide as an m
    ],
)
def test_text_is_measured_in_verdana_11px(text, width):
    assert text_width(text) == pytest.approx(width)


@pytest.mark.parametrize(("text", "width"), [("", 1), ("status", 33), ("ab", 13), ("mm", 21)])
def test_preferred_widths_are_whole_and_odd(text, width):
    assert preferred_width(text) == width


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_label_stays_text(name):
    svg = badge_svg(Badge(name, name, Color.GREEN))
    root = parse(svg)

    assert_inert(root)
    assert "<script" not in svg
    assert len(root.get("aria-label")) <= 2 * TEXT_LIMIT + 2
    endpoint = shields_endpoint(Badge(name, name, Color.GREEN))
    assert len(endpoint["label"]) <= TEXT_LIMIT
    assert "\x00" not in endpoint["label"]


def test_an_empty_message_still_draws_a_message():
    root = parse(badge_svg(Badge("status", "\x00", Color.GREEN)))

    assert root.get("aria-label") == "status: -"
