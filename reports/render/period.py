"""Parse a report's period: a calendar month or a range of days, cut in an IANA time zone.

Pure: strings in, a :class:`Period` out, or a :class:`PeriodError` naming the field at fault.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, available_timezones

# The longest range a report covers: a year and a month (a yearly report, or 13 months to compare).
MAX_DAYS = 400
# ASCII digits only: \d would take other scripts' digits too.
MONTH = re.compile(r"([0-9]{4})-([0-9]{2})")
DAY = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


class PeriodError(ValueError):
    """Say which field of a report request is wrong, and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Period:
    """Hold a half-open span ``[start, end)`` of a report, its zone and its label ("2026-11")."""

    start: datetime
    end: datetime
    time_zone: str
    label: str

    @property
    def seconds(self) -> int:
        """Return the period's length in whole seconds."""
        return int((self.end - self.start).total_seconds())

    def previous(self) -> Period:
        """Return the period of equal length that ends where this one starts."""
        length = self.end - self.start
        return Period(self.start - length, self.start, self.time_zone, f"previous {self.label}")


@functools.lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def zone_of(name: str, *, field: str = "tz") -> ZoneInfo:
    """Return the IANA zone ``name``, or raise a PeriodError naming ``field``."""
    if name not in _zones():
        raise PeriodError(field, f"unknown IANA time zone {name[:64]!r}, e.g. Europe/Paris or UTC")
    return ZoneInfo(name)


def _day(text: str, field: str) -> date:
    match = DAY.fullmatch(text)
    if not match:
        raise PeriodError(field, f"expected a date as YYYY-MM-DD, not {text[:32]!r}")
    try:
        return date(*(int(part) for part in match.groups()))
    except ValueError as error:
        raise PeriodError(field, f"{text} is not a date ({error})") from None


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    # Where a zone skips midnight, zoneinfo reads 00:00 with the earlier offset: the day's first instant.
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def period_of(
    *, month: str | None, start: str | None, end: str | None, time_zone: str, now: datetime
) -> Period:
    """Return the period a request names: ``month`` (YYYY-MM), or ``start``/``end`` dates, both included.

    Fields are named as the API spells them: month, from, to, tz.
    """
    zone = zone_of(time_zone)
    if month and (start or end):
        raise PeriodError("month", "give either month or from/to, not both")
    if month:
        match = MONTH.fullmatch(month)
        if not match or not 1 <= int(match.group(2)) <= 12:
            raise PeriodError("month", f"expected a month as YYYY-MM, not {month[:32]!r}")
        year, number = int(match.group(1)), int(match.group(2))
        if year < 1970:
            raise PeriodError("month", "reports start in 1970")
        first = date(year, number, 1)
        # Before the month after is computed: after 9999-12 there is none (date's last year).
        _not_future(first, zone, now, "month")
        following = date(year + number // 12, number % 12 + 1, 1)
        label = f"{year:04d}-{number:02d}"
    elif start or end:
        if not start:
            raise PeriodError("from", "required with to (YYYY-MM-DD)")
        if not end:
            raise PeriodError("to", "required with from (YYYY-MM-DD)")
        first, last = _day(start, "from"), _day(end, "to")
        if first.year < 1970:
            raise PeriodError("from", "reports start in 1970")
        if last < first:
            raise PeriodError("to", f"ends ({last}) before from ({first})")
        if (last - first).days + 1 > MAX_DAYS:
            raise PeriodError("to", f"the range is {(last - first).days + 1} days; at most {MAX_DAYS}")
        if last.year >= 9999:
            raise PeriodError("to", "too far in the future")
        following = last + timedelta(days=1)
        label = f"{first.isoformat()}..{last.isoformat()}"
    else:
        raise PeriodError("month", "required: a month (YYYY-MM), or from and to (YYYY-MM-DD)")
    _not_future(first, zone, now, "from" if start else "month")
    return Period(_midnight(first, zone), _midnight(following, zone), time_zone, label)


def _not_future(first: date, zone: ZoneInfo, now: datetime, field: str) -> None:
    if _midnight(first, zone) >= now:
        raise PeriodError(field, "starts in the future: nothing was measured yet")


def month_before(moment: datetime, time_zone: str) -> str:
    """Return the month (YYYY-MM) before the one ``moment`` falls in, in ``time_zone``."""
    local = moment.astimezone(zone_of(time_zone))
    year, month = (local.year, local.month - 1) if local.month > 1 else (local.year - 1, 12)
    return f"{year:04d}-{month:02d}"
