"""Draw a component's badges (status, uptime, response time) in shields.io's flat style, and their endpoint JSON.

The SVG has shields.io's flat geometry: each half is its text's width (Verdana 11 px, from
:mod:`.widths`) plus 5 px a side, the text drawn at ten times the size and scaled down (as
badge-maker does, for crisp rendering) with a shadow under it. The same content is also
offered as shields.io's endpoint JSON (``schemaVersion: 1``), for users who would rather have
shields.io draw it in their own style.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from statuspages.render.svg import clean, escape, number
from statuspages.render.vocabulary import ComponentStatus
from statuspages.render.widths import preferred_width

TEXT_LIMIT = 64
HEIGHT = 20
PADDING = 5
LABEL_FILL = "#555"
FONT_FAMILY = "Verdana,Geneva,DejaVu Sans,sans-serif"
# badge-maker's rule: text is dark on a background brighter than this, light otherwise.
BRIGHTNESS_THRESHOLD = 0.69


class Color(StrEnum):
    """Name a badge colour as shields.io does (the endpoint JSON carries the name)."""

    BRIGHTGREEN = "brightgreen"
    GREEN = "green"
    YELLOWGREEN = "yellowgreen"
    YELLOW = "yellow"
    ORANGE = "orange"
    RED = "red"
    BLUE = "blue"
    LIGHTGREY = "lightgrey"


# shields.io's named colours (badge-maker 6).
HEX = {
    Color.BRIGHTGREEN: "#4b0",
    Color.GREEN: "#67ac09",
    Color.YELLOWGREEN: "#95991a",
    Color.YELLOW: "#d8b800",
    Color.ORANGE: "#ea7233",
    Color.RED: "#dd4343",
    Color.BLUE: "#007ec6",
    Color.LIGHTGREY: "#939393",
}

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


@dataclass(frozen=True)
class Badge:
    """Hold what a badge says: its label, its message and its colour."""

    label: str
    message: str
    color: Color


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


def response_time_badge(milliseconds: float | None) -> Badge:
    """Return the badge of a component's response time (None: no data)."""
    if milliseconds is None or milliseconds != milliseconds or milliseconds < 0:
        return Badge("response time", "no data", Color.LIGHTGREY)
    rounded = round(milliseconds)
    color = next((color for ceiling, color in RESPONSE_COLORS if rounded <= ceiling), Color.RED)
    return Badge("response time", f"{rounded} ms", color)


def shields_endpoint(badge: Badge) -> dict[str, Any]:
    """Return shields.io's endpoint JSON for ``badge``."""
    return {
        "schemaVersion": 1,
        "label": clean(badge.label, TEXT_LIMIT),
        "message": clean(badge.message, TEXT_LIMIT),
        "color": badge.color.value,
    }


def _brightness(hex_color: str) -> float:
    digits = hex_color.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    red, green, blue = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    return round((red * 299 + green * 587 + blue * 114) / 255_000, 2)


def _text(content: str, *, margin: int, width: int, background: str) -> str:
    # The text's centre at ten times the size, as badge-maker draws it under scale(.1).
    x = number(10 * (margin + 0.5 * width + PADDING))
    fill, shadow = (
        ("#fff", "#010101") if _brightness(background) <= BRIGHTNESS_THRESHOLD else ("#333", "#ccc")
    )
    text = escape(content)
    return (
        f'<text aria-hidden="true" x="{x}" y="150" fill="{shadow}" fill-opacity=".3" transform="scale(.1)"'
        f' textLength="{10 * width}">{text}</text>'
        f'<text x="{x}" y="140" transform="scale(.1)" fill="{fill}" textLength="{10 * width}">{text}</text>'
    )


def badge_svg(badge: Badge) -> str:
    """Return ``badge`` as a shields.io flat SVG."""
    label = clean(badge.label, TEXT_LIMIT)
    message = clean(badge.message, TEXT_LIMIT) or "-"
    color = HEX[badge.color]
    label_width = preferred_width(label)
    message_width = preferred_width(message)
    left = label_width + 2 * PADDING
    right = message_width + 2 * PADDING
    width = left + right
    accessible = escape(f"{label}: {message}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" role="img"'
        f' aria-label="{accessible}"><title>{accessible}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="{HEIGHT}" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="{HEIGHT}" fill="{LABEL_FILL}"/>'
        f'<rect x="{left}" width="{right}" height="{HEIGHT}" fill="{color}"/>'
        f'<rect width="{width}" height="{HEIGHT}" fill="url(#s)"/></g>'
        f'<g fill="#fff" text-anchor="middle" font-family="{FONT_FAMILY}" text-rendering="geometricPrecision"'
        ' font-size="110">'
        f"{_text(label, margin=1, width=label_width, background=LABEL_FILL)}"
        f"{_text(message, margin=left - 1, width=message_width, background=color)}"
        "</g></svg>"
    )
