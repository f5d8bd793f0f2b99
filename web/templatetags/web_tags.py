"""Filters the web app's templates share: status words and marks, percentages, milliseconds, durations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from itertools import pairwise

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from web.results import ACCESS_WORDS, STATUS_WORDS, response_time
from web.sparkline import SparkHour, sparkline_svg

register = template.Library()

# A mark beside each status word: the status is never told by colour alone.
STATUS_MARKS = {"up": "✓", "down": "✕", "degraded": "!", "pending": "…", "paused": "‖"}


@register.filter
def status_badge(status: str) -> SafeString:
    """Return a status as a badge: a mark and a word, coloured by a class (never by colour alone)."""
    return format_html(
        '<span class="status status-{}"><span aria-hidden="true">{}</span> {}</span>',
        status,
        STATUS_MARKS.get(status, "?"),
        STATUS_WORDS.get(status, status),
    )


# An incident's state as a mark, a word and a colour of the healthcheck statuses it matches.
INCIDENT_STATES = {
    "open": ("✕", "Open", "down"),
    "acknowledged": ("!", "Acknowledged", "degraded"),
    "resolved": ("✓", "Resolved", "up"),
}


@register.filter
def incident_badge(state: str) -> SafeString:
    """Return an incident's state (open, acknowledged, resolved) as a badge: a mark and a word, then a colour."""
    mark, words, colour = INCIDENT_STATES.get(state, ("?", state, "pending"))
    return format_html(
        '<span class="status status-{}"><span aria-hidden="true">{}</span> {}</span>', colour, mark, words
    )


# The units a duration is told in, largest first: its largest unit and the next one are shown.
DURATION_UNITS = (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1))


@register.filter
def duration(value: timedelta) -> str:
    """Return a length of time in its largest unit and the next ("3 d 4 h", "2 h", "1 min 5 s", "0 s")."""
    seconds = max(0, int(value.total_seconds()))
    for (unit, size), (smaller, smaller_size) in pairwise(DURATION_UNITS):
        if seconds >= size:
            rest = seconds % size // smaller_size
            return f"{seconds // size} {unit}" + (f" {rest} {smaller}" if rest else "")
    return f"{seconds} s"


@register.filter
def percent(value: float | None) -> str:
    """Return a share 0–1 as a percentage floored to two decimals (99.999 is not 100); a dash without data."""
    if value is None:
        return "—"
    floored = int(value * 10_000) / 100
    return f"{floored:.2f}%"


@register.filter
def uptime(value: str | None) -> str:
    """Return monitors.uptime's floored percentage text with its sign; a dash without measured time."""
    return "—" if value is None else f"{value}%"


@register.filter
def sparkline(hours: Sequence[SparkHour]) -> SafeString:
    return mark_safe(sparkline_svg(hours))  # noqa: S308  # the renderer escapes the one text it writes


@register.filter
def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


@register.filter
def response(value: float | None, kind: str) -> str:
    """Return a region's last response time; a dash when that run never connected (blocked, DNS, refused)."""
    return ms(response_time(value, kind))


@register.filter
def access_words(value: str) -> str:
    return ACCESS_WORDS.get(value, value) or "—"
