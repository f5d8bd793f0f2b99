"""Draw a component's response times as an SVG chart: an area under a line, with labelled axes.

The points are ``(time, milliseconds)`` pairs from the rollups. A day of minute rollups is
1,440 points and a browser gains nothing from more than the chart has pixels, so the series is
cut to at most :data:`MAX_POINTS` with largest-triangle-three-buckets, which keeps the spikes
an average would hide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from monitors.svg import clean, escape, number

MAX_POINTS = 500
NAME_LIMIT = 200
WIDTH = 600
HEIGHT = 160
# Room for the axis labels: milliseconds on the left, times under the plot.
LEFT = 48
RIGHT = 8
TOP = 8
BOTTOM = 22

Point = tuple[datetime, float]


def downsample(points: Sequence[Point], limit: int = MAX_POINTS) -> list[Point]:
    """Return at most ``limit`` of ``points`` (sorted by time), keeping the first, the last and the spikes.

    Largest-triangle-three-buckets (Steinarsson, 2013): the middle points fall into
    ``limit - 2`` buckets, and each bucket keeps the point that makes the largest triangle with
    the point kept before it and the average of the next bucket.
    """
    if limit < 3:
        raise ValueError(f"limit must be at least 3, not {limit}")
    if len(points) <= limit:
        return list(points)
    xs = [p[0].timestamp() for p in points]
    ys = [float(p[1]) for p in points]
    kept = [points[0]]
    size = (len(points) - 2) / (limit - 2)
    previous = 0
    for bucket in range(limit - 2):
        start = int(bucket * size) + 1
        end = int((bucket + 1) * size) + 1
        next_start, next_end = end, min(int((bucket + 2) * size) + 1, len(points))
        if next_start >= next_end:
            next_start, next_end = len(points) - 1, len(points)
        average_x = sum(xs[next_start:next_end]) / (next_end - next_start)
        average_y = sum(ys[next_start:next_end]) / (next_end - next_start)
        ax, ay = xs[previous], ys[previous]
        best, best_area = start, -1.0
        for index in range(start, end):
            area = abs((ax - average_x) * (ys[index] - ay) - (ax - xs[index]) * (average_y - ay))
            if area > best_area:
                best, best_area = index, area
        kept.append(points[best])
        previous = best
    kept.append(points[-1])
    return kept


def _nice_ceiling(value: float) -> int:
    """Return a round number at or above ``value`` for the axis top (1, 2 or 5 times a power of ten)."""
    if value <= 1:
        return 1
    magnitude: int = 10 ** (len(str(int(value))) - 1)
    return next(step * magnitude for step in (1, 2, 5, 10) if step * magnitude >= value)


def _time_label(moment: datetime, zone: ZoneInfo, span_seconds: float) -> str:
    local = moment.astimezone(zone)
    return f"{local:%H:%M}" if span_seconds <= 86_400 else f"{local.day} {local:%b}"


def response_time_svg(name: str, points: Sequence[Point], *, time_zone: str) -> str:
    """Return the chart of ``points`` for the component called ``name``, times labelled in ``time_zone``."""
    zone = ZoneInfo(time_zone)
    title = clean(name, NAME_LIMIT)
    # A rollup without a figure (NaN) or a negative one is no point to draw.
    finite = [(moment, float(ms)) for moment, ms in points if math.isfinite(ms) and ms >= 0]
    series = downsample(sorted(finite, key=lambda p: p[0]))
    plot_width = WIDTH - LEFT - RIGHT
    plot_height = HEIGHT - TOP - BOTTOM
    bottom = TOP + plot_height
    if not series:
        label = escape(f"{title}: response time, no data")
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="response-chart" width="{WIDTH}" height="{HEIGHT}"'
            f' viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{label}"><title>{label}</title>'
            f'<text class="no-data" x="{WIDTH // 2}" y="{HEIGHT // 2}" text-anchor="middle">No data</text></svg>'
        )
    values = [ms for _, ms in series]
    top = _nice_ceiling(max(values))
    first, last = series[0][0].astimezone(UTC), series[-1][0].astimezone(UTC)
    span = (last - first).total_seconds()

    def x_of(moment: datetime) -> str:
        offset = (moment.astimezone(UTC) - first).total_seconds()
        return number(LEFT + (plot_width * offset / span if span else plot_width / 2))

    def y_of(ms: float) -> str:
        return number(bottom - plot_height * ms / top)

    line = " ".join(f"{x_of(moment)},{y_of(ms)}" for (moment, _), ms in zip(series, values, strict=True))
    area = f"{x_of(series[0][0])},{number(bottom)} {line} {x_of(series[-1][0])},{number(bottom)}"
    average = sum(values) / len(values)
    label = escape(
        f"{title}: response time from {_time_label(first, zone, span)} to {_time_label(last, zone, span)},"
        f" average {round(average)} ms, highest {round(max(values))} ms"
    )
    half = number(top / 2)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="response-chart" width="{WIDTH}" height="{HEIGHT}"'
        f' viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{label}">',
        f"<title>{label}</title>",
        f'<g class="axis" font-size="10" fill="#666">'
        f'<line x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" stroke="#ccc"/>'
        f'<line x1="{LEFT}" y1="{TOP}" x2="{WIDTH - RIGHT}" y2="{TOP}" stroke="#eee"/>'
        f'<text x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end">{top} ms</text>'
        f'<text x="{LEFT - 4}" y="{number(TOP + plot_height / 2 + 4)}" text-anchor="end">{half} ms</text>'
        f'<text x="{LEFT - 4}" y="{bottom + 4}" text-anchor="end">0 ms</text>'
        f'<text x="{LEFT}" y="{HEIGHT - 6}" text-anchor="start">{escape(_time_label(first, zone, span))}</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 6}" text-anchor="end">{escape(_time_label(last, zone, span))}</text>'
        "</g>",
        f'<polygon class="area" points="{area}" fill="#2d9cdb" fill-opacity=".15" stroke="none"/>',
        f'<polyline class="line" points="{line}" fill="none" stroke="#2d9cdb" stroke-width="1.5"'
        ' stroke-linejoin="round"/>',
        "</svg>",
    ]
    return "".join(parts)
