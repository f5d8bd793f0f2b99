"""Draw a badge in shields.io's flat style, and its endpoint JSON: the geometry status pages and the directory share.

Pure (an import contract forbids Django): a :class:`Badge` (label, message, colour) in, SVG text
or a dict out. The SVG has shields.io's flat geometry: each half is its text's width (Verdana
11 px, from :mod:`monitors.badge_widths`) plus 5 px a side, the text drawn at ten times the size
and scaled down (as badge-maker does, for crisp rendering) with a shadow under it. The same
content is also offered as shields.io's endpoint JSON (``schemaVersion: 1``), for users who
would rather have shields.io draw it in their own style. What a badge says is its app's:
``statuspages.render.badges`` (status, uptime, response time), ``directory`` (MCP checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from monitors.badge_widths import preferred_width
from monitors.svg import clean, escape, number

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


@dataclass(frozen=True)
class Badge:
    """Hold what a badge says: its label, its message and its colour."""

    label: str
    message: str
    color: Color


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
