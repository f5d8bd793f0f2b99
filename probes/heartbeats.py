"""Decide a heartbeat from its schedule and its pings: pure, every instant passed in.

A heartbeat is expected on a schedule, a period ("every 3600 s") or a cron expression in a
time zone ("0 3 * * *", Europe/Paris), plus a grace. After a completion ping (success, fail or
an exit status) the next ping is expected at the schedule's next time after it, and the
heartbeat is late once ``expected + grace`` has passed. Cron times are evaluated by cronsim in
the schedule's zone, so "03:00" stays 03:00 local across daylight-saving changes, and a time a
spring-forward skips fires at the first instant after the gap, as cron does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from cronsim import CronSim

from probes.types import FailureKind, Status


class PingKind(StrEnum):
    """Name what a ping says: a run succeeded, began, failed, or ended with an exit status."""

    SUCCESS = "success"
    START = "start"
    FAIL = "fail"
    EXIT = "exit"


@dataclass(frozen=True, slots=True)
class Schedule:
    """Say when pings are expected: every ``period`` seconds, or at each ``cron`` time in ``tz``."""

    period: int | None = None
    cron: str = ""
    tz: str = "UTC"

    def next_after(self, at: datetime) -> datetime:
        """Return the first expected ping time strictly after ``at`` (aware, UTC)."""
        if self.period is not None:
            return (at + timedelta(seconds=self.period)).astimezone(UTC)
        local = at.astimezone(ZoneInfo(self.tz))
        return next(iter(CronSim(self.cron, local))).astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Ping:
    """One ping as the verdict reads it."""

    at: datetime
    kind: PingKind
    exit_status: int | None = None
    body: str = ""
    duration_seconds: float | None = None

    @property
    def failed(self) -> bool:
        return self.kind is PingKind.FAIL or (self.kind is PingKind.EXIT and self.exit_status != 0)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A heartbeat's status now, with its failure kind and sentence (none when up or pending)."""

    status: Status
    kind: FailureKind | None = None
    reason: str = ""
    # When the verdict began to hold: the due-by instant for a late heartbeat, else the ping's time.
    since: datetime | None = None
    # When the verdict changes next without a ping (the due-by), None when nothing is awaited.
    due_at: datetime | None = None


MAX_BODY_LINES = 5
MAX_REASON_BODY = 500


def due_by(schedule: Schedule, grace: int, last: datetime) -> tuple[datetime, datetime]:
    """Return (expected, due-by) for the ping after a completion ping at ``last``."""
    expected = schedule.next_after(last)
    return expected, expected + timedelta(seconds=grace)


def verdict(
    *,
    schedule: Schedule,
    grace: int,
    max_run_seconds: int | None,
    last: Ping | None,
    now: datetime,
) -> Verdict:
    """Return the heartbeat's verdict at ``now`` from its last completion ping (None: never pinged, pending)."""
    if last is None:
        return Verdict(Status.PENDING)
    expected, due = due_by(schedule, grace, last.at)
    if now >= due:
        zone = ZoneInfo(schedule.tz)
        reason = (
            f"No ping since {_clock(expected, zone, now)}; expected by {_clock(due, zone, now)} "
            f"({schedule.tz}); last ping {_clock(last.at, zone, now)}"
        )
        return Verdict(Status.DOWN, FailureKind.HEARTBEAT_LATE, reason, since=due)
    if last.failed:
        what = "failed" if last.kind is PingKind.FAIL else f"exited with status {last.exit_status}"
        lines = first_lines(last.body)
        reason = f"The job {what}" + (f": {lines}" if lines else "")
        return Verdict(Status.DOWN, FailureKind.JOB_FAILED, reason, since=last.at, due_at=due)
    if (
        max_run_seconds is not None
        and last.duration_seconds is not None
        and last.duration_seconds > max_run_seconds
    ):
        reason = (
            f"The run took {_duration(last.duration_seconds)}, over the {_duration(max_run_seconds)} allowed"
        )
        return Verdict(Status.DEGRADED, FailureKind.RUN_TOO_LONG, reason, since=last.at, due_at=due)
    return Verdict(Status.UP, since=last.at, due_at=due)


def first_lines(body: str) -> str:
    """Return the body's first non-empty lines joined by " / ", capped: what a failure's reason quotes."""
    lines = [line.strip() for line in body.splitlines() if line.strip()][:MAX_BODY_LINES]
    text = " / ".join(lines)
    return text if len(text) <= MAX_REASON_BODY else text[: MAX_REASON_BODY - 1] + "…"


def _clock(at: datetime, zone: ZoneInfo, now: datetime) -> str:
    """Return ``at`` in ``zone`` as HH:MM, with its date when it is not today's there."""
    local = at.astimezone(zone)
    today = now.astimezone(zone).date()
    return f"{local:%H:%M}" if local.date() == today else f"{local:%Y-%m-%d %H:%M}"


def _duration(seconds: float) -> str:
    whole = round(seconds)
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"
