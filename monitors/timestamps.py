"""Read many timestamps cheaply: as seconds since the epoch, turned into aware datetimes in Python.

Django reads a PostgreSQL ``timestamptz`` through its own pure-Python loader (it replaces
psycopg's C one to set the time zone), about 3 µs a value: 18,000 status changes cost a status
page 50 ms of parsing alone. Selected as a float instead, a value loads in C and
:func:`from_epoch` makes the datetime in a fraction of that. The float is exact to the
microsecond for any date of this century (a float's spacing near 2 × 10⁹ is a quarter of a
microsecond, and ``datetime.fromtimestamp`` rounds to the nearest one), so the datetimes are
equal to the ones Django would read.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db.models import FloatField, Func

# Whole seconds, plus the fraction. SQLite keeps a datetime as UTC text ("2026-12-01 16:35:56.076588"):
# its whole seconds from julianday (off by tens of microseconds, rounded away), the fraction from the text.
_SQLITE = "(ROUND((julianday(substr(%(expressions)s, 1, 19)) - 2440587.5) * 86400) + CAST(substr(%(expressions)s, 20) AS REAL))"
_POSTGRESQL = "EXTRACT(EPOCH FROM %(expressions)s)::float8"


class EpochSeconds(Func):
    """Select a datetime column as float seconds since the epoch (read it back with :func:`from_epoch`)."""

    template = _SQLITE
    output_field = FloatField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template=_POSTGRESQL, **extra)

    def get_db_converters(self, connection: Any) -> list[Any]:
        # The driver already hands back a float: no per-row converter (float() on every value).
        return []


def epoch_sql(column: str, vendor: str) -> str:
    """Return the SQL of EpochSeconds for a raw query's already quoted ``column``."""
    return (_POSTGRESQL if vendor == "postgresql" else _SQLITE) % {"expressions": column}


def from_epoch(seconds: float) -> datetime:
    """Return the aware UTC datetime of float seconds since the epoch, to the microsecond."""
    return datetime.fromtimestamp(seconds, UTC)


def iso_or_none(moment: datetime | None) -> str | None:
    """Return ``moment`` in ISO 8601, None for no moment (a snapshot's or a notice's optional time)."""
    return moment.isoformat() if moment is not None else None
