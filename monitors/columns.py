"""Name a model field's column for raw SQL (the selectors' and the bulk writes')."""

from __future__ import annotations

from django.db.models import Field, Model


def column_of(model: type[Model], name: str) -> str:
    """Return the column of the model's concrete field ``name``."""
    field = model._meta.get_field(name)
    # get_field also finds reverse relations, which have no column; a concrete field has one.
    assert isinstance(field, Field), name
    assert field.column is not None, name
    return field.column
