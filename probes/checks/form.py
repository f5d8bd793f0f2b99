"""Describe a check type's form tab field by field, so the web app draws every type without naming one.

A type lists its :class:`FormField`\\ s in its :class:`~probes.checks.registry.CheckKind`; the web
app renders each by its widget and turns what was posted back into the API's config value
(:func:`config_value`), which the type's own parser then validates: the form holds no rule
of its own, only the mapping of a text box to a JSON value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from probes.jsonrpc import JsonTooDeep, read_json


class Widget(StrEnum):
    """Name how one config key is typed in a form, and so which JSON value it becomes."""

    URL = "url"  # a string, typed in an <input type=url>
    TEXT = "text"  # a string; empty: the key is left out (the parser's default)
    TEXTAREA = "textarea"  # a multi-line string
    INTEGER = "integer"  # a whole number; empty: left out
    NUMBER = "number"  # a number (seconds); empty: left out
    CHOICE = "choice"  # one of ``choices``
    CHECKBOX = "checkbox"  # true when ticked
    LINES = "lines"  # a list of strings, one per line or comma-separated; empty: left out
    CODES = "codes"  # a list like LINES, where an item of digits becomes a number (HTTP statuses)
    JSON = "json"  # any JSON value, typed as JSON text (assertions, lists of objects)
    HEADERS = "headers"  # the secret header rows the web app draws itself


@dataclass(frozen=True, slots=True)
class FormField:
    """Say how the form shows one config key: its label, widget, help and placeholder.

    ``name`` is the HTML field's name; types that share a key share its name (``uri``), so a
    value typed before switching tab is kept.
    """

    key: str
    name: str
    label: str
    widget: Widget
    help: str = ""
    placeholder: str = ""
    choices: tuple[str, ...] = ()
    required: bool = False

    def shown(self, value: object) -> str:
        """Return the text the form shows for the config's stored ``value``."""
        if value is None:
            return ""
        if self.widget is Widget.CHECKBOX:
            return "on" if value else ""
        if self.widget in (Widget.LINES, Widget.CODES) and isinstance(value, list):
            return "\n".join(str(item) for item in value)
        if self.widget is Widget.JSON:
            return "" if value in ([], {}) else json.dumps(value, indent=2, ensure_ascii=False)
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)


# The HTTPS types' (HTTP, MCP) certificate warning: one field both tabs show, sharing its name.
CERTIFICATE_WARN_DAYS_FIELD = FormField(
    "certificateWarnDays",
    "certificate_warn_days",
    "Warn days before the certificate expires",
    Widget.INTEGER,
    help="HTTPS only: degraded when the certificate expires within this many days; 0: never.",
    placeholder="14",
)


class Absent:
    """Mark a form value that leaves its key out of the config, so the type's default applies."""


ABSENT = Absent()


def config_value(field: FormField, text: str) -> object:
    """Return the config value ``text`` (as posted) stands for, or :data:`ABSENT`.

    Numbers that don't parse go as typed, and JSON that doesn't parse (or nests past what the
    engine reads) goes as the text itself: the type's parser then names the field, so the
    message is the API's.
    """
    stripped = text.strip()
    widget = field.widget
    if widget is Widget.CHECKBOX:
        return bool(stripped)
    if widget in (Widget.URL, Widget.CHOICE):
        return stripped if stripped or field.required else ABSENT
    if widget is Widget.TEXT:
        return stripped if stripped else ABSENT
    if widget is Widget.TEXTAREA:
        return text if stripped else ABSENT
    if widget is Widget.INTEGER:
        return _number(stripped, int) if stripped else ABSENT
    if widget is Widget.NUMBER:
        return _number(stripped, float) if stripped else ABSENT
    if widget in (Widget.LINES, Widget.CODES):
        items = [item.strip() for line in text.splitlines() for item in line.split(",") if item.strip()]
        if not items:
            return ABSENT
        if widget is Widget.CODES:
            return [int(item) if item.isascii() and item.isdigit() else item for item in items]
        return items
    if widget is Widget.JSON:
        if not stripped:
            return ABSENT
        try:
            value: Any = read_json(stripped)
        except (ValueError, JsonTooDeep):
            # As typed: the type's parser then names the field ("Must be a list …").
            return stripped
        return value
    return ABSENT  # HEADERS: the web app reads its rows itself


def _number(text: str, kind: type[int] | type[float]) -> object:
    try:
        return kind(text)
    except ValueError:
        return text
