"""Insert and update many rows of one model in one statement: the recorder's bulk writes.

On PostgreSQL the rows travel as one jsonb parameter expanded by ``jsonb_populate_recordset``
(Django's bulk_create and bulk_update prepare every value of every row in Python, which was half
of the recorder's CPU time: tests/bench/pipeline.py record); elsewhere the ORM's bulk methods
write the same rows. Generic over the model: nothing here knows a check or a result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import connection, models

from monitors.columns import column_of


def insert_rows(
    model: type[models.Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    unique_fields: Sequence[str] = (),
    update_fields: Sequence[str] = (),
) -> None:
    """Insert ``rows`` (every non-primary-key field by attname), skipping rows that conflict, or
    updating ``update_fields`` where given.

    Without ``update_fields`` this is ``bulk_create(ignore_conflicts=True)``, with them an upsert
    on ``unique_fields``. On PostgreSQL the rows travel as one jsonb parameter expanded by
    jsonb_populate_recordset: Django's bulk_create prepares every value of every row in Python,
    which was half of the recorder's CPU time (tests/bench/pipeline.py record). Same rows either way.
    """
    if not rows:
        return
    if connection.vendor == "postgresql":
        payload = _jsonb_rows(model, rows)
        if payload is not None:
            _insert_jsonb(model, payload, unique_fields=unique_fields, update_fields=update_fields)
            return
    objs = [model(**row) for row in rows]
    if update_fields:
        model._default_manager.bulk_create(
            objs,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=list(unique_fields),
            update_fields=list(update_fields),
        )
    else:
        model._default_manager.bulk_create(objs, batch_size=1000, ignore_conflicts=True)


def update_rows(model: type[models.Model], rows: Sequence[Mapping[str, Any]]) -> None:
    """Set the given fields of each row, found by its ``id``; every row gives the same fields (attnames).

    On PostgreSQL one ``UPDATE … FROM jsonb_populate_recordset``: the values differ per row (each
    check's own verdict slot), and one UPDATE per row would be 250 round trips a batch. Elsewhere
    bulk_update, whose CASE WHEN per row and field is fine for the embedded default's sizes.
    """
    if not rows:
        return
    fields = [name for name in rows[0] if name != "id"]
    if connection.vendor == "postgresql":
        payload = _jsonb_rows_of(model, rows, fields)
        if payload is not None:
            quote = connection.ops.quote_name
            table = quote(model._meta.db_table)
            columns = [quote(column_of(model, name)) for name in fields]
            assignments = ", ".join(f"{column} = v.{column}" for column in columns)
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {table} AS t SET {assignments} "  # noqa: S608 (names from the model)
                    f"FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb) AS v WHERE t.id = v.id",
                    [payload],
                )
            return
    model._default_manager.bulk_update([model(**row) for row in rows], fields, batch_size=500)


def _jsonb_rows_of(
    model: type[models.Model], rows: Sequence[Mapping[str, Any]], fields: Sequence[str]
) -> str | None:
    """Return the rows' ``id`` and ``fields`` as one JSON array keyed by column, or None if JSON can't carry them."""
    columns = {name: column_of(model, name) for name in ("id", *fields)}
    try:
        return json.dumps(
            [{column: row[name] for name, column in columns.items()} for row in rows],
            default=_json_default,
            allow_nan=False,
            separators=(",", ":"),
        )
    except ValueError:
        return None


def _jsonb_rows(model: type[models.Model], rows: Sequence[Mapping[str, Any]]) -> str | None:
    """Return the rows as one JSON array keyed by column, or None if JSON can't carry them (NaN)."""
    fields = _inserted_fields(model)
    # jsonb_populate_recordset makes a missing key NULL, where bulk_create would use the default.
    if set(rows[0]) != {field.attname for field in fields}:
        raise ValueError(f"a {model.__name__} row must give exactly its fields, not {sorted(rows[0])}")
    if any(field.attname != field.column for field in fields):
        rows = [{_column(field): row[field.attname] for field in fields} for row in rows]
    try:
        return json.dumps(
            rows,
            default=_json_default,
            allow_nan=False,  # JSON has no NaN; those (never seen) rows take the ORM path
            separators=(",", ":"),
        )
    except ValueError:
        return None


def _insert_jsonb(
    model: type[models.Model], payload: str, *, unique_fields: Sequence[str], update_fields: Sequence[str]
) -> None:
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    columns = ", ".join(quote(_column(field)) for field in _inserted_fields(model))
    if update_fields:
        targets = ", ".join(quote(column_of(model, name)) for name in unique_fields)
        updates = ", ".join(
            f"{quote(column)} = EXCLUDED.{quote(column)}"
            for column in (column_of(model, name) for name in update_fields)
        )
        conflict = f"ON CONFLICT ({targets}) DO UPDATE SET {updates}"
    else:
        conflict = "ON CONFLICT DO NOTHING"
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({columns}) SELECT {columns} "  # noqa: S608 (names from the model)
            f"FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb) {conflict}",
            [payload],
        )


def _inserted_fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    """Return the fields an insert gives: all but a primary key the database generates."""
    return [field for field in model._meta.concrete_fields if not (field.primary_key and field.db_returning)]


def _column(field: models.Field[Any, Any]) -> str:
    # A concrete field is one with a column (Django sets Field.concrete to ``column is not None``).
    assert field.column is not None, field.name
    return field.column


def _json_default(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
