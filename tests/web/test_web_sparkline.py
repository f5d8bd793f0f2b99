"""The dashboard's 24-hour sparkline: bars by median response time, failing hours full height, words for each."""

import re

import pytest

from web.sparkline import HEIGHT, MIN_BAR, SparkHour, sparkline_label, sparkline_svg


def bars(svg: str) -> list[tuple[str, int, int]]:
    """Return each bar's class, x and height."""
    return [
        (kind, int(x), int(height))
        for kind, x, height in re.findall(
            r'<rect class="(\w+)" x="(\d+)" y="\d+" width="\d+" height="(\d+)"', svg
        )
    ]


def test_bars_scale_to_the_slowest_hour_and_failing_hours_are_full_height():
    svg = sparkline_svg(
        [SparkHour(0, 100, 0), SparkHour(1, 50, 0), SparkHour(2, 1, 0), SparkHour(23, None, 3)]
    )
    assert bars(svg) == [("ok", 0, HEIGHT), ("ok", 4, HEIGHT // 2), ("ok", 8, MIN_BAR), ("fail", 92, HEIGHT)]


@pytest.mark.parametrize(
    ("hours", "label"),
    [
        ([], "Last 24 hours: no data yet"),
        ([SparkHour(0, 120, 0)], "Last 24 hours: median 120 ms, slowest hour 120 ms, no hour with failures"),
        ([SparkHour(0, None, 2), SparkHour(1, None, 1)], "Last 24 hours: 2 hours with failures"),
    ],
)
def test_the_label_says_what_the_bars_show(hours, label):
    assert sparkline_label(hours) == label
    assert f'aria-label="{label}"' in sparkline_svg(hours)


def test_an_hour_outside_the_day_is_not_drawn():
    assert bars(sparkline_svg([SparkHour(-1, 5, 0), SparkHour(24, 5, 0)])) == []
