"""Look up a healthcheck form's value and errors by a check type's field name (web/healthchecks/_type_field.html)."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def field_value(values: dict[str, str], name: str) -> str:
    """Return the form's text for the field ``name`` ("" when it has none)."""
    return values.get(name, "")


@register.filter
def field_errors(errors: dict[str, list[str]], name: str) -> list[Any]:
    """Return the form's errors for the field ``name`` (none: an empty list)."""
    return errors.get(name, [])
