"""Say what a component's badges (status, uptime, response time) show; monitors.badges draws them.

The drawing (shields.io's flat geometry and its endpoint JSON) is shared with the directory's
badge, so it lives in the pure :mod:`monitors.badges`; this module picks the words and colours.
"""

from __future__ import annotations

from monitors.badges import Badge, Color, badge_svg, shields_endpoint
from statuspages.render.vocabulary import ComponentStatus

__all__ = [
    "Badge",
    "Color",
    "badge_svg",
    "response_time_badge",
    "shields_endpoint",
    "status_badge",
    "uptime_badge",
]

STATUS_WORDS = {
    ComponentStatus.OPERATIONAL: ("operational", Color.BRIGHTGREEN),
    ComponentStatus.DEGRADED_PERFORMANCE: ("degraded performance", Color.YELLOW),
    ComponentStatus.PARTIAL_OUTAGE: ("partial outage", Color.ORANGE),
    ComponentStatus.MAJOR_OUTAGE: ("major outage", Color.RED),
    ComponentStatus.UNDER_MAINTENANCE: ("under maintenance", Color.BLUE),
}

# Uptime colours, best first: the lowest uptime (in hundredths of a percent) each colour takes.
UPTIME_COLORS = (
    (99_90, Color.BRIGHTGREEN),
    (99_00, Color.GREEN),
    (97_00, Color.YELLOWGREEN),
    (95_00, Color.YELLOW),
    (90_00, Color.ORANGE),
)
UPTIME_PERIODS = ("24h", "7d", "30d")

# Response-time colours, fastest first: the highest milliseconds each colour takes.
RESPONSE_COLORS = (
    (300, Color.BRIGHTGREEN),
    (800, Color.GREEN),
    (1500, Color.YELLOW),
    (3000, Color.ORANGE),
)


def status_badge(status: ComponentStatus, label: str = "status") -> Badge:
    """Return the badge of a component's current status."""
    words, color = STATUS_WORDS[status]
    return Badge(label, words, color)


def uptime_badge(period: str, uptime: str | None) -> Badge:
    """Return the badge of a component's uptime over ``period`` ("24h", "7d" or "30d"), as :func:`.bars.uptime_percent` gave it."""
    if period not in UPTIME_PERIODS:
        raise ValueError(f"period must be one of {', '.join(UPTIME_PERIODS)}, not {period!r}")
    label = f"uptime {period}"
    if uptime is None:
        return Badge(label, "no data", Color.LIGHTGREY)
    whole, _, fraction = uptime.partition(".")
    hundredths = int(whole) * 100 + int((fraction + "00")[:2])
    color = next((color for floor, color in UPTIME_COLORS if hundredths >= floor), Color.RED)
    return Badge(label, f"{uptime}%", color)


def response_time_badge(milliseconds: float | None, *, failing: bool = False) -> Badge:
    """Return the badge of a component's response time over its answered runs.

    None: no run was answered; ``failing`` says the runs failed (an outage, shown as one),
    else there were none (no data).
    """
    if milliseconds is None or milliseconds != milliseconds or milliseconds < 0:
        if failing:
            return Badge("response time", "no answer", Color.RED)
        return Badge("response time", "no data", Color.LIGHTGREY)
    rounded = round(milliseconds)
    color = next((color for ceiling, color in RESPONSE_COLORS if rounded <= ceiling), Color.RED)
    return Badge("response time", f"{rounded} ms", color)
