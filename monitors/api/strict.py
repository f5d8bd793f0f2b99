"""Refuse request bodies that name fields a serializer doesn't have.

DRF drops unknown keys silently, so a typo (``interval_seconds`` for ``interval``) would save
the default and answer 201: the client believes a setting it never made. Fields the serializer
only shows (``id``, ``status``) are accepted and ignored, so a client may send back what it read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rest_framework import serializers

# A body can't make the error list longer than this.
MAX_NAMED = 20


class RejectUnknownFields(serializers.Serializer[Any]):
    """Answer a field the serializer doesn't know with a 400 naming it and the fields it does know."""

    # Names a client may send back although this serializer doesn't declare them (what it reads
    # from a sibling serializer): accepted and ignored.
    shown_fields: ClassVar[frozenset[str]] = frozenset()

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            known = set(self.fields) | self.shown_fields
            unknown = sorted(str(name) for name in data if name not in known)
            if unknown:
                writable = ", ".join(
                    sorted(name for name, field in self.fields.items() if not field.read_only)
                )
                raise serializers.ValidationError(
                    {
                        name[:100]: [f"unknown field; the fields are: {writable}"]
                        for name in unknown[:MAX_NAMED]
                    }
                )
        return super().to_internal_value(data)
