"""Compute maintenance windows: one-off or recurring (RFC 5545 RRULE in an IANA time zone). Pure: no Django.

A recurring window's rule runs in the window's local wall time, so a 02:00 Europe/Berlin daily
window stays at 02:00 across daylight-saving changes; each occurrence lasts ``duration`` of real
time. A start that does not exist locally (02:30 on a spring-forward night) is read with the
offset before the change, i.e. it starts at 03:30 local; an ambiguous one (autumn) takes the
first of the two.

Every lookup is bounded whatever the rule says:

- the rules accepted can't be starved: MINUTELY and SECONDLY are refused, as are parts that let a
  frequent rule filter out whole months (BYMONTH, BYMONTHDAY below MONTHLY), BYSETPOS, BYYEARDAY,
  BYWEEKNO and day ordinals that some months lack, and a rule whose INTERVAL never reaches its
  BY parts from the start (every 7 days from a Monday, on Tuesdays); so a rule that matches once
  matches again within a few periods, and dateutil, which would otherwise search to the year
  9999 for a rule that never matches, always stops soon;
- at most ``MAX_PER_DAY`` occurrences a day, ``MAX_COUNT`` for COUNT (turned into an UNTIL once);
- a lookup never iterates from the first occurrence: the rule is re-anchored at the start of the
  period (a whole multiple of INTERVAL) just before the look-back, which is at most
  ``MAX_RECURRING_DURATION``; with every BY part made explicit, the re-anchored rule yields
  exactly the original's occurrences from there on.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import DAILY, HOURLY, MONTHLY, WEEKLY, YEARLY, rrule, rrulestr

MAX_RULE_LENGTH = 500
# Far from the calendar's ends, where adding a duration or a zone's offset would overflow.
FIRST_YEAR, LAST_YEAR = 1970, 9000
MAX_COUNT = 1000
MAX_INTERVAL = 1000
MAX_PER_DAY = 24
MAX_ONE_OFF_DURATION = timedelta(days=366)
MAX_RECURRING_DURATION = timedelta(days=7)
# How many occurrences one lookup returns at most: a day's worth, a month long.
MAX_OCCURRENCES = MAX_PER_DAY * 31
# Local and UTC bounds differ by the zone's offset; a DST change moves it by at most this.
_OFFSET_SLACK = timedelta(hours=3)

_FREQUENCIES = {"HOURLY": HOURLY, "DAILY": DAILY, "WEEKLY": WEEKLY, "MONTHLY": MONTHLY, "YEARLY": YEARLY}
_ALLOWED_PARTS = {
    "FREQ",
    "INTERVAL",
    "COUNT",
    "UNTIL",
    "WKST",
    "BYDAY",
    "BYMONTHDAY",
    "BYMONTH",
    "BYHOUR",
    "BYMINUTE",
}
_REFUSED_PARTS = {
    "BYSECOND": "windows start on a whole minute; set the seconds in starts_at",
    "BYSETPOS": "use a day ordinal in BYDAY instead (e.g. BYDAY=-1SU for the last Sunday)",
    "BYYEARDAY": "use BYMONTH and BYMONTHDAY instead",
    "BYWEEKNO": "use BYMONTH and BYDAY instead",
    "BYEASTER": "it is not part of RFC 5545",
    "DTSTART": "starts_at is the rule's start",
}
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_DAY_ORDINAL = re.compile(r"^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class ScheduleError(ValueError):
    """Refuse a schedule; ``field`` names the input to fix."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One stretch of maintenance, [start, end) in UTC."""

    start: datetime
    end: datetime

    def covers(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a window applies: ``starts_at`` for ``duration``, repeated by ``rrule`` (empty: once)."""

    starts_at: datetime
    duration: timedelta
    rrule: str = ""
    timezone: str = "UTC"

    @property
    def recurring(self) -> bool:
        return bool(self.rrule)


def schedule_from(
    *,
    starts_at: datetime,
    ends_at: datetime | None = None,
    duration: timedelta | None = None,
    rrule: str = "",
    timezone: str = "UTC",
) -> Schedule:
    """Validate a window's timing and return its schedule; raise ScheduleError naming the field.

    A one-off window gives ``ends_at`` or ``duration``; a recurring one a ``duration`` for each
    occurrence (its series ends with the rule's UNTIL or COUNT). ``starts_at`` must be aware.
    """
    if starts_at.tzinfo is None or starts_at.utcoffset() is None:
        raise ScheduleError("starts_at", "Give a time zone offset, e.g. 2026-12-01T02:00:00+01:00.")
    zone = _zone(timezone)
    starts_at = _in_range("starts_at", starts_at)
    text = normalized_rule(rrule)
    if ends_at is not None:
        if ends_at.tzinfo is None or ends_at.utcoffset() is None:
            raise ScheduleError("ends_at", "Give a time zone offset.")
        ends_at = _in_range("ends_at", ends_at)
    if text and ends_at is not None:
        # A window read back and sent again carries the series' end: the same end is no change.
        if duration is not None:
            schedule = schedule_from(starts_at=starts_at, duration=duration, rrule=text, timezone=zone.key)
            if series_end(schedule) == ends_at:
                return schedule
        raise ScheduleError(
            "ends_at",
            "A recurring window takes a duration per occurrence; end the series with UNTIL or COUNT.",
        )
    if ends_at is not None:
        if ends_at <= starts_at:
            raise ScheduleError("ends_at", "Must be after starts_at.")
        if duration is not None and duration != ends_at - starts_at:
            raise ScheduleError("ends_at", "Give ends_at or duration, not both (these two disagree).")
        duration = ends_at - starts_at
    if duration is None:
        raise ScheduleError("duration", "Give the window's length (or ends_at for a one-off window).")
    if duration <= timedelta(0):
        raise ScheduleError("duration", "Must be positive.")
    longest = MAX_RECURRING_DURATION if text else MAX_ONE_OFF_DURATION
    if duration > longest:
        kind = "a recurring window's occurrence" if text else "a one-off window"
        raise ScheduleError("duration", f"At most {longest.days} days for {kind}.")
    schedule = Schedule(starts_at=starts_at, duration=duration, rrule=text, timezone=zone.key)
    if text:
        try:
            recurrence = _compile(schedule)
        except ScheduleError:
            raise
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            # The parser's own message: a bad value, or INTERVAL and BYHOUR that never meet from this start.
            raise ScheduleError("rrule", f"Not a valid RRULE: {exc}") from None
        if recurrence.first is None:
            raise ScheduleError("rrule", "The rule has no occurrence at or after starts_at (check UNTIL).")
    return schedule


def normalized_rule(text: str) -> str:
    """Return the rule as stored (upper case, no ``RRULE:`` prefix), checked against the bounds; raise ScheduleError.

    What depends on the start (and the parser's own checks) is checked by schedule_from.
    """
    text = text.strip().upper()
    if text.startswith("RRULE:"):
        text = text[len("RRULE:") :].strip()
    if not text:
        return ""
    if len(text) > MAX_RULE_LENGTH:
        raise ScheduleError("rrule", f"At most {MAX_RULE_LENGTH} characters.")
    if "\n" in text or "\r" in text:
        raise ScheduleError("rrule", "One RRULE line only (no DTSTART, EXDATE or RDATE lines).")
    _check_parts(_parts(text))
    return text


def occurrences(schedule: Schedule, start: datetime, end: datetime) -> list[Occurrence]:
    """Return the occurrences that overlap [start, end), in order; at most MAX_OCCURRENCES."""
    if end <= start:
        return []
    if not schedule.recurring:
        once = Occurrence(schedule.starts_at, schedule.starts_at + schedule.duration)
        return [once] if once.start < end and once.end > start else []
    recurrence = _compile(schedule)
    return recurrence.between(start - schedule.duration, end, inclusive_low=False)


def active_at(schedule: Schedule, moment: datetime) -> Occurrence | None:
    """Return the occurrence covering ``moment`` (the latest ending, if several overlap), or None."""
    covering = [item for item in occurrences(schedule, moment, moment + timedelta(microseconds=1))]
    return max(covering, key=lambda item: item.end) if covering else None


def next_occurrence(schedule: Schedule, after: datetime) -> Occurrence | None:
    """Return the first occurrence that starts after ``after``, or None when the series is over."""
    if not schedule.recurring:
        return (
            Occurrence(schedule.starts_at, schedule.starts_at + schedule.duration)
            if schedule.starts_at > after
            else None
        )
    return _compile(schedule).after(after)


def series_end(schedule: Schedule) -> datetime | None:
    """Return when the window's last occurrence ends; None for a series without end."""
    if not schedule.recurring:
        return schedule.starts_at + schedule.duration
    recurrence = _compile(schedule)
    return None if recurrence.last is None else recurrence.last + schedule.duration


def windows_ended(schedule: Schedule, since: datetime, until: datetime) -> list[Occurrence]:
    """Return the occurrences that ended in (since, until]."""
    return [
        item
        for item in occurrences(schedule, since, until + timedelta(microseconds=1))
        if since < item.end <= until
    ]


def _in_range(field: str, moment: datetime) -> datetime:
    """Return ``moment`` in UTC if it is within the years a window may use; raise ScheduleError."""
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:
        moment = datetime.min.replace(tzinfo=UTC)
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise ScheduleError(field, f"Must be between the years {FIRST_YEAR} and {LAST_YEAR}.")
    return moment


# --- the rule, bounded -------------------------------------------------------------------------


def _zone(name: str) -> ZoneInfo:
    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name:
        raise ScheduleError(
            "timezone", f"Unknown time zone {name[:64]!r}; give an IANA name such as Europe/Berlin."
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            "timezone", f"Unknown time zone {name[:64]!r}; give an IANA name such as Europe/Berlin."
        ) from None


def _parts(text: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for item in text.split(";"):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise ScheduleError("rrule", f"Not a valid RRULE: {item[:40]!r} is not NAME=VALUE.")
        if name in parts:
            raise ScheduleError("rrule", f"{name} is given twice.")
        parts[name] = value.strip()
    return parts


def _check_parts(parts: dict[str, str]) -> None:
    for name in parts:
        if name in _REFUSED_PARTS:
            raise ScheduleError("rrule", f"{name} is not supported: {_REFUSED_PARTS[name]}.")
        if name not in _ALLOWED_PARTS:
            raise ScheduleError("rrule", f"Not a valid RRULE: unknown part {name[:20]!r}.")
    freq = parts.get("FREQ")
    if freq is None:
        raise ScheduleError("rrule", "FREQ is required (HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY).")
    if freq in ("SECONDLY", "MINUTELY"):
        raise ScheduleError("rrule", f"FREQ={freq} is too frequent for maintenance; at most hourly.")
    if freq not in _FREQUENCIES:
        raise ScheduleError("rrule", f"Not a valid RRULE: unknown FREQ {freq[:20]!r}.")
    interval = _integer(parts, "INTERVAL", 1, MAX_INTERVAL, default=1)
    _integer(parts, "COUNT", 1, MAX_COUNT, default=1)
    if "COUNT" in parts and "UNTIL" in parts:
        raise ScheduleError("rrule", "Give COUNT or UNTIL, not both.")
    if freq in ("HOURLY", "DAILY", "WEEKLY"):
        for name in ("BYMONTH", "BYMONTHDAY"):
            if name in parts:
                raise ScheduleError("rrule", f"{name} needs FREQ=MONTHLY or YEARLY.")
    hours = _integers(parts, "BYHOUR", 0, 23)
    minutes = _integers(parts, "BYMINUTE", 0, 59)
    _check_days(parts, freq)
    _check_month_days(parts)
    hourly = min(math.ceil(24 / interval), len(hours) or 24)
    per_day = (hourly if freq == "HOURLY" else len(hours or [0])) * len(minutes or [0])
    if per_day > MAX_PER_DAY:
        raise ScheduleError("rrule", f"The rule starts up to {per_day} windows a day; at most {MAX_PER_DAY}.")


def _integer(parts: dict[str, str], name: str, low: int, high: int, *, default: int) -> int:
    raw = parts.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise ScheduleError("rrule", f"{name} must be a whole number from {low} to {high}.")
    return int(raw)


def _integers(parts: dict[str, str], name: str, low: int, high: int, *, signed: bool = False) -> list[int]:
    raw = parts.get(name)
    if raw is None:
        return []
    values = []
    for item in raw.split(","):
        item = item.strip()
        digits = item.lstrip("+-") if signed else item
        if (
            not digits.isdigit()
            or len(digits) > 2
            or not low <= abs(int(item)) <= high
            or (int(item) == 0 and low > 0)
        ):
            raise ScheduleError("rrule", f"{name} takes numbers from {low} to {high}, not {item[:10]!r}.")
        values.append(int(item))
    if len(set(values)) != len(values):
        raise ScheduleError("rrule", f"{name} lists a value twice.")
    return values


def _check_days(parts: dict[str, str], freq: str) -> None:
    raw = parts.get("BYDAY")
    if raw is None:
        return
    # 1st..4th and the last four of a weekday exist in every month; the 5th and the 53rd of a year do not.
    most = 52 if freq == "YEARLY" and "BYMONTH" not in parts else 4
    for item in raw.split(","):
        match = _DAY_ORDINAL.match(item.strip())
        if match is None:
            raise ScheduleError("rrule", f"BYDAY takes days such as MO, 1MO or -1SU, not {item[:10]!r}.")
        ordinal = match.group(1)
        if ordinal is None:
            continue
        if freq not in ("MONTHLY", "YEARLY"):
            raise ScheduleError("rrule", "A day ordinal in BYDAY (e.g. 1MO) needs FREQ=MONTHLY or YEARLY.")
        if "BYMONTHDAY" in parts:
            raise ScheduleError("rrule", "Give a day ordinal in BYDAY or BYMONTHDAY, not both.")
        if not 1 <= abs(int(ordinal)) <= most:
            raise ScheduleError(
                "rrule", f"A BYDAY ordinal must be from 1 to {most} (or -1 to -{most}): {item[:10]!r}."
            )


def _check_month_days(parts: dict[str, str]) -> None:
    months = _integers(parts, "BYMONTH", 1, 12)
    days = _integers(parts, "BYMONTHDAY", 1, 31, signed=True)
    # A rule whose every (month, day) pair is impossible (30 February) would never match.
    if months and days and not any(abs(day) <= _DAYS_IN_MONTH[month - 1] for month in months for day in days):
        raise ScheduleError("rrule", "No month in BYMONTH has a day in BYMONTHDAY: the rule never matches.")


def _check_reachable(parts: dict[str, str], local: datetime) -> None:
    """Refuse a rule whose INTERVAL, counted from the start, never reaches its BY parts.

    E.g. every 7 days from a Monday is never a Tuesday. dateutil would look for the first
    occurrence until the year 9999 (seconds of CPU for a daily rule); the periods a rule can reach
    repeat within a week (hours, days) or a year (months), so they are counted here instead.
    """
    freq = parts["FREQ"]
    interval = int(parts.get("INTERVAL", "1"))
    weekdays = (
        {_WEEKDAYS.index(item[-2:]) for item in parts["BYDAY"].split(",")} if "BYDAY" in parts else None
    )
    if freq == "DAILY" and weekdays is not None:
        step = math.gcd(interval, 7)
        reachable = {(local.weekday() + step * k) % 7 for k in range(7)}
        if not reachable & weekdays:
            raise ScheduleError(
                "rrule", f"Every {interval} days from starts_at never falls on a day in BYDAY."
            )
    elif freq == "HOURLY" and (weekdays is not None or "BYHOUR" in parts):
        hours = {int(item) for item in parts["BYHOUR"].split(",")} if "BYHOUR" in parts else set(range(24))
        step = math.gcd(interval, 7 * 24)
        first = local.weekday() * 24 + local.hour
        slots = {(first + step * k) % (7 * 24) for k in range(7 * 24)}
        if not any(slot % 24 in hours and (weekdays is None or slot // 24 in weekdays) for slot in slots):
            raise ScheduleError(
                "rrule", f"Every {interval} hours from starts_at never meets BYDAY and BYHOUR."
            )
    elif freq in ("MONTHLY", "YEARLY"):
        if freq == "MONTHLY":
            step = math.gcd(interval, 12)
            reachable = {(local.month - 1 + step * k) % 12 + 1 for k in range(12)}
        else:
            reachable = set(range(1, 13))
        implicit = "BYDAY" not in parts and "BYMONTHDAY" not in parts
        if "BYMONTH" in parts:
            months = {int(item) for item in parts["BYMONTH"].split(",")} & reachable
        elif freq == "YEARLY" and implicit:
            months = {local.month}
        else:
            months = reachable
        if not months:
            raise ScheduleError(
                "rrule", f"Every {interval} months from starts_at never falls in a month in BYMONTH."
            )
        days = (
            [int(item) for item in parts["BYMONTHDAY"].split(",")]
            if "BYMONTHDAY" in parts
            else ([local.day] if implicit else [])
        )
        if days and not any(abs(day) <= _DAYS_IN_MONTH[month - 1] for month in months for day in days):
            raise ScheduleError("rrule", "No month the rule reaches from starts_at has a day in BYMONTHDAY.")


@dataclass(frozen=True, slots=True)
class _Recurrence:
    """A validated rule with every BY part explicit, its first and last occurrence starts (UTC)."""

    text: str
    freq: int
    interval: int
    wkst: int
    zone: ZoneInfo
    start: datetime  # starts_at in local wall time, aware
    duration: timedelta
    first: datetime | None
    last: datetime | None

    def rule(self, anchor: datetime) -> rrule:
        return _rule_at(self.text, anchor)

    def anchor_before(self, moment: datetime) -> datetime:
        """Return a dtstart from which the rule yields exactly its occurrences at or after ``moment``."""
        local = moment.astimezone(self.zone).replace(tzinfo=None) - _OFFSET_SLACK
        start = self.start.replace(tzinfo=None)
        if local <= start:
            return self.start
        periods = _periods_between(self.freq, self.wkst, start, local) // self.interval * self.interval
        if periods <= 0:
            return self.start
        anchor = _period_start(self.freq, self.wkst, start, periods)
        return anchor.replace(tzinfo=self.zone)

    def between(self, low: datetime, high: datetime, *, inclusive_low: bool) -> list[Occurrence]:
        # dateutil orders occurrences by wall time, which an autumn fold can set an hour off the
        # UTC order: start and stop a slack early and late, and compare in UTC.
        found: list[Occurrence] = []
        rule = self.rule(self.anchor_before(low))
        for local in rule.xafter(low.astimezone(self.zone) - _OFFSET_SLACK, inc=True):
            begins = local.astimezone(UTC)
            if begins >= high + _OFFSET_SLACK or len(found) >= MAX_OCCURRENCES:
                break
            if begins < high and (begins > low or (inclusive_low and begins == low)):
                found.append(Occurrence(begins, begins + self.duration))
        return sorted(found, key=lambda item: item.start)

    def after(self, moment: datetime) -> Occurrence | None:
        earliest: datetime | None = None
        rule = self.rule(self.anchor_before(moment))
        for local in rule.xafter(moment.astimezone(self.zone) - _OFFSET_SLACK, inc=True):
            begins = local.astimezone(UTC)
            if earliest is not None and begins > earliest + _OFFSET_SLACK:
                break
            if begins > moment and (earliest is None or begins < earliest):
                earliest = begins
        return None if earliest is None else Occurrence(earliest, earliest + self.duration)


def _compile(schedule: Schedule) -> _Recurrence:
    return _compiled(schedule.rrule, schedule.starts_at, schedule.timezone, schedule.duration)


@functools.lru_cache(maxsize=4096)
def _compiled(text: str, starts_at: datetime, timezone: str, duration: timedelta) -> _Recurrence:
    zone = ZoneInfo(timezone)
    local = starts_at.astimezone(zone)
    parts = _parts(text)
    _check_reachable(parts, local)
    explicit = dict(parts)
    # dateutil fills missing BY parts from DTSTART; written out, they stay when the rule is re-anchored.
    explicit["BYSECOND"] = str(local.second)
    explicit.setdefault("BYMINUTE", str(local.minute))
    freq = _FREQUENCIES[parts["FREQ"]]
    if freq != HOURLY:
        explicit.setdefault("BYHOUR", str(local.hour))
    if "BYDAY" not in parts and "BYMONTHDAY" not in parts:
        if freq == WEEKLY:
            explicit["BYDAY"] = _WEEKDAYS[local.weekday()]
        elif freq == MONTHLY:
            explicit["BYMONTHDAY"] = str(local.day)
        elif freq == YEARLY:
            explicit.setdefault("BYMONTH", str(local.month))
            explicit["BYMONTHDAY"] = str(local.day)
    count = int(parts["COUNT"]) if "COUNT" in parts else None
    explicit.pop("COUNT", None)
    full = _rule_at(";".join(f"{name}={value}" for name, value in explicit.items()), local)
    first = full.after(local, inc=True)
    last: datetime | None = None
    if count is not None and first is not None:
        # COUNT counts from the first occurrence, which a re-anchored rule can't see: as an UNTIL it can.
        last = list(full.xafter(local, count=count, inc=True))[-1]
        explicit["UNTIL"] = last.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    elif "UNTIL" in explicit:
        # A bound, not the last start itself (finding that could walk years of occurrences).
        last = _until(explicit["UNTIL"])
    text = ";".join(f"{name}={value}" for name, value in explicit.items())
    return _Recurrence(
        text=text,
        freq=freq,
        interval=int(parts.get("INTERVAL", "1")),
        wkst=_WEEKDAYS.index(parts.get("WKST", "MO")) if parts.get("WKST", "MO") in _WEEKDAYS else 0,
        zone=zone,
        start=local,
        duration=duration,
        first=None if first is None else first.astimezone(UTC),
        last=None if last is None else last.astimezone(UTC),
    )


@functools.lru_cache(maxsize=4096)
def _rule_at(text: str, anchor: datetime) -> rrule:
    rule = rrulestr(text, dtstart=anchor)
    assert isinstance(rule, rrule)
    return rule


def _until(raw: str) -> datetime:
    """Return an UNTIL the parser accepted (UTC, as RFC 5545 wants it with a zoned start)."""
    for layout in ("%Y%m%dT%H%M%SZ", "%Y%m%dT%H%M%S", "%Y%m%d"):
        try:
            until = datetime.strptime(raw, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
        if until.year > LAST_YEAR:
            raise ScheduleError("rrule", f"UNTIL must be before the year {LAST_YEAR + 1}.")
        return until
    raise ScheduleError("rrule", f"UNTIL must be a UTC time such as 20270101T000000Z, not {raw[:20]!r}.")


def _periods_between(freq: int, wkst: int, start: datetime, moment: datetime) -> int:
    """Return how many whole periods of ``freq`` lie between ``start``'s period and ``moment``'s."""
    if freq == HOURLY:
        return int((moment - start.replace(minute=0, second=0, microsecond=0)) // timedelta(hours=1))
    if freq == DAILY:
        return (moment.date() - start.date()).days
    if freq == WEEKLY:
        return (moment.date() - _week_start(start.date(), wkst)).days // 7
    if freq == MONTHLY:
        return (moment.year - start.year) * 12 + moment.month - start.month
    return moment.year - start.year


def _period_start(freq: int, wkst: int, start: datetime, periods: int) -> datetime:
    """Return the naive local start of the period ``periods`` after ``start``'s."""
    if freq == HOURLY:
        return start.replace(minute=0, second=0, microsecond=0) + timedelta(hours=periods)
    if freq == DAILY:
        return datetime.combine(start.date() + timedelta(days=periods), time())
    if freq == WEEKLY:
        return datetime.combine(_week_start(start.date(), wkst) + timedelta(weeks=periods), time())
    if freq == MONTHLY:
        months = start.month - 1 + periods
        return datetime(start.year + months // 12, months % 12 + 1, 1)
    return datetime(start.year + periods, 1, 1)


def _week_start(day: date, wkst: int) -> date:
    return day - timedelta(days=(day.weekday() - wkst) % 7)
