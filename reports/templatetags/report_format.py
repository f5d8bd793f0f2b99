"""Format a report's figures for people: durations and milliseconds, the same in HTML and PDF."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

register = template.Library()


@register.filter
def duration(seconds: int | None) -> str:
    """Return whole seconds as "2 h 05 min", "4 min 10 s" or "12 s"; an em dash for none."""
    if seconds is None:
        return "—"
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


@register.filter
def ms(value: float | None) -> str:
    """Return a response time in whole milliseconds (the unit is in the column's title), or an em dash."""
    return "—" if value is None else f"{value:.0f}"


@register.filter
def percent(value: str | None) -> str:
    """Return a floored percentage as text, or "no data"."""
    return "no data" if value is None else f"{value} %"


@register.filter
def mtta(figures: Mapping[str, Any]) -> str:
    """Return a period's MTTA as a duration, or "no acknowledged incidents" (never 0 s when none)."""
    seconds = figures.get("mtta_seconds")
    return "no acknowledged incidents" if seconds is None else duration(seconds)
