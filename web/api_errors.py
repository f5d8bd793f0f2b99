"""Flatten the API's error answers (serializer errors, service refusals) into messages per form field."""

from __future__ import annotations

from typing import Any


def messages_of(found: Any) -> list[str]:
    """Return every message of one field's errors as a flat list (a list field answers them by index)."""
    if isinstance(found, dict):
        return [m for inner in found.values() for m in messages_of(inner)]
    if isinstance(found, list | tuple):
        return [m for inner in found for m in messages_of(inner)]
    return [str(found)]


def field_errors(errors: Any) -> dict[str, list[str]]:
    """Return a serializer's ``errors`` as {field: [message, …]}; errors not of a field go under non_field_errors."""
    if not isinstance(errors, dict):
        return {"non_field_errors": messages_of(errors)}
    return {str(field): messages_of(found) for field, found in errors.items()}
