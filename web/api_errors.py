"""Flatten the API's error answers (serializer errors, service refusals) into messages per form field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rest_framework.serializers import Serializer

from monitors.errors import FieldsInvalid, ServiceError

T = TypeVar("T")


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


def refusal_errors(refused: ServiceError) -> dict[str, list[str]]:
    """Return a service's refusal as {field: [message]}; one naming several fields (``FieldsInvalid``) names each."""
    if isinstance(refused, FieldsInvalid):
        return {field: [message] for field, message in refused.errors.items()}
    return {refused.field: [refused.message]}


def saved(serializer: Serializer[Any], save: Callable[[], T]) -> tuple[T | None, dict[str, list[str]]]:
    """Validate ``serializer``, then call ``save`` (which reads it); return what ``save`` returned, or the field errors.

    Every form of the web app goes through the API's serializer and the same service, so its
    messages are the API's; the caller re-renders its page with the errors, or goes on.
    """
    if not serializer.is_valid():
        return None, field_errors(serializer.errors)
    try:
        return save(), {}
    except ServiceError as refused:
        return None, refusal_errors(refused)
