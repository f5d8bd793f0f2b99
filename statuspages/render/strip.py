"""Draw a component's 90-day uptime strip as an SVG: one bar per day, each with its own tooltip.

Server-side and script-free: the colour is a class (``bar-up``, ``bar-minor``, …) for the
page's stylesheet and a ``fill`` for an SVG shown on its own, and each day's ``<title>``
is the tooltip a browser shows on hover and a screen reader reads (date, uptime, downtime,
maintenance, incidents).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from monitors.svg import clean, escape, number
from statuspages.render.bars import BarLevel, DayBar, period_uptime

NAME_LIMIT = 200
INCIDENT_TITLE_LIMIT = 120
BAR_WIDTH = 3
BAR_GAP = 2
BAR_HEIGHT = 34

FILLS = {
    BarLevel.UP: "#3ba55c",
    BarLevel.MINOR: "#f2c94c",
    BarLevel.MAJOR: "#f2994a",
    BarLevel.CRITICAL: "#eb5757",
    BarLevel.MAINTENANCE: "#2d9cdb",
    BarLevel.NO_DATA: "#c4c4c4",
}


def _minutes(count: int) -> str:
    return f"{count} minute" if count == 1 else f"{count} minutes"


def day_tooltip(bar: DayBar) -> str:
    """Return the lines of a day's tooltip, unescaped: date, uptime, downtime, maintenance, incidents."""
    lines = [f"{bar.day.day} {bar.day:%b %Y}"]
    uptime = bar.uptime
    lines.append("No data" if uptime is None else f"Uptime {uptime} %")
    if bar.downtime_seconds:
        lines.append(f"Down {_minutes(bar.downtime_minutes)}")
    elif uptime is not None:
        lines.append("No downtime")
    if bar.maintenance_seconds:
        lines.append(f"Maintenance {_minutes(bar.maintenance_minutes)}")
    lines.extend(f"Incident: {clean(title, INCIDENT_TITLE_LIMIT)}" for title in bar.incidents)
    if bar.more_incidents:
        lines.append(f"and {bar.more_incidents} more incidents")
    return "\n".join(lines)


def strip_label(name: str, bars: Sequence[DayBar]) -> str:
    """Return the strip's accessible name: the component and its uptime over the bars' days."""
    uptime = period_uptime(bars)
    figure = "no data" if uptime is None else f"{uptime} % uptime"
    return f"{clean(name, NAME_LIMIT)}: {len(bars)} days, {figure}"


def uptime_strip_svg(name: str, bars: Sequence[DayBar]) -> str:
    """Return the SVG of ``bars`` (oldest first) for the component called ``name``."""
    label = escape(strip_label(name, bars))
    width = len(bars) * (BAR_WIDTH + BAR_GAP) - BAR_GAP if bars else 0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="uptime-strip" width="{width}" height="{BAR_HEIGHT}"'
        f' viewBox="0 0 {width} {BAR_HEIGHT}" role="img" aria-label="{label}">',
        f"<title>{label}</title>",
    ]
    parts.extend(_bar_rect(index, bar) for index, bar in enumerate(bars))
    parts.append("</svg>")
    return "".join(parts)


# A page's components mostly share their days' figures (a whole day up is the same bar for
# every component), and a page is drawn again every HTML_SECONDS: the same bar at the same place
# is drawn once. Bounded: a few pages' worth of distinct bars.
@functools.lru_cache(maxsize=8192)
def _bar_rect(index: int, bar: DayBar) -> str:
    level = bar.level
    x = number(index * (BAR_WIDTH + BAR_GAP))
    return (
        f'<rect class="bar bar-{level.value}" x="{x}" y="0" width="{BAR_WIDTH}" height="{BAR_HEIGHT}"'
        f' rx="1" fill="{FILLS[level]}" data-date="{bar.day.isoformat()}">'
        f"<title>{escape(day_tooltip(bar))}</title></rect>"
    )
