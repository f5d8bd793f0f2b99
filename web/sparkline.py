"""Draw a healthcheck's last 24 hours as a small SVG: one bar per hour, its median response time.

Pure: plain values in, markup out. An hour with failures is a full-height bar of its own class
(a shape, not a colour only), and the label says in words what the bars show, for screen readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

HOURS = 24
BAR_WIDTH = 3
BAR_GAP = 1
HEIGHT = 20
MIN_BAR = 2


@dataclass(frozen=True, slots=True)
class SparkHour:
    """Hold one hour of a check: its index (0 = 23 hours ago … 23 = this hour), median ms, failures."""

    index: int
    median_ms: float | None
    failures: int


def sparkline_label(hours: Sequence[SparkHour]) -> str:
    """Return what the sparkline shows, in words."""
    medians = sorted(h.median_ms for h in hours if h.median_ms is not None)
    failing = sum(1 for h in hours if h.failures)
    if not medians and not failing:
        return "Last 24 hours: no data yet"
    parts = []
    if medians:
        parts.append(f"median {medians[len(medians) // 2]:.0f} ms, slowest hour {medians[-1]:.0f} ms")
    parts.append(
        "no hour with failures"
        if not failing
        else f"{failing} hour{'s' if failing > 1 else ''} with failures"
    )
    return "Last 24 hours: " + ", ".join(parts)


def sparkline_svg(hours: Sequence[SparkHour]) -> str:
    """Return the SVG of ``hours``: bars scaled to the slowest hour's median; failing hours full height."""
    width = HOURS * (BAR_WIDTH + BAR_GAP) - BAR_GAP
    slowest = max((h.median_ms for h in hours if h.median_ms is not None), default=0.0)
    label = escape(sparkline_label(hours))
    bars = []
    for hour in sorted(hours, key=lambda h: h.index):
        if not 0 <= hour.index < HOURS:
            continue
        x = hour.index * (BAR_WIDTH + BAR_GAP)
        if hour.failures:
            height, kind = HEIGHT, "fail"
        elif hour.median_ms is not None and slowest > 0:
            height, kind = max(MIN_BAR, round(HEIGHT * hour.median_ms / slowest)), "ok"
        else:
            height, kind = MIN_BAR, "ok"
        bars.append(
            f'<rect class="{kind}" x="{x}" y="{HEIGHT - height}" width="{BAR_WIDTH}" height="{height}"/>'
        )
    return (
        f'<svg class="spark" width="{width}" height="{HEIGHT}" viewBox="0 0 {width} {HEIGHT}" role="img"'
        f' aria-label="{label}"><title>{label}</title>'
        f'<line class="base" x1="0" y1="{HEIGHT - 0.5}" x2="{width}" y2="{HEIGHT - 0.5}"/>{"".join(bars)}</svg>'
    )
