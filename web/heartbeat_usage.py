"""Write what a heartbeat's page shows for the customer's job to copy: curl lines and a crontab example.

Pure: plain values in, text out. The crontab line is the check's own schedule, its cron
expression when it has one, else the period written as cron when cron can say it (every 5
minutes, every 2 hours, daily); a period cron can't say (every 90 minutes) gets a comment
saying so instead of a line that would run at another pace.
"""

from __future__ import annotations

from dataclasses import dataclass

from probes.heartbeats import PingKind, Schedule

# What the page tells the job to run: quiet unless it fails (-fsS), bounded (-m 10), patient
# with a blip (--retry 5), and the answer's "OK" kept out of the job's mail (-o /dev/null).
CURL = "curl -fsS -m 10 --retry 5 -o /dev/null"
JOB = "/usr/local/bin/your-job.sh"

_MINUTE, _HOUR, _DAY, _WEEK = 60, 3600, 86_400, 7 * 86_400


@dataclass(frozen=True, slots=True)
class PingUsage:
    """The lines the page shows: the success ping, /start, /fail, an exit status, and a crontab."""

    url: str
    success: str
    start: str
    fail: str
    exit_status: str
    crontab: str


def cron_of_period(period: int) -> str | None:
    """Return a cron expression that fires every ``period`` seconds, or None when cron can't say it."""
    if period % _MINUTE:
        return None
    minutes = period // _MINUTE
    if minutes == 1:
        return "* * * * *"
    if minutes < 60 and 60 % minutes == 0:
        return f"*/{minutes} * * * *"
    if period % _HOUR == 0:
        hours = period // _HOUR
        if hours == 1:
            return "0 * * * *"
        if hours < 24 and 24 % hours == 0:
            return f"0 */{hours} * * *"
    if period == _DAY:
        return "0 0 * * *"
    if period == _WEEK:
        return "0 0 * * 0"
    return None


def schedule_words(schedule: Schedule) -> str:
    """Say the schedule as the page heads it: "cron 0 3 * * * (Europe/Paris)" or "every 1 h"."""
    if schedule.period is None:
        return f"cron {schedule.cron} ({schedule.tz})"
    return f"every {duration_words(schedule.period)}"


def duration_words(seconds: float) -> str:
    """Say a duration shortly: "42 s", "1.5 s", "3 min 20 s", "2 h", "1 d 6 h"."""
    if seconds < 10:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    whole = round(seconds)
    for unit, size, smaller, small_size in (
        ("d", _DAY, "h", _HOUR),
        ("h", _HOUR, "min", _MINUTE),
        ("min", _MINUTE, "s", 1),
    ):
        if whole >= size:
            big, rest = divmod(whole, size)
            rest //= small_size
            return f"{big} {unit} {rest} {smaller}" if rest else f"{big} {unit}"
    return f"{whole} s"


def ping_usage(ping_url: str, schedule: Schedule) -> PingUsage:
    """Return the copyable lines for the heartbeat whose ping URL is ``ping_url``."""
    cron = schedule.cron if schedule.period is None else cron_of_period(schedule.period)
    # One line: /start, the job, then its exit status ($? of the job: 0 is a success, else down).
    run = f"{CURL} {ping_url}/start; {JOB}; {CURL} {ping_url}/$?"
    if cron is None:
        assert schedule.period is not None
        crontab = (
            f"# Every {duration_words(schedule.period)} is no cron schedule: run the job from a timer of yours,\n"
            f"# then: {CURL} {ping_url}/$?"
        )
    else:
        lines = []
        if schedule.period is None:
            # cronie reads CRON_TZ; a cron without it reads times in the machine's zone.
            lines.append(f"CRON_TZ={schedule.tz}")
        lines.append(f"{cron} {run}")
        crontab = "\n".join(lines)
    return PingUsage(
        url=ping_url,
        success=f"{CURL} {ping_url}",
        start=f"{CURL} {ping_url}/{PingKind.START.value}",
        fail=f"{CURL} {ping_url}/{PingKind.FAIL.value}",
        exit_status=f"{CURL} {ping_url}/$?",
        crontab=crontab,
    )
