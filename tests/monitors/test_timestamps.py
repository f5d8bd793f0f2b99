"""Timestamps read as epoch seconds come back equal to the stored datetimes, to the microsecond."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection

from monitors.models import Organization
from monitors.timestamps import EpochSeconds, epoch_sql, from_epoch

pytestmark = pytest.mark.django_db

MOMENTS = [
    datetime(2026, 12, 1, 16, 35, 56, 76588, tzinfo=UTC),
    datetime(2026, 12, 1, 16, 35, 56, tzinfo=UTC),  # no fraction: SQLite's text has none
    datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2001, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2099, 6, 30, 12, 0, 0, 500000, tzinfo=UTC),
]


@pytest.mark.parametrize("moment", MOMENTS, ids=str)
def test_a_datetime_read_as_epoch_seconds_is_the_stored_one(org, moment):
    Organization.objects.filter(pk=org.pk).update(created_at=moment)

    seconds = Organization.objects.filter(pk=org.pk).values_list(EpochSeconds("created_at"), flat=True).get()

    assert from_epoch(seconds) == moment


def test_a_raw_query_reads_the_same_seconds(org):
    Organization.objects.filter(pk=org.pk).update(created_at=MOMENTS[0])
    table = connection.ops.quote_name(Organization._meta.db_table)
    column = connection.ops.quote_name("created_at")

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {epoch_sql(column, connection.vendor)} FROM {table} WHERE id = %s", [org.pk])
        (seconds,) = cursor.fetchone()

    assert from_epoch(seconds) == MOMENTS[0]
